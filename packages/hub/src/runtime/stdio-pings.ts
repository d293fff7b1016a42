import type { StdioPingLine } from '@finger/module-sdk';

import type { Clock } from '../clock.js';
import type { RuntimeHealth } from './runtime.js';

/**
 * The pings a stdio runtime sent and is waiting on (`{"type":"ping","id":"ping-<n>"}` → a pong
 * with the same id). Every wait is bounded by its timeout; a pong for a ping that already timed
 * out is late, not garbage.
 */
export class PingTracker {
  readonly #clock: Clock;
  readonly #waiting = new Map<string, (h: RuntimeHealth) => void>();
  #seq = 0;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Writes a ping line; resolves `{ok: true}` on its pong, unhealthy after `timeout_ms` (never rejects). */
  ping(write: (line: string) => void, timeout_ms: number): Promise<RuntimeHealth> {
    const id = `ping-${++this.#seq}`;
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(() => {
        this.#waiting.delete(id);
        resolve({ ok: false, detail: `no pong within ${timeout_ms} ms` });
      }, timeout_ms);
      this.#waiting.set(id, (h) => {
        this.#clock.clearTimeout(timer);
        this.#waiting.delete(id);
        resolve(h);
      });
      const ping: StdioPingLine = { type: 'ping', id };
      write(JSON.stringify(ping) + '\n');
    });
  }

  /** A pong arrived: settles its ping. False when no ping of ours has that id (garbage). */
  pong(id: string): boolean {
    const r = this.#waiting.get(id);
    if (r !== undefined) {
      r({ ok: true });
      return true;
    }
    return this.#isLate(id);
  }

  /** Settles every waiting ping with `h` (the child exited, or the runtime closed). */
  settleAll(h: RuntimeHealth): void {
    for (const r of [...this.#waiting.values()]) r(h);
  }

  /** A pong for a ping that already timed out is late, not garbage. */
  #isLate(id: string): boolean {
    if (!id.startsWith('ping-')) return false;
    const n = Number(id.slice(5));
    return Number.isInteger(n) && n > 0 && n <= this.#seq;
  }
}
