// PerceptionBus (§3.8): records and counts what happened — approvals with their latency,
// rejections, confidence values, tool result classes, repeated calls. It makes no decision:
// `adapt()` turns its counts into suggestions and the daemon applies them. Memory is bounded:
// at most `max_tools` tools and `max_sessions` sessions (least recently touched dropped first)
// and fixed-size rings of recent samples.

import type { ShapeClass } from '../gate/call-shape.js';
import { type AdaptationConfig, adaptationConfig, avoidanceHint, explainHint } from './adaptation.js';

/** Where an approval came from. Only `human` ones build streaks and hesitations. */
export type ApprovalSource = 'human' | 'reviewer' | 'session';

/** Where a rejection came from. Only `human` ones build streaks. */
export type RejectionSource = 'human' | 'reviewer' | 'timeout' | 'abort' | 'policy';

/** How a tool call ended, as judged by whoever ran it. */
export type ResultClass = 'success' | 'failure' | 'partial' | 'irrelevant';

/** One approval. `seq` and `at` are stamped by the bus. */
export interface ApprovalSample {
  seq: number;
  at: number;
  tool_id: string;
  session_id: string;
  latency_ms: number;
  source: ApprovalSource;
  /** The person edited the arguments. */
  edited?: boolean;
  /** The shape classes of the call (call-shape.ts `shapeClasses`); absent: the streak is the tool's. */
  classes?: ShapeClass[];
}

/** One rejection. `seq` and `at` are stamped by the bus. */
export interface RejectionSample {
  seq: number;
  at: number;
  tool_id: string;
  session_id: string;
  source: RejectionSource;
  reason?: string;
  /** The shape classes of the call; absent: the streak is the tool's. */
  classes?: ShapeClass[];
  /** The person said it was not the agent's fault (`agent_fault: false`): counted, but no streak. */
  excused?: boolean;
  /**
   * The call was held at `APPROVE` for a `dangerous` assessment. Its rejection says nothing about
   * the ordinary use of its shape (`rm -rf x` about `rm a.txt`), and it was already asked at the
   * highest level: counted, no rejection streak.
   */
  dangerous?: boolean;
}

/** Streaks of one shape class (one program + subcommand, one directory, one host). */
export interface ClassPerception extends ShapeClass {
  approvals: number;
  rejections: number;
  consecutive_approvals: number;
  consecutive_rejections: number;
}

/** Counts of one tool. */
export interface ToolPerception {
  tool_id: string;
  approvals: number;
  rejections: number;
  /** Human approvals since the last human rejection. */
  consecutive_approvals: number;
  /** Human rejections since the last human approval. */
  consecutive_rejections: number;
  results: Record<ResultClass, number>;
  /** Calls that repeated the previous call of their session exactly (same fingerprint). */
  repeats: number;
  last_latency_ms: number | null;
  updated_seq: number;
}

/** Counts of one session. */
export interface SessionPerception {
  session_id: string;
  confidence: { count: number; last: number | null; min: number | null; mean: number | null };
  /** Fingerprint of the session's last call and how many times in a row it came. */
  last_fingerprint: string | null;
  run: number;
  repeats: number;
  hesitations: number;
}

/** A copy of everything counted; the input of `adapt()`. */
export interface PerceptionCounts {
  /** Seq of the last record. */
  seq: number;
  tools: Record<string, ToolPerception>;
  /** Streaks per shape class, by class key. */
  classes: Record<string, ClassPerception>;
  sessions: Record<string, SessionPerception>;
  /** The most recent approvals, oldest first (ring of `max_samples`). */
  recent_approvals: ApprovalSample[];
  recent_rejections: RejectionSample[];
}

/** A hint for an agent's context (`hintsFor`). */
export interface AgentHint {
  kind: 'avoid' | 'explain';
  tool: string;
  text: string;
}

/** Options of {@link PerceptionBus}. */
export interface PerceptionBusOptions extends Partial<AdaptationConfig> {
  clock?: { now(): number };
  /** Default 1000. */
  max_tools?: number;
  /** Default 1000. */
  max_sessions?: number;
  /** Recent approvals / rejections kept. Default 256. */
  max_samples?: number;
  /** Undelivered explain hints kept per session. Default 20. */
  max_hints?: number;
}

const RESULT_CLASSES: readonly ResultClass[] = ['success', 'failure', 'partial', 'irrelevant'];

/** Records and counts; see the file comment. */
export class PerceptionBus {
  private readonly clock: { now(): number };
  private readonly cfg: AdaptationConfig;
  private readonly maxTools: number;
  private readonly maxSessions: number;
  private readonly maxSamples: number;
  private readonly maxHints: number;
  private seq = 0;
  private readonly tools = new Map<string, ToolPerception>();
  private readonly classes = new Map<string, ClassPerception>();
  private readonly sessions = new Map<string, SessionPerception>();
  private readonly hints = new Map<string, AgentHint[]>();
  private readonly approvals: ApprovalSample[] = [];
  private readonly rejections: RejectionSample[] = [];
  private readonly confidenceSums = new Map<string, number>();

  constructor(options: PerceptionBusOptions = {}) {
    this.clock = options.clock ?? { now: () => Date.now() };
    this.cfg = adaptationConfig(options);
    this.maxTools = options.max_tools ?? 1000;
    this.maxSessions = options.max_sessions ?? 1000;
    this.maxSamples = options.max_samples ?? 256;
    this.maxHints = options.max_hints ?? 20;
  }

  /** An approval (HumanGate calls this). A slow human approval queues an explain hint for its session. */
  recordApproval(sample: Omit<ApprovalSample, 'seq' | 'at'>): void {
    const s: ApprovalSample = { ...sample, seq: ++this.seq, at: this.clock.now() };
    const t = this.tool(s.tool_id);
    t.approvals++;
    t.last_latency_ms = s.latency_ms;
    for (const c of this.classesOf(s.classes)) {
      c.approvals++;
      if (s.source === 'human') {
        c.consecutive_approvals++;
        c.consecutive_rejections = 0;
      }
    }
    if (s.source === 'human') {
      if (s.classes === undefined) {
        t.consecutive_approvals++;
        t.consecutive_rejections = 0;
      }
      if (s.latency_ms > this.cfg.hesitation_ms) {
        this.session(s.session_id).hesitations++;
        this.pushHint(s.session_id, { kind: 'explain', tool: s.tool_id, text: explainHint(s.tool_id, s.latency_ms) });
      }
    }
    push(this.approvals, s, this.maxSamples);
  }

  /** A rejection (HumanGate calls this). */
  recordRejection(sample: Omit<RejectionSample, 'seq' | 'at'>): void {
    const s: RejectionSample = { ...sample, seq: ++this.seq, at: this.clock.now() };
    const t = this.tool(s.tool_id);
    t.rejections++;
    const human = s.source === 'human' && s.excused !== true;
    // a dangerous call's rejection still breaks an approval streak (no revert), but builds no rejection streak
    const streak = human && s.dangerous !== true;
    for (const c of this.classesOf(s.classes)) {
      c.rejections++;
      if (human) c.consecutive_approvals = 0;
      if (streak) c.consecutive_rejections++;
    }
    // a call with shape classes counts for them only (an empty list: for nothing), never the whole tool
    if (human && s.classes === undefined) {
      t.consecutive_approvals = 0;
      if (streak) t.consecutive_rejections++;
    }
    push(this.rejections, s, this.maxSamples);
  }

  /** A model's self-reported confidence (0..1) for a decision of `session_id`. */
  recordConfidence(session_id: string, value: number): void {
    if (!Number.isFinite(value)) return;
    this.seq++;
    const c = this.session(session_id).confidence;
    const sum = (this.confidenceSums.get(session_id) ?? 0) + value;
    this.confidenceSums.set(session_id, sum);
    c.count++;
    c.last = value;
    c.min = c.min === null ? value : Math.min(c.min, value);
    c.mean = sum / c.count;
  }

  /** How a call of `tool_id` ended. */
  recordResult(tool_id: string, cls: ResultClass): void {
    if (!RESULT_CLASSES.includes(cls)) return;
    this.seq++;
    this.tool(tool_id).results[cls]++;
  }

  /** A call (tool + canonical-args fingerprint) of `session_id`; counts exact repeats. */
  recordCall(session_id: string, tool_id: string, fingerprint: string): void {
    this.seq++;
    const s = this.session(session_id);
    if (s.last_fingerprint === fingerprint) {
      s.run++;
      s.repeats++;
      this.tool(tool_id).repeats++;
    } else {
      s.last_fingerprint = fingerprint;
      s.run = 1;
    }
  }

  /** A deep copy of the counts (input of `adapt()`). */
  snapshot(): PerceptionCounts {
    const tools: Record<string, ToolPerception> = {};
    for (const [id, t] of this.tools) tools[id] = { ...t, results: { ...t.results } };
    const sessions: Record<string, SessionPerception> = {};
    for (const [id, s] of this.sessions) sessions[id] = { ...s, confidence: { ...s.confidence } };
    const classes: Record<string, ClassPerception> = {};
    for (const [k, c] of this.classes) classes[k] = structuredClone(c);
    return {
      seq: this.seq,
      tools,
      classes,
      sessions,
      recent_approvals: this.approvals.map((a) => ({ ...a })),
      recent_rejections: this.rejections.map((r) => ({ ...r })),
    };
  }

  /** Counts of one tool, or undefined when never seen (or dropped). */
  toolCounts(tool_id: string): ToolPerception | undefined {
    const t = this.tools.get(tool_id);
    return t ? { ...t, results: { ...t.results } } : undefined;
  }

  /**
   * Hints for an agent's context: an `avoid` hint for every tool the user rejected
   * `rejections` times in a row (kept until a human approves it again), then the session's
   * undelivered `explain` hints (delivered once: this call consumes them).
   */
  hintsFor(session_id: string): AgentHint[] {
    const out: AgentHint[] = [];
    for (const t of [...this.tools.values()].sort((a, b) => (a.tool_id < b.tool_id ? -1 : 1))) {
      if (t.consecutive_rejections >= this.cfg.rejections) {
        out.push({ kind: 'avoid', tool: t.tool_id, text: avoidanceHint(t.tool_id, t.consecutive_rejections) });
      }
    }
    for (const c of [...this.classes.values()].sort((a, b) => (a.key < b.key ? -1 : 1))) {
      if (c.consecutive_rejections >= this.cfg.rejections) {
        out.push({ kind: 'avoid', tool: c.tool, text: avoidanceHint(c.label, c.consecutive_rejections) });
      }
    }
    const pending = this.hints.get(session_id);
    if (pending) {
      out.push(...pending);
      this.hints.delete(session_id);
    }
    return out;
  }

  /** Forgets a session (its confidence, repeats and undelivered hints). */
  forgetSession(session_id: string): void {
    this.sessions.delete(session_id);
    this.hints.delete(session_id);
    this.confidenceSums.delete(session_id);
  }

  /** Sizes, for /metrics and tests of the bounds. */
  stats(): { seq: number; tools: number; sessions: number; approvals: number; rejections: number } {
    return {
      seq: this.seq,
      tools: this.tools.size,
      sessions: this.sessions.size,
      approvals: this.approvals.length,
      rejections: this.rejections.length,
    };
  }

  private tool(tool_id: string): ToolPerception {
    let t = this.tools.get(tool_id);
    if (t) this.tools.delete(tool_id);
    else {
      t = {
        tool_id,
        approvals: 0,
        rejections: 0,
        consecutive_approvals: 0,
        consecutive_rejections: 0,
        results: { success: 0, failure: 0, partial: 0, irrelevant: 0 },
        repeats: 0,
        last_latency_ms: null,
        updated_seq: 0,
      };
      evictOldest(this.tools, this.maxTools - 1);
    }
    t.updated_seq = this.seq;
    this.tools.set(tool_id, t); // re-inserted: Map order = least recently touched first
    return t;
  }

  /** The counters of the classes (made on first sight; the least recently touched dropped past `max_tools`). */
  private classesOf(classes: ShapeClass[] | undefined): ClassPerception[] {
    if (!hasClasses(classes)) return [];
    const out: ClassPerception[] = [];
    for (const k of classes) {
      let c = this.classes.get(k.key);
      if (c) this.classes.delete(k.key);
      else {
        c = { ...structuredClone(k), approvals: 0, rejections: 0, consecutive_approvals: 0, consecutive_rejections: 0 };
        evictOldest(this.classes, this.maxTools - 1);
      }
      this.classes.set(k.key, c);
      out.push(c);
    }
    return out;
  }

  private session(session_id: string): SessionPerception {
    let s = this.sessions.get(session_id);
    if (s) this.sessions.delete(session_id);
    else {
      s = {
        session_id,
        confidence: { count: 0, last: null, min: null, mean: null },
        last_fingerprint: null,
        run: 0,
        repeats: 0,
        hesitations: 0,
      };
      for (const dropped of evictOldest(this.sessions, this.maxSessions - 1)) {
        this.hints.delete(dropped);
        this.confidenceSums.delete(dropped);
      }
    }
    this.sessions.set(session_id, s);
    return s;
  }

  private pushHint(session_id: string, hint: AgentHint): void {
    const list = this.hints.get(session_id) ?? [];
    list.push(hint);
    if (list.length > this.maxHints) list.splice(0, list.length - this.maxHints);
    this.hints.set(session_id, list);
  }
}

/** True when a sample names shape classes other than the whole tool. */
function hasClasses(classes: ShapeClass[] | undefined): classes is ShapeClass[] {
  return classes !== undefined && classes.length > 0;
}

function push<T>(ring: T[], item: T, max: number): void {
  ring.push(item);
  if (ring.length > max) ring.splice(0, ring.length - max);
}

/** Drops the first (least recently touched) keys until at most `keep` remain; returns them. */
function evictOldest<V>(map: Map<string, V>, keep: number): string[] {
  const dropped: string[] = [];
  for (const key of map.keys()) {
    if (map.size <= Math.max(0, keep)) break;
    map.delete(key);
    dropped.push(key);
  }
  return dropped;
}
