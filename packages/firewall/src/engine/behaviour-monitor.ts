// Layers 2 and 5 keep per-session memory: the behaviour layer counts the same call (tool +
// canonical args) and the same tool within a sliding window; the metacognitive breaker counts a
// run of low-confidence calls. Bounded: sessions and fingerprints per session are capped.

import { canonicalJson, sha256Hex } from '../audit/canonical-json.js';
import type { Level } from './evaluation.js';

/** Thresholds of the behaviour and metacognitive layers. */
export interface BehaviourOptions {
  /** Sliding window, ms (default 60 s). */
  window_ms: number;
  /** The same call more than this many times in the window → APPROVE (default 5). */
  max_repeats: number;
  /** … when the call's confidence is low (default 3). */
  max_repeats_low_confidence: number;
  /** The same tool more than this many times in the window → CONFIRM (default 20). */
  max_tool_calls: number;
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

/** Time stamps of one kind of call, oldest first: a deque (amortised O(1) at any threshold). */
class Stamps {
  #t: number[] = [];
  #head = 0;

  /** Drops stamps at or before `cutoff`; returns how many remain. */
  prune(cutoff: number): number {
    const t = this.#t;
    while (this.#head < t.length && t[this.#head]! <= cutoff) this.#head++;
    if (this.#head > 32 && this.#head * 2 > t.length) {
      this.#t = t.slice(this.#head);
      this.#head = 0;
    }
    return this.#t.length - this.#head;
  }

  /** Adds `now`, keeping at most `keep` stamps; returns how many remain. */
  push(now: number, keep: number): number {
    this.#t.push(now);
    if (this.#t.length - this.#head > keep) this.#head++;
    return this.#t.length - this.#head;
  }
}

interface SessionState {
  calls: Map<string, Stamps>;
  tools: Map<string, Stamps>;
  lowRun: number;
}

const MAX_KEY = 512;

/**
 * A key for an object of scalars without the general canonical walk, or null when it holds
 * other values. Keys sorted; each value tagged by type. Not JSON: two different calls may share
 * a key only when their strings contain the separators, which can only make a loop look longer
 * (stricter), never hide one — identical arguments always give identical keys.
 */
function flatKey(args: unknown): string | null {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return null;
  const keys = Object.keys(args);
  if (keys.length > 16) return null;
  if (keys.length > 1) keys.sort();
  let out = '';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const v = (args as Record<string, unknown>)[k];
    switch (typeof v) {
      case 'undefined':
        continue;
      case 'string':
        out += `${k}\u0001s${v}\u0002`;
        break;
      case 'number':
      case 'boolean':
        out += `${k}\u0001${typeof v === 'number' ? 'n' : 'b'}${String(v)}\u0002`;
        break;
      default:
        if (v !== null) return null;
        out += `${k}\u0001z\u0002`;
    }
  }
  return out;
}

/** The fingerprint of a call: tool id and canonical args (hashed when long). */
export function callFingerprint(tool_id: string, args: unknown): string {
  let a = flatKey(args);
  if (a === null) {
    try {
      a = canonicalJson(args ?? null);
    } catch {
      a = String(args);
    }
  }
  const key = `${tool_id}\u0000${a}`;
  return key.length > MAX_KEY ? `${tool_id}\u0000#${sha256Hex(key)}` : key;
}

/** Count within the window including this call (recorded unless `record` is false). */
function count(stamps: Stamps, now: number, window: number, keep: number, record: boolean): number {
  const n = stamps.prune(now - window);
  return record ? stamps.push(now, keep) : n + 1;
}

/** Per-session memory of the behaviour layer and the metacognitive breaker. */
export class BehaviourMonitor {
  readonly options: Readonly<BehaviourOptions>;
  readonly #sessions = new Map<string, SessionState>();

  constructor(options: Partial<BehaviourOptions> = {}) {
    this.options = Object.freeze({ ...BEHAVIOUR_DEFAULTS, ...options });
  }

  /** True when `confidence` counts as low (NaN or out of [0, 1] counts as low: fail safe). */
  isLow(confidence: number | undefined): boolean {
    if (confidence === undefined) return false;
    return !(confidence >= 0 && confidence <= 1) || confidence < this.options.low_confidence;
  }

  /**
   * Layer 2: counts this call in its session's window (recording it unless `record` is false)
   * and returns the findings: the same call repeated → APPROVE, the same tool too often → CONFIRM.
   */
  behaviour(
    session: string,
    tool_id: string,
    fingerprint: string,
    confidence: number | undefined,
    now: number,
    record: boolean,
  ): LayerFinding[] {
    const o = this.options;
    const s = this.#session(session, record);
    const low = this.isLow(confidence);
    const maxRepeats = low ? Math.min(o.max_repeats, o.max_repeats_low_confidence) : o.max_repeats;
    const keep = Math.max(o.max_repeats, o.max_tool_calls) + 1;
    const out: LayerFinding[] = [];
    let calls = s?.calls.get(fingerprint);
    if (calls === undefined && s !== undefined && record) {
      if (s.calls.size >= o.max_fingerprints) s.calls.delete(s.calls.keys().next().value as string);
      calls = new Stamps();
      s.calls.set(fingerprint, calls);
    }
    const n = calls === undefined ? 1 : count(calls, now, o.window_ms, keep, record);
    if (n > maxRepeats)
      out.push({
        level: 'APPROVE',
        id: 'behaviour.loop',
        reason: `the same call (${tool_id}, same arguments) ${n} times within ${o.window_ms / 1000} s (limit ${maxRepeats}${low ? ', tightened for low confidence' : ''})`,
      });
    let tools = s?.tools.get(tool_id);
    if (tools === undefined && s !== undefined && record) {
      tools = new Stamps();
      s.tools.set(tool_id, tools);
    }
    const t = tools === undefined ? 1 : count(tools, now, o.window_ms, keep, record);
    if (t > o.max_tool_calls)
      out.push({
        level: 'CONFIRM',
        id: 'behaviour.tool_repeat',
        reason: `${tool_id} called ${t} times within ${o.window_ms / 1000} s (limit ${o.max_tool_calls})`,
      });
    return out;
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
  }

  #session(key: string, create: boolean): SessionState | undefined {
    let s = this.#sessions.get(key);
    if (s !== undefined) {
      if (create && this.#sessions.size > 1) {
        this.#sessions.delete(key);
        this.#sessions.set(key, s);
      }
      return s;
    }
    if (!create) return undefined;
    if (this.#sessions.size >= this.options.max_sessions)
      this.#sessions.delete(this.#sessions.keys().next().value as string);
    s = { calls: new Map(), tools: new Map(), lowRun: 0 };
    this.#sessions.set(key, s);
    return s;
  }
}
