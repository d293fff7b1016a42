// Paths relative to the working directory: `cat ../token` run in FINGER_HOME/workspace reads
// finger's token, `cd /etc && cat shadow` reads /etc/shadow. The rules of classify.ts (and the
// exfiltration and secret-flow walks) judge path words as written; this module gives them a view
// of the model in which every relative path word that leads somewhere sensitive (a credential
// store, a place sensitive to write, a broad target, a directory holding credentials, another
// process's /proc entries) is replaced by where it leads. The directory a segment runs in is the
// command's starting directory (the call's `cwd`, else the workspace root) followed through every
// `cd`/`pushd`/`popd` before it (and its own directory options: `git -C`, `tar -C`, `make -C`, see
// directory-options.ts): as a set of the directories it may be (a `cd` that fails leaves
// the old one; one in a loop or function may run again), or "not known" after a `cd` to a
// run-time value — then a relative path counts where it would be sensitive from SOME directory
// (`credentials` in ~/.aws, `token` in finger's home, `shadow` in /etc); also after a relative
// `cd` in a command that assigns CDPATH (`CDPATH=~ cd .ssh`: cd searches CDPATH's directories
// first). A path word (relative, absolute or `~/…`) that leads elsewhere through a symbolic link on
// disk is replaced by where it really leads when that matters more (real-paths.ts), and a `cd`
// through one also enters where it leads; subcommand words are never path words
// (subcommand-words.ts). The model itself is not changed: deny patterns and the sandbox see what
// was written.

import type { CommandModel, Redirect, SimpleCommand } from '../../command-model.js';
import { type DirectoryOptions, directoryOptions } from '../../options/directory-options.js';
import { subcommandWords } from '../../options/subcommand-words.js';
import type { KnownHomes } from './known-homes.js';
import {
  holdsSecret,
  holdsSensitive,
  isBroadTarget,
  normalizePath,
  redFlagPaths,
  secretPath,
  sensitiveFromAnywhere,
  sensitiveWriteTarget,
} from './paths.js';
import type { RealPaths } from './real-paths.js';

/** What the RiskAssessor knows of where a command runs. */
export interface AssessContext {
  /**
   * The directory the command starts in (absolute: the call's `cwd`, else the workspace root the
   * shell tool defaults to); `null`: not known at all. Absent: relative paths are judged as
   * written (only a `cd` inside the command moves them). A real path (the sandbox resolves it):
   * symbolic links are looked for below it, not in it.
   */
  cwd?: string | null;
}

/** The directories a segment may start in ('' is the starting directory when the context names none). */
export interface Directories {
  readonly list: readonly string[];
  /** it may be any directory (a `cd` to a run-time value) */
  readonly unknown: boolean;
}

/** Where a segment runs, as its rules need it. */
export interface SegmentPlace {
  /** the directories it starts in (for a searcher given no path) */
  readonly dirs: Directories;
  /** whether deleting or chmod-ing a word of it hits something broad (see {@link PathView.isBroad}) */
  isBroad(word: string): boolean;
}

/** The model as the rules judge it, with what was replaced and why. */
export interface PathView {
  model: CommandModel;
  /** one line per replaced word: `'../token' is '/srv/finger/token' (from '/srv/finger/workspace')` */
  where: string[];
  /** red flags of where words lead (`environ` in `/proc/1`): dangerous */
  notes: string[];
  /** the directories segment i starts in */
  directories(i: number): Directories;
  /**
   * Whether deleting or chmod-ing a word of the view hits something broad: isBroadTarget, or a
   * replaced word that was broad as written (`..` is finger's home, which is no top-level directory).
   */
  isBroad(word: string): boolean;
}

const CHANGES_DIR = new Set(['cd', 'pushd', 'popd']);
const NEUTRAL: Directories = Object.freeze({ list: Object.freeze(['']), unknown: false });
/** Past this many possible directories, any directory. */
const MAX_DIRECTORIES = 16;
/** At most this many `where` lines. */
const MAX_WHERE = 6;

const SECRET = 1;
const WRITE = 2;
const BROAD = 4;
const RED_FLAG = 8;
const HOLDS = 16;

/** What about a path makes it matter. */
function flagsOf(p: string, homes: KnownHomes): number {
  let f = 0;
  if (secretPath(p, homes) !== null) f |= SECRET;
  if (sensitiveWriteTarget(p, homes) !== null) f |= WRITE;
  if (isBroadTarget(p, homes)) f |= BROAD;
  if (redFlagPaths(p).length > 0) f |= RED_FLAG;
  if (holdsSecret(p, homes) !== null) f |= HOLDS;
  return f;
}

function bits(n: number): number {
  let c = 0;
  for (let x = n; x !== 0; x &= x - 1) c++;
  return c;
}

/** A word part that may be a relative path (not a URL, `host:path`, option, number or `-`). */
function isRelativePath(part: string): boolean {
  if (part === '' || part === '-' || part === '--') return false;
  const c = part[0]!;
  if (c === '/' || c === '~' || c === '$' || c === '`' || c === '-') return false;
  if (/^[A-Za-z][\w+.-]*:/.test(part)) return false;
  return !/^\d+$/.test(part);
}

/** Where a path part may hide in a word: the word, after a leading `@`/`<`, an `=`, `=@`/`=<`, a `-X@`. */
function partStarts(word: string): number[] {
  const out: number[] = [];
  if (!word.startsWith('-')) out.push(word.startsWith('@') || word.startsWith('<') ? 1 : 0);
  const eq = word.indexOf('=');
  if (eq > 0) out.push(word[eq + 1] === '@' || word[eq + 1] === '<' ? eq + 2 : eq + 1);
  const at = word.indexOf('@');
  if (at > 0 && word[at - 1] !== '=' && word.startsWith('-')) out.push(at + 1);
  return out;
}

function join(dir: string, rel: string, homes: KnownHomes): string | null {
  return normalizePath(dir === '' ? rel : `${dir}/${rel}`, homes);
}

/** Where a path word leads that matters more than the word itself. */
interface Lead {
  to: string;
  /** the directory it was joined to (null: any directory); `true`: where a symbolic link leads */
  from: string | null | true;
  gain: number;
  redFlag: boolean;
  wasBroad: boolean;
}

class Resolver {
  readonly where: string[] = [];
  readonly notes: string[] = [];
  /** replacements of words that were broad as written, and words kept that are broad where they run */
  readonly broad = new Set<string>();
  readonly #boring = new Map<string, boolean>();
  readonly #seen = new Set<string>();
  readonly #real: RealPaths;
  readonly #homes: KnownHomes;

  constructor(real: RealPaths) {
    this.#real = real;
    this.#homes = real.homes;
  }

  /** Whether nothing sensitive can be reached below `dir` without `..` (the workspace, usually). */
  #isBoring(dir: string): boolean {
    let b = this.#boring.get(dir);
    if (b === undefined) {
      b =
        dir === '' ||
        (flagsOf(dir, this.#homes) === 0 &&
          !holdsSensitive(dir, this.#homes) &&
          !dir.startsWith('/proc') &&
          !isBroadTarget(`${dir}/x`, this.#homes));
      this.#boring.set(dir, b);
    }
    return b;
  }

  /** The word with a relative path part replaced by where it leads when that matters, else the word itself. */
  rewrite(word: string, dirs: Directories, label: string, whole = false): string {
    for (const s of whole ? [0] : partStarts(word)) {
      const part = word.slice(s);
      const relative = isRelativePath(part);
      const lexical = relative ? this.#lead(part, dirs) : null;
      const hit = this.#linked(part, relative, dirs, lexical) ?? lexical;
      if (hit === null) continue;
      const key = `${label}\0${part}\0${hit.to}`;
      if (!this.#seen.has(key)) {
        this.#seen.add(key);
        // (a word that only becomes broad — `foo` in `~` — speaks for itself in its reason)
        if (this.where.length < MAX_WHERE && hit.gain !== BROAD) {
          const from =
            hit.from === true
              ? ' (through a symbolic link)'
              : hit.from === null
                ? ' if run from a directory known only at run time'
                : ` (from '${hit.from}')`;
          this.where.push(`${label}: '${part}' is '${hit.to}'${from}`);
        }
        if (hit.redFlag) {
          const flag = redFlagPaths(hit.to)[0];
          if (flag !== undefined) this.notes.push(`${label}: '${part}' is '${hit.to}': ${flag}`);
        }
      }
      if (hit.wasBroad) this.broad.add(hit.to);
      // a word that only becomes broad (`core.pager`, `run` in `~`) stays as written, for the rules
      // that read it as what it is (a key, a subcommand); deleting or chmod-ing it hits something broad
      if (hit.gain === BROAD) {
        this.broad.add(word);
        return word;
      }
      return word.slice(0, s) + hit.to;
    }
    return word;
  }

  /**
   * Where a path leads through a symbolic link on disk when that matters more than where it leads
   * as written (`lexical`, else the path itself): the stricter of the two (real-paths.ts).
   */
  #linked(part: string, relative: boolean, dirs: Directories, lexical: Lead | null): Lead | null {
    const c = part[0];
    if (!relative && c !== '/' && c !== '~') return null;
    let own: number | undefined;
    let base: number | undefined;
    let best: { to: string; gain: number; flags: number } | null = null;
    for (const d of relative ? dirs.list : ['']) {
      if (relative && d === '') continue;
      const real = this.#real.resolve(relative ? `${d}/${part}` : part);
      const to = real === null ? null : normalizePath(real, this.#homes);
      if (to === null) continue;
      own ??= flagsOf(part, this.#homes);
      base ??= lexical === null ? own : flagsOf(lexical.to, this.#homes);
      const flags = flagsOf(to, this.#homes);
      const gain = flags & ~base;
      if (gain !== 0 && (best === null || bits(gain) > bits(best.gain))) best = { to, gain, flags };
    }
    if (best === null) return null;
    return {
      to: best.to,
      from: true,
      gain: best.gain,
      redFlag: (best.gain & RED_FLAG) !== 0,
      wasBroad: (own! & BROAD) !== 0 && (best.flags & BROAD) === 0,
    };
  }

  /** Where a relative path leads from one of `dirs` that matters more than the path as written, or null. */
  #lead(part: string, dirs: Directories): Lead | null {
    // `..` anywhere (also inside a brace expansion, `{..,x}/token`) may climb out of a boring directory
    const climbs = part.includes('..') || part.includes('{');
    let best: { to: string; from: string | null; gain: number; flags: number } | null = null;
    let own: number | undefined;
    const consider = (to: string, from: string | null): void => {
      const flags = flagsOf(to, this.#homes);
      if (flags === 0) return;
      own ??= flagsOf(part, this.#homes);
      const gain = flags & ~own;
      if (gain === 0) return;
      if (best === null || bits(gain) > bits(best.gain)) best = { to, from, gain, flags };
    };
    for (const d of dirs.list) {
      if (d === '' || (!climbs && this.#isBoring(d))) continue;
      const to = join(d, part, this.#homes);
      if (to !== null && to !== part) consider(to, d);
    }
    if (dirs.unknown) {
      const to = sensitiveFromAnywhere(part, this.#homes);
      if (to !== null) consider(to, null);
    }
    if (best === null) return null;
    const b = best as { to: string; from: string | null; gain: number; flags: number };
    return {
      to: b.to,
      from: b.from,
      gain: b.gain,
      redFlag: (b.gain & RED_FLAG) !== 0,
      wasBroad: (own! & BROAD) !== 0 && (b.flags & BROAD) === 0,
    };
  }
}

/** The first operand of cd/pushd (options `-L -P -e -@` skipped), its index, or undefined. */
function cdOperand(seg: SimpleCommand): { word: string; index: number } | undefined {
  for (let k = 1; k < seg.argv.length; k++) {
    const w = seg.argv[k]!;
    if (w === '--') return k + 1 < seg.argv.length ? { word: seg.argv[k + 1]!, index: k + 1 } : undefined;
    if (w.length > 1 && w.startsWith('-') && !/^-\d+$/.test(w)) continue;
    return { word: w, index: k };
  }
  return undefined;
}

/** The `env -C DIR` / `--chdir=DIR` a wrapper segment runs its command in, or undefined. */
function envChdir(seg: SimpleCommand): string | undefined {
  for (let k = 1; k < seg.argv.length; k++) {
    const w = seg.argv[k]!;
    if (w === '-C' || w === '--chdir') return seg.argv[k + 1];
    if (w.startsWith('--chdir=')) return w.slice(8);
    if (/^-[a-zA-Z]*C./.test(w) && !w.startsWith('--')) return w.slice(w.indexOf('C') + 1);
    if (!w.startsWith('-')) return undefined;
  }
  return undefined;
}

/** Directories a command walk keeps: the current ones and every one entered so far. */
class Walk {
  cur: Directories;
  readonly #history: Set<string>;
  #historyUnknown: boolean;
  #changes = 0;
  readonly #repeats: boolean;
  readonly #cdpath: boolean;
  readonly #linked: (d: Directories) => Directories;
  readonly #homes: KnownHomes;

  /**
   * `cdpath`: the command assigns CDPATH, so a relative `cd` may lead into any of its directories;
   * `linked`: the directories with where symbolic links take them added; `homes`: the judging
   * assessor's (known-homes.ts).
   */
  constructor(
    start: Directories,
    repeats: boolean,
    cdpath: boolean,
    linked: (d: Directories) => Directories,
    homes: KnownHomes,
  ) {
    this.#linked = linked;
    this.#homes = homes;
    start = linked(start);
    this.cur = start;
    this.#history = new Set(start.list);
    this.#historyUnknown = start.unknown;
    this.#repeats = repeats;
    this.#cdpath = cdpath;
  }

  /** The directories `target` (a cd operand) names from `from` (the current ones). */
  targets(target: string, dynamic: boolean, from: Directories = this.cur): Directories {
    const n = normalizePath(target, this.#homes);
    // a run-time value other than $HOME at the start of it: any directory
    if (dynamic && (n === null || /[$`]/.test(n))) return { list: [], unknown: true };
    if (n !== null && (n.startsWith('/') || n.startsWith('~'))) return this.#linked({ list: [n], unknown: false });
    const list: string[] = [];
    for (const d of from.list) {
      const to = join(d, target, this.#homes);
      if (to !== null) list.push(to);
    }
    // a relative cd in a loop or function body may run again, from where the last one left
    return this.#linked({ list, unknown: from.unknown || this.#repeats });
  }

  /** Every directory entered so far (`cd -`, `popd`, `pushd` without an operand). */
  history(): Directories {
    return { list: [...this.#history], unknown: this.#historyUnknown || this.#changes === 0 };
  }

  /** The current directories and `more`. */
  add(more: Directories): void {
    this.#changes++;
    const list = [...new Set([...this.cur.list, ...more.list])];
    const unknown = this.cur.unknown || more.unknown || list.length > MAX_DIRECTORIES;
    this.cur = { list: list.slice(0, MAX_DIRECTORIES), unknown };
    for (const d of more.list) this.#history.add(d);
    if (more.unknown) this.#historyUnknown = true;
  }

  /** After a cd/pushd/popd segment. */
  change(seg: SimpleCommand): void {
    if (seg.program === 'popd') {
      this.add(this.history());
      return;
    }
    const op = cdOperand(seg);
    if (op === undefined) {
      this.add(seg.program === 'cd' ? { list: ['~'], unknown: false } : this.history());
      return;
    }
    if (op.word === '-' || (seg.program === 'pushd' && /^[+-]\d+$/.test(op.word))) {
      this.add(this.history());
      return;
    }
    const to = this.targets(op.word, seg.dynamic.includes(op.index));
    // CDPATH is searched for a relative operand not starting with `.` or `..` (`CDPATH=~ cd .ssh`)
    this.add(this.#cdpath && !/^(?:[/~]|\.\.?(?:\/|$))/.test(op.word) ? { list: to.list, unknown: true } : to);
  }
}

/** `d` with the directories symbolic links take its directories to added (`cd docs` where docs -> ~/.ssh). */
function linkedDirectories(d: Directories, real: RealPaths): Directories {
  let list: string[] | null = null;
  for (const x of d.list) {
    const r = x === '' ? null : real.resolve(x);
    const n = r === null ? null : normalizePath(r, real.homes);
    if (n !== null && n !== x && !(list ?? d.list).includes(n)) (list ??= d.list.slice()).push(n);
  }
  return list === null ? d : { list, unknown: d.unknown };
}

/**
 * The view of `model` the rules judge (see the file comment); the model itself when nothing
 * relative (or through a symbolic link) leads anywhere that matters. `real`: the command's
 * symlink resolver (its probes let a cached assessment be checked again), which carries the
 * judging assessor's homes.
 */
export function pathView(model: CommandModel, context: AssessContext, real: RealPaths): PathView {
  const homes = real.homes;
  const segs = model.segments;
  const start: Directories =
    context.cwd === undefined
      ? NEUTRAL
      : context.cwd === null
        ? { list: [], unknown: true }
        : { list: [normalizePath(context.cwd, homes) ?? ''], unknown: false };
  const cdpath = segs.some((s) => s.assignments.some((a) => a.name === 'CDPATH'));
  const walk = new Walk(
    start,
    model.flags.control_flow || model.flags.function_def,
    cdpath,
    (d) => linkedDirectories(d, real),
    homes,
  );
  const r = new Resolver(real);
  const dirs: Directories[] = [];
  let out: SimpleCommand[] | null = null;
  let scoped: Directories | undefined;
  for (let i = 0; i < segs.length; i++) {
    const seg = segs[i]!;
    const d = scoped ?? walk.cur;
    scoped = undefined;
    dirs.push(d);
    const label = `segment ${i + 1}`;
    const moved = directoryOptions(seg);
    const next = rewriteSegment(seg, d, moved === null ? () => d : movedDirectories(walk, d, moved, seg), label, r);
    if (next !== seg) {
      out ??= segs.slice();
      out[i] = next;
    }
    if (CHANGES_DIR.has(seg.program) && !seg.wrapper) walk.change(seg);
    else if (seg.program === 'env' && seg.wrapper) {
      const dir = envChdir(seg);
      if (dir !== undefined) {
        const to = walk.targets(dir, false);
        scoped = { list: [...new Set([...d.list, ...to.list])], unknown: d.unknown || to.unknown };
      }
    }
  }
  let loops = model.loop_variables;
  if (loops !== undefined) {
    const changed = loops.map((v) => {
      const d = dirs[v.at] ?? walk.cur;
      const words = v.words.map((w) => r.rewrite(w, d, `the loop over '$${v.name}'`));
      return words.every((w, k) => w === v.words[k]) ? v : { ...v, words };
    });
    if (changed.some((v, k) => v !== loops![k])) loops = changed;
  }
  const directories = (i: number): Directories => dirs[i] ?? walk.cur;
  const isBroad = (word: string): boolean => isBroadTarget(word, homes) || r.broad.has(word);
  const base = { where: r.where, notes: r.notes, directories, isBroad };
  if (out === null && loops === model.loop_variables) return { model, ...base };
  const view: CommandModel = { ...model, segments: out ?? segs };
  if (loops !== undefined) view.loop_variables = loops;
  return { model: view, ...base };
}

const HEREDOC = new Set(['<<', '<<-', '<<<']);

/** Most directory options of one command followed (`git -C a -C b …`); past it: not known. */
const MAX_DIRECTORY_OPTIONS = 16;
const UNKNOWN_DIRECTORIES: Directories = { list: [], unknown: true };

/** Union of two sets of directories. */
function union(a: Directories, b: Directories): Directories {
  const list = [...new Set([...a.list, ...b.list])];
  return { list: list.slice(0, MAX_DIRECTORIES), unknown: a.unknown || b.unknown || list.length > MAX_DIRECTORIES };
}

/**
 * The directories each argv word of a segment with directory options leads from (`git -C ~ add
 * .ssh`: `.ssh` from `~`): each option's directory is named from the ones before it, as a `cd` is.
 */
function movedDirectories(
  walk: Walk,
  d: Directories,
  moved: DirectoryOptions,
  seg: SimpleCommand,
): (k: number) => Directories {
  // more than a handful: where words lead from is not worked out (bounded work), and not known
  if (moved.options.length > MAX_DIRECTORY_OPTIONS) return () => UNKNOWN_DIRECTORIES;
  const steps: { index: number; dirs: Directories }[] = [];
  let cur = d;
  for (const o of moved.options) {
    const to = walk.targets(o.dir, seg.dynamic.includes(o.index), cur);
    cur = o.keep ? union(d, union(cur, to)) : to;
    steps.push({ index: o.index, dirs: cur });
  }
  const last = cur;
  return (k) => {
    let at = d;
    for (const s of steps) {
      // an option's own word leads from the directories before it
      if (s.index >= k) break;
      at = s.dirs;
    }
    return moved.scope === 'all' && !steps.some((s) => s.index === k) ? last : at;
  };
}

/** The segment with its relative path words replaced (see {@link Resolver.rewrite}); `at(k)`: where argv[k] leads from. */
function rewriteSegment(
  seg: SimpleCommand,
  d: Directories,
  at: (k: number) => Directories,
  label: string,
  r: Resolver,
): SimpleCommand {
  let argv: string[] | null = null;
  const verbs = subcommandWords(seg);
  for (let k = 1; k < seg.argv.length; k++) {
    if (seg.dynamic.includes(k) || verbs.includes(k)) continue;
    const w = seg.argv[k]!;
    const to = r.rewrite(w, at(k), label);
    if (to !== w) (argv ??= seg.argv.slice())[k] = to;
  }
  let redirects: Redirect[] | null = null;
  seg.redirects.forEach((x, k) => {
    if (x.dynamic || HEREDOC.has(x.op)) return;
    const to = r.rewrite(x.target, d, label, true);
    if (to !== x.target) (redirects ??= seg.redirects.slice())[k] = { ...x, target: to };
  });
  let assignments: SimpleCommand['assignments'] | null = null;
  seg.assignments.forEach((a, k) => {
    if (a.dynamic) return;
    const to = r.rewrite(a.value, d, label, true);
    if (to !== a.value) (assignments ??= seg.assignments.slice())[k] = { ...a, value: to };
  });
  if (argv === null && redirects === null && assignments === null) return seg;
  return {
    ...seg,
    argv: argv ?? seg.argv,
    redirects: redirects ?? seg.redirects,
    assignments: assignments ?? seg.assignments,
  };
}
