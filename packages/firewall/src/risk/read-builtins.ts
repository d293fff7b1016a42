// The builtins that assign what they read on stdin to shell variables (`read`, `mapfile`,
// `readarray`), which variables a call of one assigns, and the programs whose output they then
// take as file names.

import type { SimpleCommand } from './command-model.js';
import { credentialFile } from './exfiltration.js';

/** Programs that print file names (what `read f` then takes as a path). */
const LISTERS: ReadonlySet<string> = new Set(['ls', 'find', 'fd', 'echo', 'printf', 'realpath', 'readlink']);
/** Builtins that assign what they read on stdin to variables. */
export const READERS: ReadonlySet<string> = new Set(['read', 'mapfile', 'readarray']);
/** Options that take a value (the value is not a variable name, except read's -a). */
const READ_ARG = /^-[a-zA-Z]*[adinNptu]$/;
const MAPFILE_ARG = /^-[a-zA-Z]*[dnOsuCc]$/;

/** The variables of read / mapfile / readarray (REPLY / MAPFILE when none is named). */
export function readTargets(seg: SimpleCommand): string[] {
  const names: string[] = [];
  const rest = seg.argv.slice(1);
  const read = seg.program === 'read';
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i] as string;
    if (w === '--') continue;
    if (w.startsWith('-')) {
      if ((read ? READ_ARG : MAPFILE_ARG).test(w)) {
        const v = rest[++i];
        if (read && w.endsWith('a') && v !== undefined) names.push(v);
      }
      continue;
    }
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(w)) names.push(w);
  }
  if (names.length === 0) names.push(read ? 'REPLY' : 'MAPFILE');
  return read ? names : names.slice(-1);
}

/**
 * The credential files whose names the segments `from` (those feeding a read's input: `ls ~/.ssh/*
 * | while read f`, `< <(find ~/.aws …)`) print, described; or null.
 */
export function listedFiles(segs: readonly SimpleCommand[], from: readonly number[]): string | null {
  for (const j of from) {
    const s = segs[j] as SimpleCommand;
    if (!LISTERS.has(s.program)) continue;
    const named = s.argv.slice(1).find((w) => !w.startsWith('-') && credentialFile(w) !== null);
    if (named !== undefined) return `the credential files named by ${s.program} '${named}' (segment ${j + 1})`;
  }
  return null;
}
