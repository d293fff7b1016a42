// "Every write this command makes is inside the given roots, and it needs no network": the facts
// the engine needs to run a `moderate` shell call in the workspace-write sandbox at NOTIFY
// instead of holding it at CONFIRM. Pure and lexical over the RiskAssessment's model: the words a
// command writes (redirections, copy destinations, the operands of file-changing programs,
// directory options), whether any write is known only at run time, what needs the network, and
// whether it names a credential. The engine resolves the written words against the caller's real
// roots (PathSandbox.writesOutside); what a program writes without naming it is contained by the
// sandbox itself (the file system is read-only there outside the workspace).

import type { RiskAssessment, SimpleCommand } from './command-model.js';
import { networkNeed } from './network-need.js';
import { isNullSink, secretPath } from './paths.js';
import { OPERAND_CHANGERS } from './programs.js';
import { writtenFiles } from './written-files.js';

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
   * uncommitted work reset): shell changes in the sandbox cannot be undone, so these are seen first.
   */
  destroys: readonly string[];
}

/** `rm` options that remove directory trees. */
const RECURSIVE = /^-(?:[a-zA-Z]*[rR][a-zA-Z]*)$|^--recursive$/;

/** What one segment destroys beyond undoing (see {@link Confinement.destroys}), or null. */
function destroys(seg: SimpleCommand): string | null {
  const p = seg.program;
  const args = seg.argv.slice(1);
  if ((p === 'rm' || p === 'grm') && args.some((w) => RECURSIVE.test(w))) {
    const trees = args.filter((w) => !w.startsWith('-'));
    return `${p} removes the directory tree${trees.length === 1 ? '' : 's'} ${trees.map((t) => `'${t}'`).join(', ')}`;
  }
  if (
    p === 'find' &&
    args.some((w, i) => w === '-delete' || (/^-(?:exec|execdir|ok|okdir)$/.test(w) && args[i + 1] === 'rm'))
  )
    return `find deletes what it finds under ${args.find((w) => !w.startsWith('-')) ?? '.'}`;
  if (p === 'git') {
    const sub = args.find((w) => !w.startsWith('-'));
    if (sub === 'clean' && args.some((w) => /^-[a-zA-Z]*f/.test(w) || w === '--force'))
      return 'git clean deletes untracked files';
    if (sub === 'reset' && args.includes('--hard')) return 'git reset --hard discards uncommitted changes';
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

const cache = new WeakMap<RiskAssessment, Confinement>();

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
 * directory known only at run time.
 */
export function confinementOf(a: RiskAssessment): Confinement {
  const hit = cache.get(a);
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
  for (const seg of segs) {
    const need = networkNeed(seg);
    if (need !== null) needs.add(need);
    const gone = destroys(seg);
    if (gone !== null) destroyed.add(gone);
    for (let i = 0; i < seg.argv.length && credential === undefined; i++) {
      if (seg.dynamic.includes(i)) continue;
      if (secretPath(seg.argv[i]!) !== null) credential = seg.argv[i]!;
    }
    for (const r of seg.redirects) {
      if (!r.is_write) {
        if (credential === undefined && !r.dynamic && secretPath(r.target) !== null) credential = r.target;
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
  };
  if (unknown !== undefined) out.unknown = unknown;
  if (credential !== undefined) out.credential = credential;
  Object.freeze(out);
  cache.set(a, out);
  return out;
}
