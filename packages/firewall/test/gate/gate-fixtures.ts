// Shared pieces of the HumanGate tests: a manual clock, an event recorder, verdict and facts builders.

import type { EventType } from '@finger/protocol';

import type { Evaluation, GateClock, GateEvents, Level, Preview, ToolCallFacts } from '../../src/index.js';
import { actionOf } from '../../src/index.js';

/** A clock whose timers fire only on `advance()`. */
export class ManualClock implements GateClock {
  t = 1_700_000_000_000;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + ms, fn });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Moves time forward and fires every timer that came due, in time order. */
  advance(ms: number): void {
    this.t += ms;
    const due = [...this.timers].filter(([, x]) => x.at <= this.t).sort((a, b) => a[1].at - b[1].at);
    for (const [id, x] of due) {
      this.timers.delete(id);
      x.fn();
    }
  }

  get pendingTimers(): number {
    return this.timers.size;
  }
}

/** One emitted event. */
export interface Emitted {
  type: EventType;
  correlation: Record<string, unknown>;
  data: Record<string, unknown>;
}

/** Records events; `next(type)` resolves with the next (or an already recorded, unclaimed) one. */
export class EventRecorder implements GateEvents {
  readonly all: Emitted[] = [];
  private claimed = 0;
  private waiters: { type: EventType; resolve(e: Emitted): void }[] = [];

  emit(type: EventType, correlation: Record<string, unknown>, data: Record<string, unknown> = {}): void {
    const e = { type, correlation, data };
    this.all.push(e);
    const i = this.waiters.findIndex((w) => w.type === type);
    if (i >= 0) {
      const [w] = this.waiters.splice(i, 1);
      this.claimed = this.all.length;
      w!.resolve(e);
    }
  }

  /** Events of one type. */
  of(type: EventType): Emitted[] {
    return this.all.filter((e) => e.type === type);
  }

  /** The next event of `type` emitted after the last one claimed. */
  next(type: EventType): Promise<Emitted> {
    const found = this.all.slice(this.claimed).find((e) => e.type === type);
    if (found) {
      this.claimed = this.all.indexOf(found) + 1;
      return Promise.resolve(found);
    }
    return new Promise((resolve) => this.waiters.push({ type, resolve }));
  }
}

/** A verdict at `level` (hold for CONFIRM/APPROVE) with one builtin rule. */
export function evaluation(level: Level, extra: Partial<Evaluation> = {}): Evaluation {
  return {
    decision_id: `dec-${level}`,
    level,
    action: actionOf(level),
    layer: 'permission',
    matched_rules: [{ source: 'builtin', id: 'risk', level, reason: `RiskAssessor: ${level.toLowerCase()}` }],
    reasons: [`command is ${level === 'APPROVE' ? 'dangerous' : 'moderate'}`],
    ...extra,
  };
}

/** A write preview bound to `sha`. */
export function diffPreview(sha: string | null, path = '/work/a.txt'): Preview {
  return { kind: 'diff', text: '--- a.txt\n+++ a.txt\n-old\n+new', file_sha256: sha, path };
}

/** The facts of one AI call. */
export function facts(over: Partial<ToolCallFacts> = {}): ToolCallFacts {
  return {
    tool_id: 'shell.exec',
    args: { command: 'git push --force' },
    principal: { kind: 'agent', id: 'executor-1', roles: ['agent:executor'] },
    session_id: 'sess-1',
    request_id: 'req-1',
    correlation_id: 'corr-1',
    direct: false,
    tool: { risk_level: 'high', capability_level: 'L2', side_effects: true },
    ...over,
  };
}

export const OPERATOR = { kind: 'human', id: 'olga', roles: ['operator'] } as const;
export const ADMIN = { kind: 'human', id: 'root', roles: ['admin'] } as const;
export const VIEWER = { kind: 'human', id: 'vic', roles: ['viewer'] } as const;
export const AGENT = { kind: 'agent', id: 'executor-1', roles: ['agent:executor'] } as const;

/** Lets pending promise callbacks run. */
export function flush(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}
