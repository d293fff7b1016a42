// Destruction that is not `rm -rf`, and reads of whole directory trees that hold credentials:
// `find ~ -type f -delete` (a filter that keeps every file is no filter), `find ~ -exec rm {} +`,
// `rsync --delete` into home, `mv ~ /tmp/x` (the source is gone), `chattr -R +i ~`;
// `grep -r aws_secret_access_key ~`, `rg token /`, `tar czf x.tgz ~` (every store under it is read).

import type { CommandRiskLevel, SimpleCommand } from '../command-model.js';
import type { Directories } from '../knowledge/places/cwd-paths.js';
import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { holdsSecret, normalizePath } from '../knowledge/places/paths.js';
import { parseArgs } from '../options/options.js';
import { findRoots } from '../wrappers/wrappers.js';
import { startupHookRules } from './startup-hooks.js';
import { systemTamperingRules } from './system-tampering.js';

/** Adds a finding. */
export type CommandLevelAdder = (level: CommandRiskLevel, reason: string) => void;

function quote(s: string): string {
  return `'${s.length > 80 ? `${s.slice(0, 77)}…` : s}'`;
}

/** Whether deleting or changing a word hits something broad (isBroadTarget, or where it runs: cwd-paths.ts). */
type IsBroad = (word: string) => boolean;

/** Broad and known: a run-time value counts only when it is home (`$HOME/…`). */
function isBroadKnown(word: string, isBroad: IsBroad, homes: KnownHomes): boolean {
  return normalizePath(word, homes) !== null && isBroad(word);
}

/** The working directory or all of it (`.`, `*`): broad, but where an agent works. */
function isHere(word: string, homes: KnownHomes): boolean {
  const n = normalizePath(word.replace(/\/+$/, '') || '/', homes);
  return n === '.' || n === '*' || n === '.*' || n === './*';
}

const FIND_ACTIONS = new Set(['-exec', '-execdir', '-ok', '-okdir']);
const REMOVERS = new Set(['rm', 'unlink', 'shred', 'rmdir', 'srm', 'wipe', 'trash', 'trash-put']);
const NAME_TESTS = new Set([
  '-name',
  '-iname',
  '-path',
  '-ipath',
  '-wholename',
  '-iwholename',
  '-regex',
  '-iregex',
  '-lname',
  '-ilname',
]);
/** A name pattern that keeps (nearly) every file: only `*`, `?` and `.` (`*`, `.*`, `*.*`, `?*`; regex `.*`). */
const MATCH_ALL = /^[*?.]*$/;

/** What a find command does to the files it visits: deletes them (`-delete`, `-exec rm …`), or nothing. */
function findDeletes(argv: readonly string[]): boolean {
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i]!;
    if (w === '-delete') return true;
    if (FIND_ACTIONS.has(w)) {
      const prog = argv[i + 1] ?? '';
      if (REMOVERS.has(prog.slice(prog.lastIndexOf('/') + 1))) return true;
    }
  }
  return false;
}

/**
 * Whether a find expression narrows what it visits by name (`-name '*.log'`, not `-name '*'`),
 * or to empty files. Alternatives (`-o`, `,`) and negations keep everything, conservatively.
 */
function findNarrows(argv: readonly string[], from: number): boolean {
  let narrows = false;
  for (let i = from; i < argv.length; i++) {
    const w = argv[i]!;
    if (FIND_ACTIONS.has(w)) {
      while (i < argv.length && argv[i] !== ';' && argv[i] !== '+') i++;
      continue;
    }
    if (w === '-o' || w === '-or' || w === ',') return false;
    const negated = argv[i - 1] === '!' || argv[i - 1] === '-not';
    if (NAME_TESTS.has(w) && !negated && !MATCH_ALL.test(argv[i + 1] ?? '')) narrows = true;
    if (w === '-empty' && !negated) narrows = true;
  }
  return narrows;
}

/** `find ROOT … -delete` / `-exec rm {} …` on home, `/`, a top-level directory or a child of home, without a name filter. */
function findRule(
  seg: SimpleCommand,
  label: string,
  add: CommandLevelAdder,
  isBroad: IsBroad,
  homes: KnownHomes,
): void {
  if (!findDeletes(seg.argv)) return;
  const words = seg.argv.map((text, i) => ({ text, dynamic: seg.dynamic.includes(i) }));
  const roots = findRoots(words);
  const broad = roots.filter((r) =>
    r.dynamic ? /^(?:\$HOME|\$\{HOME\})/.test(r.text) : isBroadKnown(r.text, isBroad, homes),
  );
  if (broad.length === 0 || broad.every((r) => isHere(r.text, homes))) return;
  if (findNarrows(seg.argv, 1 + roots.length)) return;
  add(
    'dangerous',
    `${label}: find deletes every file it visits under ${broad.map((r) => quote(r.text)).join(', ')} (no name filter)`,
  );
}

/** `mv ~ /tmp/x`, `mv ~/.finger /tmp/x`: the source is gone from where it was. */
function moveRule(
  seg: SimpleCommand,
  label: string,
  add: CommandLevelAdder,
  isBroad: IsBroad,
  homes: KnownHomes,
): void {
  const p = parseArgs('mv', seg.argv);
  const sources = p.options.has('target-directory') ? p.positionals : p.positionals.slice(0, -1);
  for (const s of sources) {
    if (isBroadKnown(s, isBroad, homes) && !isHere(s, homes)) add('dangerous', `${label}: mv moves ${quote(s)} away`);
  }
}

/** `rsync --delete … ~/` empties the destination of what the source lacks; `--remove-source-files` the sources. */
function rsyncRule(
  seg: SimpleCommand,
  label: string,
  add: CommandLevelAdder,
  isBroad: IsBroad,
  homes: KnownHomes,
): void {
  const del = seg.argv.some((a) => /^--del(?:ete(?:-[a-z]+)?)?$/.test(a));
  const removeSources = seg.argv.includes('--remove-source-files');
  if (!del && !removeSources) return;
  const ops = seg.argv.slice(1).filter((a, k) => !a.startsWith('-') && !seg.dynamic.includes(k + 1));
  const dest = ops[ops.length - 1];
  if (del && dest !== undefined && isBroadKnown(dest, isBroad, homes))
    add('dangerous', `${label}: rsync --delete removes what the source lacks from ${quote(dest)}`);
  if (removeSources)
    for (const s of ops.slice(0, -1))
      if (isBroadKnown(s, isBroad, homes))
        add('dangerous', `${label}: rsync --remove-source-files removes ${quote(s)}`);
}

/** `chattr -R +i ~`, `chattr +i ~` (nothing there can be changed any more), `setfacl -R … ~`. */
function attributeRule(
  seg: SimpleCommand,
  label: string,
  add: CommandLevelAdder,
  isBroad: IsBroad,
  homes: KnownHomes,
): void {
  const p = seg.program;
  const recursive = seg.argv.some((a) => /^-[a-zA-Z]*R/.test(a) || a === '--recursive');
  const targets = seg.argv.slice(1).filter((a) => !/^[-+=]/.test(a));
  if (p === 'chattr') {
    const locks = seg.argv.some((a) => /^[+=][a-zA-Z]*[ia]/.test(a));
    for (const t of targets)
      if ((recursive || locks) && isBroadKnown(t, isBroad, homes))
        add('dangerous', `${label}: chattr changes the attributes of ${quote(t)}`);
  } else if (recursive) {
    for (const t of targets)
      if (isBroadKnown(t, isBroad, homes))
        add('dangerous', `${label}: ${p} -R changes the access lists under ${quote(t)}`);
  }
}

/** Destruction rules of one segment (see the file comment). */
export function destructionRules(
  seg: SimpleCommand,
  label: string,
  add: CommandLevelAdder,
  isBroad: IsBroad,
  homes: KnownHomes,
): void {
  const p = seg.program;
  if (p === 'find') findRule(seg, label, add, isBroad, homes);
  else if (p === 'mv') moveRule(seg, label, add, isBroad, homes);
  else if (p === 'rsync') rsyncRule(seg, label, add, isBroad, homes);
  else if (p === 'chattr' || p === 'setfacl') attributeRule(seg, label, add, isBroad, homes);
  const flag = (reason: string): void => add('dangerous', reason);
  systemTamperingRules(seg, label, flag, isBroad, homes);
  startupHookRules(seg, label, flag, homes);
}

const GREPS = new Set(['grep', 'egrep', 'fgrep', 'zgrep', 'ugrep', 'ggrep', 'bzgrep', 'xzgrep']);
/** Searchers that descend into directories by default, their pattern first. */
const SEARCHERS = new Set(['rg', 'ag', 'ack', 'ack-grep', 'pt', 'sift']);
const TAR_CREATE = /^(?:--create|-[a-zA-Z]*c[a-zA-Z]*)$/;
const RECURSIVE_FLAG = /^-[a-zA-Z]*[rRa]|^--(?:recursive|dereference-recursive|archive|directories=recurse)$/;

/** How a segment reads whole directory trees: its tree operands, or null when it does not. */
function treeOperands(seg: SimpleCommand): { operands: string[]; implicitHere: boolean } | null {
  const p = seg.program;
  const a = seg.argv;
  const words = a.slice(1).filter((w, k) => !w.startsWith('-') && !seg.dynamic.includes(k + 1));
  const patternGiven = a.some((w) => /^-[a-zA-Z]*[ef]|^--(?:regexp|file)(?:=|$)/.test(w));
  if (SEARCHERS.has(p) || (GREPS.has(p) && a.some((w) => /^-[a-zA-Z]*[rR]/.test(w) || RECURSIVE_FLAG.test(w)))) {
    const operands = patternGiven ? words : words.slice(1);
    return { operands, implicitHere: operands.length === 0 };
  }
  if ((p === 'cp' || p === 'scp' || p === 'rsync' || p === 'diff') && a.some((w) => RECURSIVE_FLAG.test(w)))
    return { operands: words, implicitHere: false };
  if (
    (p === 'tar' || p === 'bsdtar' || p === 'gtar') &&
    a.some((w, k) => TAR_CREATE.test(w) || (k === 1 && /^[a-zA-Z]*c[a-zA-Z]*$/.test(w)))
  )
    return { operands: words, implicitHere: false };
  if ((p === 'zip' && a.some((w) => /^-[a-zA-Z]*r/.test(w))) || ((p === '7z' || p === '7za') && words[0] === 'a'))
    return { operands: words, implicitHere: false };
  return null;
}

/**
 * A recursive read (`grep -r`, `rg`, `cp -r`, `tar c`, `zip -r`…) of a directory holding a
 * credential store (`~`, `/`, `/home`, `/etc`, `~/.config`, finger's home's parent…), also the
 * directory a searcher given no path runs in: moderate, a credential read.
 */
export function recursiveReadRule(
  seg: SimpleCommand,
  label: string,
  dirs: Directories,
  add: CommandLevelAdder,
  homes: KnownHomes,
): void {
  const t = treeOperands(seg);
  if (t === null) return;
  for (const w of t.operands) {
    const store = holdsSecret(w, homes);
    if (store !== null) {
      add(
        'moderate',
        `${label}: ${seg.program} reads everything under ${quote(w)}, credential stores among it (${store})`,
      );
      return;
    }
  }
  if (!t.implicitHere) return;
  for (const d of dirs.list) {
    const store = d === '' ? null : holdsSecret(d, homes);
    if (store !== null) {
      add(
        'moderate',
        `${label}: ${seg.program} reads everything under ${quote(d)}, credential stores among it (${store})`,
      );
      return;
    }
  }
}
