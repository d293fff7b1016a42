// "Every write this command makes is inside the given roots, and it needs no network": the facts
// the engine needs to run a `moderate` shell call in the workspace-write sandbox at NOTIFY
// instead of holding it at CONFIRM. Pure and lexical over the RiskAssessment's model: the words a
// command writes (redirections, copy destinations, the operands of file-changing programs,
// directory options), whether any write is known only at run time, what needs the network, and
// whether it names a credential. The engine resolves the written words against the caller's real
// roots (PathSandbox.writesOutside); what a program writes without naming it is contained by the
// sandbox itself (the file system is read-only there outside the workspace).

import type { RiskAssessment, SimpleCommand } from '../command-model.js';
import { type KnownHomes, USUAL_HOMES } from '../knowledge/places/known-homes.js';
import { isNullSink, secretPath } from '../knowledge/places/paths.js';
import { writtenFiles } from '../knowledge/places/written-files.js';
import { networkNeed } from '../knowledge/programs/network-need.js';
import { OPERAND_CHANGERS } from '../knowledge/programs/programs.js';

/**
 * How a word is snapshotted before a delete runs: the path it names (`rm -r`, `find` roots), or the
 * directory a program cleans (`git clean`). The same shape as `@finger/workspace`'s SnapshotWord,
 * which takes it as it is; declared here so the assessor depends on no file-writing package.
 */
export interface SnapshotWord {
  word: string;
  /** `tree`: the path as named, its last component not followed; `cwd`: the directory it runs in (may be a root). */
  kind: 'tree' | 'cwd';
}

/** What {@link confinementOf} finds. */
export interface Confinement {
  /** Path words the command writes, as written (`~/…`, absolute, or relative to where it starts); no duplicates. */
  writes: readonly string[];
  /** Why not every write can be known before it runs (a target known only at run time…); absent when they can. */
  unknown?: string;
  /** Each segment that needs the network: "needs network: npm install". */
  needs: readonly string[];
  /** A credential the command names (a credential read is never let through unseen). */
  credential?: string;
  /**
   * What the command destroys beyond undoing (a directory tree removed, untracked files cleaned,
   * uncommitted work reset) when no hard-link snapshot can make it undoable: "…: not undoable (why)".
   */
  destroys: readonly string[];
  /**
   * The deletes a hard-link snapshot taken before the run makes undoable (rm -r, find -delete, git
   * clean as the only or first segments): what each removes and the words to snapshot. The engine
   * resolves the words; without an undo store they count as {@link destroys}.
   */
  undoable: readonly { gone: string; words: readonly SnapshotWord[] }[];
}

/** `rm` options that remove directory trees. */
const RECURSIVE = /^-(?:[a-zA-Z]*[rR][a-zA-Z]*)$|^--recursive$/;

/** What one deleting segment removes, and how a hard-link snapshot could make it undoable. */
interface Deletion {
  /** What it removes, for a person: "rm removes the directory tree 'build'". */
  gone: string;
  /** The words to snapshot before it runs; absent when no snapshot can make it undoable ({@link why}). */
  words?: SnapshotWord[];
  /** Why no snapshot can (absent when one can). */
  why?: string;
}

/** `find` options that come before its starting points. */
const FIND_LEADING = /^-(?:[HLP]|D|O\d*)$/;

/** `.` (or `./`): the directory the program starts in. */
const isDot = (w: string): boolean => /^\.\/*$/.test(w);

/** What one segment deletes beyond undoing without a snapshot (see {@link Confinement.destroys}), or null. */
function deletion(seg: SimpleCommand): Deletion | null {
  const p = seg.program;
  const args = seg.argv.slice(1);
  const late = (idx: readonly number[]): string | undefined =>
    idx.some((i) => seg.dynamic.includes(i))
      ? 'it names a path known only at run time'
      : seg.unknown_tail
        ? 'it is given more arguments at run time (xargs)'
        : seg.find_broad === true
          ? 'it runs on every file find finds'
          : seg.via.length > 0
            ? `it runs through ${seg.via.join(', ')}`
            : undefined;
  if ((p === 'rm' || p === 'grm') && args.some((w) => RECURSIVE.test(w))) {
    const idx = operands(seg);
    const trees = idx.map((i) => seg.argv[i]!);
    const gone = `${p} removes the directory tree${trees.length === 1 ? '' : 's'} ${trees.map((t) => `'${t}'`).join(', ')}`;
    const why = late(idx);
    return why !== undefined ? { gone, why } : { gone, words: trees.map((word) => ({ word, kind: 'tree' })) };
  }
  if (
    p === 'find' &&
    args.some((w, i) => w === '-delete' || (/^-(?:exec|execdir|ok|okdir)$/.test(w) && args[i + 1] === 'rm'))
  ) {
    let i = 1;
    while (i < seg.argv.length && FIND_LEADING.test(seg.argv[i]!)) i += /^-[DO]$/.test(seg.argv[i]!) ? 2 : 1;
    const roots: number[] = [];
    for (; i < seg.argv.length && !/^[-(!,]/.test(seg.argv[i]!); i++) roots.push(i);
    const gone = `find deletes what it finds under ${roots.length > 0 ? roots.map((r) => seg.argv[r]).join(', ') : '.'}`;
    const why =
      late(roots) ??
      (args.some((w) => w === '-L' || w === '-H' || w === '-follow')
        ? 'it follows symbolic links'
        : !args.includes('-delete')
          ? 'it runs rm on what it finds'
          : undefined);
    if (why !== undefined) return { gone, why };
    const words = roots.map((r) => seg.argv[r]!);
    return {
      gone,
      words: (words.length > 0 ? words : ['.']).map((word) =>
        isDot(word) ? { word: '.', kind: 'cwd' } : { word, kind: 'tree' },
      ),
    };
  }
  if (p === 'git') {
    const subAt = args.findIndex((w) => !w.startsWith('-'));
    const sub = args[subAt];
    if (sub === 'clean' && args.some((w) => /^-[a-zA-Z]*f/.test(w) || w === '--force')) {
      const gone = 'git clean deletes untracked files';
      const rest = args.slice(subAt + 1);
      const forces = rest.reduce(
        (n, w) => n + (w === '--force' ? 1 : /^-[a-zA-Z]+$/.test(w) ? (w.match(/f/g) ?? []).length : 0),
        0,
      );
      const why =
        late(operands(seg)) ??
        (subAt > 0
          ? 'git is given options before clean'
          : forces > 1
            ? 'a second -f removes nested repositories'
            : rest.some((w) => !w.startsWith('-') && (w.startsWith('/') || w.split('/').includes('..')))
              ? 'a pathspec reaches above where it runs'
              : undefined);
      return why !== undefined ? { gone, why } : { gone, words: [{ word: '.', kind: 'cwd' }] };
    }
    if (sub === 'reset' && args.includes('--hard'))
      return {
        gone: 'git reset --hard discards uncommitted changes',
        why: 'it rewrites tracked files in place, which a hard-link snapshot cannot keep',
      };
  }
  return null;
}

/** Programs that change every operand they name (beside the copiers of written-files.ts). */
const CHANGES_OPERANDS: ReadonlySet<string> = new Set([...OPERAND_CHANGERS, 'mktemp', 'mkfifo', 'mknod']);
/** Programs that edit their file operands in place with `-i` (sed, perl) or always (patch writes where it runs). */
const IN_PLACE: ReadonlySet<string> = new Set(['sed', 'gsed', 'perl']);
/** Options of any program whose value is a directory or file it writes in (`make -C d`, `cargo --target-dir d`, `-o f`). */
const WRITE_DIR_OPTIONS: ReadonlySet<string> = new Set([
  '-C',
  '--directory',
  '--prefix',
  '--target-dir',
  '--out-dir',
  '--outDir',
  '--outdir',
  '--output',
  '--output-dir',
  '--cwd',
  '--dir',
  '--manifest-path',
  '--git-dir',
  '--work-tree',
  '--cache',
  '--cache-dir',
  '--root',
  '--destdir',
  '-o',
]);
/** Changes the directory later segments start in. */
const CHANGES_DIR: ReadonlySet<string> = new Set(['cd', 'pushd', 'popd']);

/** Confinements found, per set of homes (a credential depends on them) and assessment. */
const cache = new WeakMap<KnownHomes, WeakMap<RiskAssessment, Confinement>>();

/** The words after the program that are no option, `--` ending the options. */
function operands(seg: SimpleCommand): number[] {
  const out: number[] = [];
  let options = true;
  for (let i = 1; i < seg.argv.length; i++) {
    const w = seg.argv[i]!;
    if (options && w === '--') options = false;
    else if (!options || !w.startsWith('-') || w === '-') out.push(i);
  }
  return out;
}

/** Indexes of the files `sed -i` / `perl -i` edits (the first operand is the script unless `-e`/`-f` gave one). */
function inPlaceFiles(seg: SimpleCommand): number[] {
  const a = seg.argv;
  const inPlace = a.some((w, i) => i > 0 && (/^-[a-zA-Z]*i/.test(w) || w.startsWith('--in-place')));
  if (!inPlace) return [];
  const scriptGiven = a.some((w, i) => i > 0 && /^-[a-zA-Z]*[ef]$|^--(?:expression|file)/.test(w));
  // option values (`-e CODE`) are skipped: they follow an option ending in e/f
  const out: number[] = [];
  let options = true;
  for (let i = 1; i < a.length; i++) {
    const w = a[i]!;
    if (options && w === '--') options = false;
    else if (options && w.startsWith('-') && w !== '-') {
      if (/^-[a-zA-Z]*[ef]$|^--(?:expression|file)$/.test(w)) i++;
    } else out.push(i);
  }
  return scriptGiven ? out : out.slice(1);
}

/** The indexes of one segment's written words (beside redirections), `null` when they cannot be known. */
function writtenIndexes(seg: SimpleCommand): number[] {
  const out: number[] = [];
  const p = seg.program;
  if (CHANGES_OPERANDS.has(p)) out.push(...operands(seg));
  else if (IN_PLACE.has(p)) out.push(...inPlaceFiles(seg));
  else if (p === 'mv' || p === 'gmv') out.push(...operands(seg)); // the sources go away too
  for (let i = 1; i < seg.argv.length; i++) {
    const w = seg.argv[i]!;
    if (WRITE_DIR_OPTIONS.has(w)) {
      if (i + 1 < seg.argv.length) out.push(i + 1);
    }
  }
  return out;
}

/** `--opt=value` words of the directory options: the values. */
function joinedOptionValues(seg: SimpleCommand): string[] {
  const out: string[] = [];
  for (const w of seg.argv.slice(1)) {
    const eq = w.indexOf('=');
    if (eq > 2 && w.startsWith('--') && WRITE_DIR_OPTIONS.has(w.slice(0, eq))) out.push(w.slice(eq + 1));
  }
  return out;
}

function joinDir(dir: string, w: string): string {
  if (w.startsWith('/') || w.startsWith('~')) return w;
  return `${dir.replace(/\/+$/, '')}/${w}`;
}

/**
 * The confinement facts of an assessment (cached per assessment; assessments are frozen and
 * shared). Writes are the redirection targets, the destinations of copies and archives
 * (written-files.ts), the operands of `rm`, `mkdir`, `touch`, `chmod`…, `mv`'s sources, the files
 * `sed -i` / `perl -i` edit and the values of directory options (`-C`, `--prefix`,
 * `--target-dir`, `-o`…). After a `cd DIR` a relative write counts both where it starts and
 * below DIR (`cd` alone: below `~`). Unknown: a write whose target is known only at run time, a
 * program known only at run time, arguments appended at run time (`xargs`), `cd -` or a
 * directory known only at run time. `homes`: those of the assessor that made `a` (a credential
 * under its `home_dir` is one; RiskAssessor.confinementOf passes them); without, the usual spellings.
 */
export function confinementOf(a: RiskAssessment, homes: KnownHomes = USUAL_HOMES): Confinement {
  let found = cache.get(homes);
  if (found === undefined) cache.set(homes, (found = new WeakMap()));
  const hit = found.get(a);
  if (hit !== undefined) return hit;
  const writes = new Set<string>();
  const needs = new Set<string>();
  const destroyed = new Set<string>();
  let unknown: string | undefined;
  let credential: string | undefined;
  const dirs: string[] = [];
  const segs = a.model.segments;
  for (const seg of segs) {
    if (!CHANGES_DIR.has(seg.program)) continue;
    const arg = seg.argv.slice(1).find((w) => !w.startsWith('-'));
    if (seg.program === 'popd' || arg === undefined) dirs.push('~');
    else if (arg === '-' || seg.dynamic.length > 0)
      unknown ??= `${seg.program} changes to a directory known only at run time`;
    else dirs.push(arg);
  }
  const add = (w: string): void => {
    if (w === '' || isNullSink(w)) return;
    writes.add(w);
    for (const d of dirs) writes.add(joinDir(d, w));
  };
  const undoable: { gone: string; words: readonly SnapshotWord[] }[] = [];
  // a snapshot is the state before the run: sound only for deletes that nothing ran before (a
  // command before them may move files into what they delete) and that start where the call does
  let others = dirs.length > 0 ? 'after cd' : undefined;
  for (const seg of segs) {
    const need = networkNeed(seg);
    if (need !== null) needs.add(need);
    const d = deletion(seg);
    if (d !== null) {
      const why = d.why ?? (others !== undefined ? `it runs ${others}, which may change what it deletes` : undefined);
      if (why !== undefined || d.words === undefined) destroyed.add(`${d.gone}: not undoable (${why ?? 'unknown'})`);
      else undoable.push({ gone: d.gone, words: Object.freeze(d.words) });
    } else if (!CHANGES_DIR.has(seg.program)) others ??= `after ${seg.program || 'another command'}`;
    for (let i = 0; i < seg.argv.length && credential === undefined; i++) {
      if (seg.dynamic.includes(i)) continue;
      if (secretPath(seg.argv[i]!, homes) !== null) credential = seg.argv[i]!;
    }
    for (const r of seg.redirects) {
      if (!r.is_write) {
        if (credential === undefined && !r.dynamic && secretPath(r.target, homes) !== null) credential = r.target;
        continue;
      }
      if (r.dynamic) unknown ??= `writes to ${JSON.stringify(r.target)}, a file named only at run time`;
      else add(r.target);
    }
    if (seg.wrapper) continue;
    if (seg.unknown_program) {
      unknown ??= 'runs a program known only at run time';
      continue;
    }
    const idx = writtenIndexes(seg);
    if (seg.unknown_tail && (idx.length > 0 || CHANGES_OPERANDS.has(seg.program)))
      unknown ??= `${seg.program} is given more arguments at run time (xargs)`;
    for (const i of idx) {
      if (seg.dynamic.includes(i))
        unknown ??= `${seg.program} writes ${JSON.stringify(seg.argv[i])}, known only at run time`;
      else add(seg.argv[i]!);
    }
    for (const w of joinedOptionValues(seg)) add(w);
    for (const f of writtenFiles(seg)) add(f.path);
  }
  const out: Confinement = {
    writes: Object.freeze([...writes]),
    needs: Object.freeze([...needs]),
    destroys: Object.freeze([...destroyed]),
    undoable: Object.freeze(undoable),
  };
  if (unknown !== undefined) out.unknown = unknown;
  if (credential !== undefined) out.credential = credential;
  Object.freeze(out);
  found.set(a, out);
  return out;
}
