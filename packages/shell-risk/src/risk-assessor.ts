// The RiskAssessor: pure classification of shell commands (`safe | moderate | dangerous`, with
// reasons and the canonical model). The bash grammar (WASM) is loaded once by `create()`;
// `assess()` and `parse()` are synchronous; the only I/O of `assess()` is looking up path words on
// disk for symbolic links (real-paths.ts, bounded per command). Assessments are cached by command
// text and starting directory (bounded LRU) with those lookups' answers, and reused only while the
// disk still answers the same; a command made only of plain words whose program is on the safe
// list takes a fast path without a parse.

import {
  type CommandModel,
  emptyFlags,
  type PipelinePosition,
  type RiskAssessment,
  type SimpleCommand,
} from './command-model.js';
import { readWords } from './facts/read-words.js';
import { type Confinement, confinementOf } from './facts/workspace-confinement.js';
import { daemonAddressIn } from './knowledge/finger/daemon-address.js';
import { fingerPlaceOf } from './knowledge/finger/finger-home-words.js';
import { type DaemonFacts, FingerSelf, type FingerSelfOptions } from './knowledge/finger/finger-self.js';
import { forbiddenFindings } from './knowledge/finger/forbidden.js';
import { type AssessContext, pathView, type SegmentPlace } from './knowledge/places/cwd-paths.js';
import type { KnownHomes } from './knowledge/places/known-homes.js';
import { pathParts } from './knowledge/places/path-parts.js';
import { knownHomes, redFlagPaths } from './knowledge/places/paths.js';
import { type Probe, RealPaths } from './knowledge/places/real-paths.js';
import { isSafeCommand } from './knowledge/programs/safe-commands.js';
import { ModelBuilder } from './parse/model-builder.js';
import { shReadings } from './parse/sh-readings.js';
import { BashGrammar } from './parse/syntax-tree.js';
import { findInvisible, mayHaveInvisible } from './parse/unicode.js';
import { classify, type ClassifyOptions } from './rules/classify.js';
import { classifySegment, Findings } from './rules/segment-rules.js';

/** Options of {@link RiskAssessor.create}. */
export interface RiskAssessorOptions {
  /** path of tree-sitter-bash.wasm (default: the one shipped in the tree-sitter-bash package) */
  wasmPath?: string;
  /** assessments kept per input kind (text, argv); default 4096 */
  cacheSize?: number;
  /**
   * finger's own home when it is not `~/.finger`: its tokens, `config/` and `state/` are
   * credentials, and those, `audit/`, `backups/` and `events/` sensitive to write, for this
   * assessor (known-homes.ts); every path under it (and `~/.finger`) is a forbidden finding of
   * this assessor (forbidden.ts).
   */
  finger_home?: string;
  /**
   * the user's home directory when it is not `/home/<u>`, `/Users/<u>` or `/root`: paths under it
   * read as `~/…` (its `.ssh` is a credential store), and `~` stands for it where path words are
   * looked up on disk, for this assessor (known-homes.ts).
   */
  home_dir?: string;
  /**
   * Files outside finger's home no agent may touch, like its home (forbidden): the admin token
   * file when it is kept elsewhere (`FINGER_TOKEN_FILE`).
   */
  guarded_paths?: readonly string[];
  /**
   * The workspace roots: one the operator put inside finger's home is the only part of the home
   * that is not forbidden (every other path under it is).
   */
  workspace_roots?: readonly string[];
  /** finger's daemon (ports, pid, URLs): a command that reaches or signals it is forbidden (self-governance.ts) */
  daemon?: DaemonFacts;
  /**
   * Whether an OS sandbox contains every call (a PID namespace that dies with it). Default true;
   * false: a detaching command (`setsid`, `nohup`, `&`, `at`…) is `dangerous` (detaching.ts).
   */
  contained?: boolean;
}

/** No directory: a tool argument's path is judged as written. */
const NO_DIRECTORIES = Object.freeze({ list: Object.freeze([]), unknown: false });

/** Counters since creation (for the bench and diagnostics). */
export interface RiskAssessorStats {
  fast_path: number;
  cache_hits: number;
  parses: number;
  cache_size: number;
}

/** Commands longer than this are at least CONFIRM (moderate). */
export const LONG_COMMAND = 10_000;
/**
 * Commands longer than this are not parsed at all (unparseable, so at least CONFIRM): a parse
 * costs roughly linear time, ≈ 100 ms for 32k characters on a loaded 2-core machine, and runs on
 * the event loop.
 */
export const MAX_PARSE_LENGTH = 32_768;
/** Longer keys are not cached (bounds the cache's memory). */
const MAX_CACHED_KEY = 8_192;

/** One model of two readings of a command: the segments, notes and flags of both. */
function bothReadings(a: CommandModel, b: CommandModel): CommandModel {
  const flags = { ...a.flags };
  for (const k of Object.keys(flags) as (keyof CommandModel['flags'])[]) flags[k] = flags[k] || b.flags[k];
  const m: CommandModel = {
    segments: frozen([...a.segments, ...b.segments]),
    flags: frozen(flags),
    notes: frozen([...a.notes, ...b.notes]),
  };
  const unparseable = a.unparseable ?? b.unparseable;
  if (unparseable !== undefined) m.unparseable = unparseable;
  const loops = [...(a.loop_variables ?? []), ...(b.loop_variables ?? [])];
  if (loops.length > 0) m.loop_variables = frozen(loops);
  const fns = [...(a.functions ?? []), ...(b.functions ?? [])];
  if (fns.length > 0) m.functions = frozen(fns);
  return frozen(m);
}

/** Order of the levels, to keep the most severe of several readings. */
const SEVERITY: Readonly<Record<RiskAssessment['level'], number>> = { safe: 0, moderate: 1, dangerous: 2 };

/** Plain words only: no quotes, `$`, backticks, globs, redirections, separators or escapes. */
const PLAIN = /^[A-Za-z0-9_./=:@%+,-]+(?: +[A-Za-z0-9_./=:@%+,-]+)*$/;

/** Shared frozen empties of fast-path models (never mutated: models are frozen). */
const EMPTY = Object.freeze([]) as unknown as never[];
const NO_FLAGS = frozen(emptyFlags());

/** Object.freeze keeping the mutable type (models are frozen once built and shared from the cache). */
function frozen<T>(x: T): T {
  return Object.freeze(x) as T;
}

/** How a safe segment is named in the reason ("git status", "ls"). */
function safeName(seg: SimpleCommand): string {
  return seg.program === 'git'
    ? `git ${seg.argv.find((a, i) => i > 0 && !a.startsWith('-')) ?? ''}`.trim()
    : seg.program;
}

class Lru<V> {
  readonly #max: number;
  readonly #map = new Map<string, V>();
  constructor(max: number) {
    this.#max = max;
  }
  get(key: string): V | undefined {
    const v = this.#map.get(key);
    if (v !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, v);
    }
    return v;
  }
  set(key: string, value: V): void {
    if (this.#max <= 0 || key.length > MAX_CACHED_KEY) return;
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#max) this.#map.delete(this.#map.keys().next().value as string);
  }
  get size(): number {
    return this.#map.size;
  }
  clear(): void {
    this.#map.clear();
  }
}

function freezeModel(m: CommandModel): void {
  for (const s of m.segments) {
    Object.freeze(s.argv);
    Object.freeze(s.dynamic);
    for (const a of s.assignments) Object.freeze(a);
    Object.freeze(s.assignments);
    for (const r of s.redirects) Object.freeze(r);
    Object.freeze(s.redirects);
    Object.freeze(s.via);
    for (let p: PipelinePosition | undefined = s.pipeline ?? undefined; p !== undefined; p = p.outer) Object.freeze(p);
    Object.freeze(s);
  }
  Object.freeze(m.segments);
  Object.freeze(m.flags);
  Object.freeze(m.notes);
  if (m.loop_variables !== undefined) {
    for (const v of m.loop_variables) {
      Object.freeze(v.words);
      Object.freeze(v);
    }
    Object.freeze(m.loop_variables);
  }
  if (m.functions !== undefined) {
    for (const f of m.functions) Object.freeze(f);
    Object.freeze(m.functions);
  }
  Object.freeze(m);
}

/** A cached assessment, with the symlink lookups it rests on. */
interface Cached {
  a: RiskAssessment;
  probes: readonly Probe[];
}

function finish(
  model: CommandModel,
  context: AssessContext,
  real: RealPaths,
  options: ClassifyOptions,
): RiskAssessment {
  const { level, reasons, forbidden, reads } = classify(model, context, real, options);
  const a: RiskAssessment = { level, reasons, model };
  if (model.unparseable !== undefined) a.unparseable = true;
  if (forbidden.length > 0) a.forbidden = frozen(forbidden);
  if (reads.length > 0) a.reads = frozen(reads);
  freezeModel(model);
  Object.freeze(reasons);
  return Object.freeze(a);
}

/** `a`, marked when it rests on path words looked up on disk (it holds only while they stay). */
function onDisk(a: RiskAssessment, real: RealPaths): RiskAssessment {
  return real.probes.length === 0 ? a : frozen<RiskAssessment>({ ...a, on_disk: true });
}

/**
 * Classifies shell commands for the firewall's default policy (`safe` → AUTO, `moderate` →
 * CONFIRM, `dangerous` → APPROVE, unparseable → at least CONFIRM). Create one per process with
 * {@link RiskAssessor.create}; returned assessments are frozen and may be shared.
 */
export class RiskAssessor {
  readonly #grammar: BashGrammar;
  readonly #text: Lru<Cached>;
  readonly #argv: Lru<Cached>;
  #self: FingerSelf;
  readonly #selfOptions: FingerSelfOptions;
  readonly #contained: boolean;
  /** The homes this assessor's options name, passed to every path rule it runs (known-homes.ts). */
  readonly #homes: KnownHomes;
  #fast = 0;
  #hits = 0;
  #parses = 0;

  private constructor(
    grammar: BashGrammar,
    cacheSize: number,
    self: FingerSelfOptions,
    contained: boolean,
    homes: KnownHomes,
  ) {
    this.#grammar = grammar;
    this.#homes = homes;
    this.#selfOptions = self;
    this.#self = new FingerSelf(self);
    this.#contained = contained;
    this.#text = new Lru(cacheSize);
    this.#argv = new Lru(cacheSize);
  }

  /** Loads the bash grammar (the only asynchronous, file-reading step). */
  static async create(options: RiskAssessorOptions = {}): Promise<RiskAssessor> {
    const grammar = await BashGrammar.load(options.wasmPath);
    const homes = knownHomes(options);
    return new RiskAssessor(grammar, options.cacheSize ?? 4096, options, options.contained !== false, homes);
  }

  /**
   * What an assessment of this assessor writes, needs and destroys (workspace-confinement.ts),
   * judged with this assessor's homes (a credential under its `home_dir` is one).
   */
  confinementOf(assessment: RiskAssessment): Confinement {
    return confinementOf(assessment, this.#homes);
  }

  /**
   * Assesses a shell command line (string) or an exec'd argv (array: no shell parsing of the
   * array itself, but `sh -c` and other wrappers inside it recurse). `context.cwd`: the
   * directory it starts in, against which relative paths are judged (`cat ../token`); without
   * it they are judged as written.
   */
  assess(command: string | readonly string[], context: AssessContext = {}): RiskAssessment {
    const where = context.cwd === undefined ? '' : context.cwd === null ? '\0?\0' : `\0${context.cwd}\0`;
    // the starting directory is a real path (the sandbox resolved it): no lookups for it
    const trusted = typeof context.cwd === 'string' ? context.cwd.replace(/(?<=.)\/+$/, '') : undefined;
    const real = new RealPaths(this.#homes, trusted);
    if (typeof command !== 'string') {
      const key = where + JSON.stringify(command);
      const hit = this.#argv.get(key);
      if (hit !== undefined && RealPaths.unchanged(hit.probes, this.#homes, trusted)) {
        this.#hits++;
        return hit.a;
      }
      const a = onDisk(finish(this.#build(command), context, real, this.#options(command.join(' '))), real);
      this.#argv.set(key, { a, probes: real.probes });
      return a;
    }
    const key = where + command;
    const hit = this.#text.get(key);
    if (hit !== undefined && RealPaths.unchanged(hit.probes, this.#homes, trusted)) {
      this.#hits++;
      return hit.a;
    }
    const path = this.#fastPath(command, context, real);
    const fast = path === null ? null : onDisk(path, real);
    if (fast !== null) {
      this.#fast++;
      this.#text.set(key, { a: fast, probes: real.probes });
      return fast;
    }
    const options = this.#options(command);
    const a = onDisk(
      this.#mostSevere(command, finish(this.#build(command), context, real, options), context, real, options),
      real,
    );
    this.#text.set(key, { a, probes: real.probes });
    return a;
  }

  /**
   * `a`, or the assessment of another reading of `command` (sh-readings.ts: how /bin/sh reads a
   * construct bash's grammar reads otherwise) when that one is more severe — with a first reason
   * saying so, and both readings' segments in its model (deny patterns see what either runs).
   */
  #mostSevere(
    command: string,
    a: RiskAssessment,
    context: AssessContext,
    real: RealPaths,
    options: ClassifyOptions,
  ): RiskAssessment {
    let worst = a;
    const forbidden = new Set(a.forbidden);
    const reads = new Set(a.reads);
    for (const reading of shReadings(command)) {
      if (reading.length > MAX_PARSE_LENGTH) continue;
      const b = finish(this.#build(reading), context, real, options);
      for (const r of b.forbidden ?? []) forbidden.add(r);
      for (const r of b.reads ?? []) reads.add(r);
      if (SEVERITY[b.level] > SEVERITY[worst.level]) worst = b;
    }
    if (worst === a && forbidden.size === (a.forbidden?.length ?? 0) && reads.size === (a.reads?.length ?? 0)) return a;
    if (worst === a) {
      const out: RiskAssessment = { ...a };
      if (forbidden.size > 0) out.forbidden = frozen([...forbidden]);
      if (reads.size > 0) out.reads = frozen([...reads]);
      return frozen(out);
    }
    // the primary reason (primary-reason.ts) stays first; the next says which reading found it
    const [primary, ...rest] = worst.reasons;
    const reasons = frozen([
      ...(primary === undefined ? [] : [primary]),
      "the command reads differently to /bin/sh than to bash (ANSI-C $'…' quoting, &>, or a here-document delimiter quoted in part): judged as the shell that runs it may read it",
      ...rest,
    ]);
    const out: RiskAssessment = { level: worst.level, reasons, model: bothReadings(a.model, worst.model) };
    if (worst.unparseable === true) out.unparseable = true;
    if (forbidden.size > 0) out.forbidden = frozen([...forbidden]);
    if (reads.size > 0) out.reads = frozen([...reads]);
    return frozen(out);
  }

  /**
   * Tells the assessor where finger's daemon listens once it does (a port 0 in the config is
   * only known then) and its pid: requests to it and signals to it are forbidden from now on.
   * Every cached assessment is dropped.
   */
  setDaemon(daemon: DaemonFacts): void {
    this.#self = new FingerSelf({ ...this.#selfOptions, daemon });
    this.#text.clear();
    this.#argv.clear();
  }

  /**
   * The forbidden finding for a tool argument that is no command (`web.fetch`'s `url`, an MCP
   * tool's `endpoint` or `uri`): it names finger's own daemon (daemon-address.ts), or an absolute,
   * `~`, `$FINGER_HOME` or `file://` path in finger's home or a guarded file, also through a
   * symbolic link; null when it does neither.
   */
  forbiddenIn(value: string): string | null {
    // every tool argument string of every call comes here: the reason's text is made only for a hit
    const shown = (): string => JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}…` : value);
    const addr = daemonAddressIn(value, this.#self);
    if (addr !== null) return `${shown()} names finger's own daemon (${addr})`;
    // a part is judged only when it starts with / ~ or $, and every part is a piece of the value
    if (!/[/~$]/.test(value)) return null;
    for (const part of pathParts(value)) {
      if (!/^[/~$]/.test(part)) continue;
      const hit = fingerPlaceOf(part, NO_DIRECTORIES, new RealPaths(this.#homes), this.#self);
      if (hit !== null) return `${shown()} reaches finger's own files (${hit.place}: ${hit.to})`;
    }
    return null;
  }

  /** What classify needs of this assessor besides the command. */
  #options(raw: string): ClassifyOptions {
    return { self: this.#self, raw, contained: this.#contained };
  }

  /** The canonical command model (not cached; no classification). */
  parse(command: string | readonly string[]): CommandModel {
    return this.#build(command);
  }

  /** Counters since creation. */
  stats(): RiskAssessorStats {
    return {
      fast_path: this.#fast,
      cache_hits: this.#hits,
      parses: this.#parses,
      cache_size: this.#text.size + this.#argv.size,
    };
  }

  /** A command of plain words whose program is on the safe list: classified without a parse. */
  #fastPath(text: string, context: AssessContext, real: RealPaths): RiskAssessment | null {
    if (text.length > LONG_COMMAND || !PLAIN.test(text)) return null;
    const argv = text.split(/ +/);
    const program = argv[0] as string;
    if (program.includes('/') || program.includes('=') || !isSafeCommand(program, argv.slice(1), this.#homes))
      return null;
    if (redFlagPaths(text).length > 0) return null;
    const seg: SimpleCommand = {
      argv,
      program,
      path: program,
      name: program,
      dynamic: EMPTY,
      assignments: EMPTY,
      redirects: EMPTY,
      via: EMPTY,
      wrapper: false,
      local_binary: false,
      unknown_program: false,
      unknown_tail: false,
      pipeline: null,
    };
    const model = frozen<CommandModel>({ segments: frozen([seg]), flags: NO_FLAGS, notes: EMPTY });
    // a path that leads somewhere sensitive from the starting directory or through a symbolic link: the whole walk
    const view = pathView(model, context, real);
    if (view.model !== model) return null;
    const place: SegmentPlace = { dirs: view.directories(0), isBroad: view.isBroad };
    const f = new Findings(this.#homes);
    classifySegment(seg, 0, f, place);
    if (f.level !== 'safe') return null;
    // finger's own files or daemon: the whole walk, for the forbidden findings and their reasons
    const found = forbiddenFindings(model, text, view.directories, real, this.#self);
    if (found.files.length > 0 || found.governs.length > 0) return null;
    Object.freeze(argv);
    Object.freeze(seg);
    const a: RiskAssessment = { level: 'safe', reasons: frozen([`read-only: ${safeName(seg)}`]), model };
    const reads = readWords(model, view.directories);
    if (reads.length > 0) a.reads = frozen(reads);
    return frozen(a);
  }

  #build(command: string | readonly string[]): CommandModel {
    const b = new ModelBuilder(this.#grammar, this.#homes);
    const text = typeof command === 'string' ? command : command.join(' ');
    const invisible = mayHaveInvisible(text) ? findInvisible(text) : null;
    if (invisible !== null) {
      b.flags.invisible_unicode = true;
      b.redFlags.push(invisible);
    }
    b.redFlags.push(...redFlagPaths(text));
    if (text.length > LONG_COMMAND) b.flags.too_long = true;
    if (typeof command !== 'string') {
      this.#parses++;
      b.argv([...command], ModelBuilder.rootContext());
    } else if (command.length > MAX_PARSE_LENGTH) {
      b.unparseable = `longer than ${MAX_PARSE_LENGTH} characters; not parsed`;
    } else {
      this.#parses++;
      try {
        b.script(command, ModelBuilder.rootContext());
      } catch (e) {
        b.unparseable = `parser failure: ${e instanceof Error ? e.message : String(e)}`;
      }
    }
    return b.model();
  }
}
