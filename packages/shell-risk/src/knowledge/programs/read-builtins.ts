// The builtins that assign what they read on stdin to shell variables (`read`, `mapfile`,
// `readarray`), which variables a call of one assigns, and the programs whose output they then
// take as file names.

import type { SimpleCommand } from '../../command-model.js';
import { credentialFile } from '../../flow/exfiltration.js';
import type { KnownHomes } from '../places/known-homes.js';

/** Programs that print file names (what `read f` then takes as a path). */
const LISTERS: ReadonlySet<string> = new Set(['ls', 'find', 'fd', 'echo', 'printf', 'realpath', 'readlink']);
/** Builtins that assign what they read on stdin to variables. */
export const READERS: ReadonlySet<string> = new Set(['read', 'mapfile', 'readarray']);
/** Options that take a value (the value is not a variable name, except read's -a). */
const READ_ARG = /^-[a-zA-Z]*[adinNptu]$/;
const MAPFILE_ARG = /^-[a-zA-Z]*[dnOsuCc]$/;

/**
 * Where the variables of read / mapfile / readarray are named in `argv` (argv[0] is the builtin):
 * the indexes of the name words (read's `-a NAME` included) and of mapfile's `-C CALLBACK` value
 * (shell code it evaluates every `-c` lines).
 */
export function readNameWords(
  program: string,
  argv: readonly string[],
): { names: number[]; arrays: number[]; callback: number[] } {
  const names: number[] = [];
  const arrays: number[] = [];
  const callback: number[] = [];
  const read = program === 'read';
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i] as string;
    if (w === '--') continue;
    if (w.startsWith('-')) {
      if ((read ? READ_ARG : MAPFILE_ARG).test(w)) {
        i++;
        if (i < argv.length && read && w.endsWith('a')) {
          names.push(i);
          arrays.push(i);
        }
        if (i < argv.length && !read && w.endsWith('C')) callback.push(i);
      } else if (!read && /^-[a-zA-Z]*C./.test(w)) {
        callback.push(i);
      }
      continue;
    }
    names.push(i);
  }
  return { names: read ? names : names.slice(-1), arrays, callback };
}

/** The variables of read / mapfile / readarray (REPLY / MAPFILE when none is named). */
export function readTargets(seg: SimpleCommand): string[] {
  const read = seg.program === 'read';
  const { names, arrays } = readNameWords(seg.program, seg.argv);
  const valid = names
    .filter((i) => arrays.includes(i) || /^[A-Za-z_][A-Za-z0-9_]*$/.test(seg.argv[i] as string))
    .map((i) => seg.argv[i] as string);
  if (valid.length === 0) valid.push(read ? 'REPLY' : 'MAPFILE');
  return read ? valid : valid.slice(-1);
}

/**
 * The credential files whose names the segments `from` (those feeding a read's input: `ls ~/.ssh/*
 * | while read f`, `< <(find ~/.aws …)`) print, described; or null.
 */
export function listedFiles(segs: readonly SimpleCommand[], from: readonly number[], homes: KnownHomes): string | null {
  for (const j of from) {
    const s = segs[j] as SimpleCommand;
    if (!LISTERS.has(s.program)) continue;
    const named = s.argv.slice(1).find((w) => !w.startsWith('-') && credentialFile(w, homes) !== null);
    if (named !== undefined) return `the credential files named by ${s.program} '${named}' (segment ${j + 1})`;
  }
  return null;
}
