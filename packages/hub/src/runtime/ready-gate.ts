import type { Clock } from '../clock.js';

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
  timer: unknown;
}

/**
 * Where calls wait while a runtime is (re)starting: each waits until open() or until its own
 * deadline, whichever comes first, so no wait is unbounded.
 */
export class ReadyGate {
  readonly #clock: Clock;
  readonly #waiters = new Set<Waiter>();

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /** Resolves on open(); rejects with `onTimeout()` at `deadline` (epoch ms), or with fail()'s error. */
  wait(deadline: number, onTimeout: () => unknown): Promise<void> {
    const remaining = deadline - this.#clock.now();
    if (!(remaining > 0)) return Promise.reject(onTimeout());
    return new Promise((resolve, reject) => {
      const w: Waiter = { resolve, reject, timer: null };
      w.timer = this.#clock.setTimeout(() => {
        this.#waiters.delete(w);
        reject(onTimeout());
      }, remaining);
      this.#waiters.add(w);
    });
  }

  /** Lets every waiter through. */
  open(): void {
    for (const w of this.#drain()) w.resolve();
  }

  /** Rejects every waiter with `err`. */
  fail(err: unknown): void {
    for (const w of this.#drain()) w.reject(err);
  }

  #drain(): Waiter[] {
    const all = [...this.#waiters];
    this.#waiters.clear();
    for (const w of all) this.#clock.clearTimeout(w.timer);
    return all;
  }
}
