// find's -exec / -execdir / -ok / -okdir: the command each runs (its body up to `;` or `{} +`),
// and whether find visits everything under a broad root (`find / -delete`, `find ~ -exec rm {} \;`).

import { isBroadTarget } from './paths.js';
import type { Expansion, Word, WrapperExpansion } from './wrappers.js';
const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);
/** find primaries that do not narrow which files are visited */
const FIND_NON_FILTERS = new Set([
  '-depth',
  '-d',
  '-maxdepth',
  '-mindepth',
  '-xdev',
  '-mount',
  '-follow',
  '-print',
  '-print0',
  '-delete',
  '-daystart',
  '-noleaf',
  '-ignore_readdir_race',
  '-noignore_readdir_race',
  '-regextype',
  '-warn',
  '-nowarn',
  '-prune',
  '-true',
  '-ls',
  '-exec',
  '-execdir',
  '-ok',
  '-okdir',
  '-H',
  '-L',
  '-P',
  '-O0',
  '-O1',
  '-O2',
  '-O3',
]);

/** The starting points of a find command (words before the first expression word). */
export function findRoots(words: Word[]): Word[] {
  const roots: Word[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w === '-H' || w === '-L' || w === '-P' || /^-O\d$/.test(w) || w === '-D') {
      if (w === '-D') i++;
      continue;
    }
    if (w.startsWith('-') || w === '(' || w === '!' || w === ')') break;
    roots.push(words[i] as Word);
  }
  return roots;
}

/** Whether a find command visits everything under a broad root (no filtering test). */
export function findIsBroad(words: Word[]): boolean {
  const roots = findRoots(words);
  const broadRoot = roots.length === 0 || roots.some((r) => r.dynamic || isBroadTarget(r.text));
  if (!broadRoot) return false;
  for (let i = 1 + roots.length; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (FIND_EXEC.has(w)) {
      // skip the -exec body
      while (i < words.length && (words[i] as Word).text !== ';' && (words[i] as Word).text !== '+') i++;
      continue;
    }
    if (w.startsWith('-') && !FIND_NON_FILTERS.has(w)) return false;
  }
  return true;
}

/** The commands find runs (-exec bodies), each with whether find visits everything under a broad root. */
export function findExec(words: Word[]): WrapperExpansion {
  const inner: Expansion[] = [];
  let broad: boolean | undefined;
  for (let i = 1; i < words.length; i++) {
    if (!FIND_EXEC.has((words[i] as Word).text)) continue;
    const body: Word[] = [];
    let j = i + 1;
    for (; j < words.length; j++) {
      const t = (words[j] as Word).text;
      if (t === ';' || (t === '+' && body.length > 0 && body[body.length - 1]?.text === '{}')) break;
      body.push(words[j] as Word);
    }
    if (body.length > 0) {
      broad ??= findIsBroad(words);
      inner.push({ kind: 'argv', via: 'find -exec', words: body, findBroad: broad });
    }
    i = j;
  }
  return { wrapper: false, inner };
}
