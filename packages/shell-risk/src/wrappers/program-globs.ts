// A command name with glob characters (`/???/?m -rf ~`, `/bin/r? -rf ~`, `r[m] -rf ~`): the shell
// runs whatever file the pattern matches, so the command is judged as every program it could be —
// each known program whose name the pattern matches, most severe first — besides itself (an
// unknown program, never safe).

import { DISK_TOOLS, FETCHERS, POWER_TOOLS, PRIVILEGED, SHELLS } from '../knowledge/programs/programs.js';
import type { Expansion, Word, WrapperExpansion } from './expansion.js';

/** A word with a glob: `*`, `?` or a bracket expression that closes (`[` alone is the test command). */
const GLOB = /[*?]|\[.+\]/;
/** Programs a glob is tried against, the most dangerous first. */
const CANDIDATES: readonly string[] = [
  ...new Set([
    'rm',
    'sh',
    'bash',
    'dd',
    'shred',
    'chmod',
    'chown',
    'sudo',
    'curl',
    'wget',
    'find',
    'mv',
    'cp',
    'tee',
    'truncate',
    'kill',
    'pkill',
    'killall',
    'eval',
    'env',
    'xargs',
    'python',
    'python3',
    'perl',
    'ruby',
    'node',
    'php',
    'git',
    'crontab',
    'systemctl',
    'chroot',
    'nsenter',
    'docker',
    'rsync',
    'scp',
    'tar',
    'awk',
    'sed',
    ...SHELLS,
    ...PRIVILEGED,
    ...DISK_TOOLS,
    ...POWER_TOOLS,
    ...FETCHERS,
  ]),
];
/** At most this many programs are tried for one pattern. */
const MAX_CANDIDATES = 8;

/** The pattern of a file name glob as a regular expression (null when it is not a well-formed one). */
function globRegExp(glob: string): RegExp | null {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      let j = i + 1;
      if (glob[j] === '!' || glob[j] === '^') j++;
      if (glob[j] === ']') j++;
      while (j < glob.length && glob[j] !== ']') j++;
      if (j >= glob.length) {
        re += '\\[';
        continue;
      }
      const body = glob
        .slice(i + 1, j)
        .replace(/^[!^]/, '^')
        .replace(/\\/g, '\\\\');
      re += `[${body}]`;
      i = j;
    } else re += c.replace(/[.+^${}()|\\\]]/g, '\\$&');
  }
  try {
    return new RegExp(`^${re}$`);
  } catch {
    return null;
  }
}

/** A copy of the word that is not glob-expanded again as a command name. */
function settled(w: Word): Word {
  return GLOB.test(w.text) && w.noGlob !== true ? { ...w, noGlob: true } : w;
}

/**
 * For a command whose name has glob characters in its last part: one argv per known program the
 * pattern matches (the directory part kept), the command itself judged as the unknown program it
 * is. Null when the name has no glob (or was settled by an earlier expansion).
 */
export function globbedProgram(words: readonly Word[]): WrapperExpansion | null {
  const first = words[0];
  if (first === undefined || first.dynamic || first.noGlob === true) return null;
  const slash = first.text.lastIndexOf('/');
  const base = first.text.slice(slash + 1);
  if (!GLOB.test(base)) return null;
  // a long pattern or one of many stars is taken to match every name (its regular expression could backtrack for long)
  const re = base.length > 64 || (base.match(/\*/g)?.length ?? 0) > 4 ? null : globRegExp(base.replace(/\*+/g, '*'));
  const dir = first.text.slice(0, slash + 1);
  const names = CANDIDATES.filter((n) => re === null || re.test(n)).slice(0, MAX_CANDIDATES);
  const rest = words.slice(1).map(settled);
  const inner: Expansion[] = names.map((n) => ({
    kind: 'argv',
    via: 'glob',
    words: [{ text: `${dir}${n}`, dynamic: false, noGlob: true }, ...rest],
  }));
  return { wrapper: false, inner };
}
