// grep's other spellings of `-r`: `-d recurse`, `-drecurse`, `--directories=recurse` and their
// abbreviations (`--dir rec`). The recursive-read rule knows `-r`, `-R` and the long forms; these
// make a grep the safe list does not take when what it reads may hold a credential store.

import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { holdsSecret } from '../knowledge/places/paths.js';

/** grep's short options that take a value (in a cluster, the rest of the word or the next word). */
const SHORT_WITH_VALUE = 'efmABCDd';
/** grep's long options that take a value, when not joined with `=`. */
const LONG_WITH_VALUE =
  /^--(?:regexp|file|max-count|after-context|before-context|context|devices?|directories|di[a-z]*|label|include|exclude|exclude-dir|exclude-from|binary-files|group-separator)$/;

/** `recurse` or an abbreviation of it (grep takes unambiguous ones). */
const isRecurse = (v: string | undefined): boolean => v !== undefined && v.length > 0 && 'recurse'.startsWith(v);
/** An abbreviation of `--directories` (`--di`…). */
const isDirectories = (name: string): boolean => name.length >= 2 && 'directories'.startsWith(name);

/**
 * Whether a grep reads directory trees by `-d recurse` (in any spelling) where a credential store
 * may lie: an operand that holds one (`~`, `/`, `/etc`…), or none (the directory it runs in).
 */
export function grepRecursesIntoSecrets(args: readonly string[], homes: KnownHomes): boolean {
  let recurse = false;
  let patternGiven = false;
  const operands: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      const name = a.slice(2, eq < 0 ? undefined : eq);
      const value = eq < 0 ? undefined : a.slice(eq + 1);
      const next = eq < 0 && LONG_WITH_VALUE.test(a) ? args[++i] : undefined;
      if (isDirectories(name) && isRecurse(value ?? next)) recurse = true;
      if (name === 'regexp' || name === 'file') patternGiven = true;
      continue;
    }
    if (!a.startsWith('-') || a === '-') {
      operands.push(a);
      continue;
    }
    for (let k = 1; k < a.length; k++) {
      const c = a[k] as string;
      if (!SHORT_WITH_VALUE.includes(c)) continue;
      const value = k + 1 < a.length ? a.slice(k + 1) : args[++i];
      if (c === 'd' && isRecurse(value)) recurse = true;
      if (c === 'e' || c === 'f') patternGiven = true;
      break;
    }
  }
  if (!recurse) return false;
  const files = patternGiven ? operands : operands.slice(1);
  return files.length === 0 || files.some((w) => holdsSecret(w, homes) !== null);
}
