import type { Clock } from '@finger/hub';

interface Timer {
  at: number;
  fn: () => void;
  every?: number;
}

/**
 * A {@link Clock} for tests whose time moves only by {@link ManualClock.advance}: leases, sweeps,
 * deadlines and heartbeats are exact, however loaded the machine (no real-time windows).
 * Timeouts and intervals fire during `advance`, in time order, each at its own instant.
 */
export class ManualClock implements Clock {
  private t: number;
  private readonly timers = new Map<number, Timer>();
  private seq = 0;

  constructor(start = Date.UTC(2026, 0, 2, 3, 4, 5, 678)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    this.timers.set(++this.seq, { at: this.t + Math.max(0, ms), fn });
    return this.seq;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  setInterval(fn: () => void, ms: number): unknown {
    const every = Math.max(1, ms);
    this.timers.set(++this.seq, { at: this.t + every, fn, every });
    return this.seq;
  }

  clearInterval(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Timers (timeouts and intervals) not yet fired or cleared. */
  get pending(): number {
    return this.timers.size;
  }

  /**
   * Moves time forward by `ms`, firing every timer due on the way at its own instant (an interval
   * as often as it falls due). Throws when `ms` is negative.
   */
  advance(ms: number): void {
    if (ms < 0) throw new Error(`ManualClock.advance(${ms}): time does not go back`);
    const end = this.t + ms;
    for (;;) {
      let next: [number, Timer] | undefined;
      for (const e of this.timers) if (e[1].at <= end && (next === undefined || e[1].at < next[1].at)) next = e;
      if (next === undefined) break;
      const [id, timer] = next;
      this.t = timer.at;
      if (timer.every === undefined) this.timers.delete(id);
      else timer.at += timer.every;
      timer.fn();
    }
    this.t = end;
  }
}
