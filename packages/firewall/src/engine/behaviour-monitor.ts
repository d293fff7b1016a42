// Layers 2 and 5 keep per-session memory: the behaviour layer counts the same call (tool +
// canonical args) and, for callers that are rate-held (agents), the same call shape (the tool, or
// a shell tool's programs) within a sliding window; the metacognitive breaker counts a run of
// low-confidence calls. Bounded: sessions, fingerprints and shapes per session are capped.

export { callFingerprint } from './call-key.js';
import type { Level } from './evaluation.js';

/** Thresholds of the behaviour and metacognitive layers. */
export interface BehaviourOptions {
  /** Sliding window, ms (default 60 s). */
  window_ms: number;
  /** The same call more than this many times in the window → APPROVE (default 5). */
  max_repeats: number;
  /** … when the call's confidence is low (default 3). */
  max_repeats_low_confidence: number;
  /**
   * The same call shape (the tool; for a shell tool, the same programs) more than this many times
   * in the window → CONFIRM (default 20). Counted only for callers of a kind in `volume_kinds`.
   */
  max_tool_calls: number;
  /**
   * Principal kinds whose calls count toward `max_tool_calls` (default agents and modules): a
   * person's or a service's volume of distinct calls is not a loop. The repeat limit
   * (`max_repeats`) counts every caller.
   */
  volume_kinds: readonly string[];
  /** Confidence below this is low (default 0.5). */
  low_confidence: number;
  /** A run of this many low-confidence calls in a session → at least CONFIRM (default 3). */
  low_confidence_run: number;
  /** Sessions remembered (least recently used dropped; default 10,000). */
  max_sessions: number;
  /** Distinct calls remembered per session (default 1,000). */
  max_fingerprints: number;
}

/** Defaults of {@link BehaviourOptions}. */
export const BEHAVIOUR_DEFAULTS: Readonly<BehaviourOptions> = Object.freeze({
  window_ms: 60_000,
  max_repeats: 5,
  max_repeats_low_confidence: 3,
  max_tool_calls: 20,
  volume_kinds: Object.freeze(['agent', 'module']),
  low_confidence: 0.5,
  low_confidence_run: 3,
  max_sessions: 10_000,
  max_fingerprints: 1_000,
});

/** A layer's finding. */
export interface LayerFinding {
  level: Level;
  id: string;
  reason: string;
}

/**
 * Time stamps of one kind of call, oldest first, in a ring that grows (doubling) up to the number
 * of stamps kept: no allocation per call once it is grown, exact counts at any threshold.
 */
class Stamps {
  #t: number[] = [0, 0];
  #head = 0;
  #size = 0;

  /** Drops stamps at or before `cutoff`; returns how many remain. */
  prune(cutoff: number): number {
    const t = this.#t;
    while (this.#size > 0 && t[this.#head]! <= cutoff) {
      this.#head = this.#head + 1 === t.length ? 0 : this.#head + 1;
      this.#size--;
    }
    return this.#size;
  }

  /** Adds `now`, keeping at most `keep` stamps; returns how many remain. */
  push(now: number, keep: number): number {
    let t = this.#t;
    if (this.#size >= keep) {
      // full: the oldest goes
      this.#head = this.#head + 1 === t.length ? 0 : this.#head + 1;
      this.#size--;
    } else if (this.#size === t.length) {
      const grown = new Array<number>(Math.min(keep, t.length * 2)).fill(0);
      for (let i = 0; i < this.#size; i++) grown[i] = t[(this.#head + i) % t.length]!;
      this.#t = t = grown;
      this.#head = 0;
    }
    let at = this.#head + this.#size;
    if (at >= t.length) at -= t.length;
    t[at] = now;
    return ++this.#size;
  }
}

/** Call shapes remembered per tool and session besides the tool itself (oldest dropped). */
const MAX_SHAPES_PER_TOOL = 256;

/** One tool's memory in a session: its calls, each distinct call's, and each narrower shape's. */
interface ToolMemory {
  stamps: Stamps;
  /** Stamps per call shape other than the bare tool (a shell tool's programs), made on first use. */
  shapes: Map<string, Stamps> | undefined;
  calls: Map<string, Stamps>;
  /**
   * The keys of `calls` in the order they were added, from `first` on (the oldest is the one
   * {@link BehaviourMonitor} forgets first): a map's first key is found by skipping every entry
   * deleted before it, up to a thousand of them between the map's own compactions.
   */
  order: string[];
  first: number;
  /** The fingerprint of the tool's last call, and its stamps (no map lookup when it comes again). */
  lastFingerprint: string | undefined;
  lastCalls: Stamps | undefined;
}

interface SessionState {
  tools: Map<string, ToolMemory>;
  /** Distinct calls remembered over all tools (bounded by `max_fingerprints`). */
  fingerprints: number;
  lowRun: number;
  /** The tool of the session's last call, and its memory (no map lookup when it is called again). */
  lastTool: string | undefined;
  lastMemory: ToolMemory | undefined;
}

const NO_FINDINGS: readonly LayerFinding[] = Object.freeze([]);

/** Count within the window including this call (recorded unless `record` is false). */
function count(stamps: Stamps, now: number, window: number, keep: number, record: boolean): number {
  const n = stamps.prune(now - window);
  return record ? stamps.push(now, keep) : n + 1;
}

/** The stamps of one shape of a tool's calls (made when recording; the oldest shape goes past the bound). */
function shapeStamps(tool: ToolMemory, shape: string, create: boolean): Stamps | undefined {
  let shapes = tool.shapes;
  let st = shapes?.get(shape);
  if (st !== undefined || !create) return st;
  shapes ??= tool.shapes = new Map();
  if (shapes.size >= MAX_SHAPES_PER_TOOL) shapes.delete(shapes.keys().next().value as string);
  st = new Stamps();
  shapes.set(shape, st);
  return st;
}

/** Per-session memory of the behaviour layer and the metacognitive breaker. */
export class BehaviourMonitor {
  readonly options: Readonly<BehaviourOptions>;
  readonly #sessions = new Map<string, SessionState>();
  /** The most recently used session key: using it again needs no reordering. */
  #last: string | undefined;
  #lastState: SessionState | undefined;

  /** Stamps kept per call and per tool: enough to count past both limits. */
  readonly #keep: number;
  readonly #volumeKinds: ReadonlySet<string>;

  constructor(options: Partial<BehaviourOptions> = {}) {
    this.options = Object.freeze({ ...BEHAVIOUR_DEFAULTS, ...options });
    this.#keep = Math.max(this.options.max_repeats, this.options.max_tool_calls) + 1;
    this.#volumeKinds = new Set(this.options.volume_kinds);
  }

  /** True when `confidence` counts as low (NaN or out of [0, 1] counts as low: fail safe). */
  isLow(confidence: number | undefined): boolean {
    if (confidence === undefined) return false;
    return !(confidence >= 0 && confidence <= 1) || confidence < this.options.low_confidence;
  }

  /**
   * Layer 2: counts this call in its session's window (recording it unless `record` is false)
   * and returns the findings: the same call repeated → APPROVE, the same call shape too often →
   * CONFIRM. `fingerprint` names the call's arguments within the tool (see argsFingerprint in
   * call-key.ts). `shape` is the call's shape for the volume count: undefined counts the tool as a
   * whole, a string a narrower shape of it (`git,ls` for a shell command), null not at all (a
   * caller that is not rate-held, see {@link BehaviourMonitor.countsVolume}).
   */
  behaviour(
    session: string,
    tool_id: string,
    fingerprint: string,
    confidence: number | undefined,
    now: number,
    record: boolean,
    shape?: string | null,
  ): readonly LayerFinding[] {
    const o = this.options;
    const s = this.#session(session, record);
    const low = this.isLow(confidence);
    const maxRepeats = low ? Math.min(o.max_repeats, o.max_repeats_low_confidence) : o.max_repeats;
    const keep = this.#keep;
    let out: LayerFinding[] | undefined;
    let tool = s === undefined ? undefined : s.lastTool === tool_id ? s.lastMemory : s.tools.get(tool_id);
    if (tool === undefined && s !== undefined && record) {
      tool = {
        stamps: new Stamps(),
        shapes: undefined,
        calls: new Map(),
        order: [],
        first: 0,
        lastFingerprint: undefined,
        lastCalls: undefined,
      };
      s.tools.set(tool_id, tool);
    }
    if (s !== undefined && tool !== undefined && s.lastMemory !== tool) {
      s.lastTool = tool_id;
      s.lastMemory = tool;
    }
    let calls =
      tool === undefined
        ? undefined
        : tool.lastFingerprint === fingerprint
          ? tool.lastCalls
          : tool.calls.get(fingerprint);
    if (calls === undefined && s !== undefined && tool !== undefined && record) {
      if (s.fingerprints >= o.max_fingerprints) this.#evictOne(s, tool);
      calls = new Stamps();
      tool.calls.set(fingerprint, calls);
      tool.order.push(fingerprint);
      s.fingerprints++;
    }
    if (tool !== undefined && calls !== undefined && tool.lastCalls !== calls) {
      tool.lastFingerprint = fingerprint;
      tool.lastCalls = calls;
    }
    const n = calls === undefined ? 1 : count(calls, now, o.window_ms, keep, record);
    if (n > maxRepeats)
      (out ??= []).push({
        level: 'APPROVE',
        id: 'behaviour.loop',
        reason: `the same call (${tool_id}, same arguments) ${n} times within ${o.window_ms / 1000} s (limit ${maxRepeats}${low ? ', tightened for low confidence' : ''})`,
      });
    if (shape === null) return out ?? NO_FINDINGS;
    const stamps =
      tool === undefined ? undefined : shape === undefined ? tool.stamps : shapeStamps(tool, shape, record);
    const t = stamps === undefined ? 1 : count(stamps, now, o.window_ms, keep, record);
    if (t > o.max_tool_calls)
      (out ??= []).push({
        level: 'CONFIRM',
        id: 'behaviour.tool_repeat',
        reason: `${tool_id}${shape === undefined ? '' : ` (${shape})`} called ${t} times within ${o.window_ms / 1000} s (limit ${o.max_tool_calls})`,
      });
    return out ?? NO_FINDINGS;
  }

  /** Whether a caller of this principal kind counts toward the volume limit (`volume_kinds`). */
  countsVolume(kind: string): boolean {
    return this.#volumeKinds.has(kind);
  }

  /**
   * Layer 5: a single low-confidence call → at least NOTIFY; a run of `low_confidence_run` or more
   * consecutive low-confidence calls → at least CONFIRM. A confident call ends the run; a call
   * without a confidence leaves it as it is.
   */
  metacognitive(session: string, confidence: number | undefined, record: boolean): LayerFinding | null {
    if (confidence === undefined) return null;
    const s = this.#session(session, record);
    const low = this.isLow(confidence);
    if (!low) {
      if (s !== undefined && record) s.lowRun = 0;
      return null;
    }
    const run = (s?.lowRun ?? 0) + 1;
    if (s !== undefined && record) s.lowRun = run;
    const o = this.options;
    if (run >= o.low_confidence_run)
      return {
        level: 'CONFIRM',
        id: 'metacognitive.low_confidence_run',
        reason: `${run} low-confidence calls in a row in this session (confidence ${confidence} < ${o.low_confidence}): a person must look`,
      };
    return {
      level: 'NOTIFY',
      id: 'metacognitive.low_confidence',
      reason: `low self-reported confidence ${confidence} (< ${o.low_confidence})`,
    };
  }

  /** Forgets a session (its end, or a human reset). */
  forget(session: string): void {
    this.#sessions.delete(session);
    if (this.#last === session) {
      this.#last = undefined;
      this.#lastState = undefined;
    }
  }

  /** Forgets the oldest remembered call of `tool` in the session (or of another tool when it has none). */
  #evictOne(s: SessionState, tool: ToolMemory): void {
    let from = tool.calls.size > 0 ? tool : undefined;
    if (from === undefined)
      for (const t of s.tools.values())
        if (t.calls.size > 0) {
          from = t;
          break;
        }
    if (from === undefined) return;
    const evicted = from.order[from.first++] as string;
    if (from.first >= 1024 && from.first * 2 >= from.order.length) {
      from.order = from.order.slice(from.first);
      from.first = 0;
    }
    from.calls.delete(evicted);
    s.fingerprints--;
    if (from.lastFingerprint === evicted) {
      from.lastFingerprint = undefined;
      from.lastCalls = undefined;
    }
  }

  #session(key: string, create: boolean): SessionState | undefined {
    if (key === this.#last && this.#lastState !== undefined) return this.#lastState;
    let s = this.#sessions.get(key);
    if (s !== undefined) {
      if (create && key !== this.#last && this.#sessions.size > 1) {
        this.#sessions.delete(key);
        this.#sessions.set(key, s);
        this.#last = key;
        this.#lastState = s;
      }
      return s;
    }
    if (!create) return undefined;
    if (this.#sessions.size >= this.options.max_sessions)
      this.#sessions.delete(this.#sessions.keys().next().value as string);
    s = { tools: new Map(), fingerprints: 0, lowRun: 0, lastTool: undefined, lastMemory: undefined };
    this.#sessions.set(key, s);
    this.#last = key;
    this.#lastState = s;
    return s;
  }
}
