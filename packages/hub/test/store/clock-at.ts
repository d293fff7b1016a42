import type { Clock } from '../../src/clock.js';

/** A clock that reads `t.now` (a test moves it) and never fires a timer: for the store tests. */
export function clockAt(t: { now: number }): Clock {
  return {
    now: () => t.now,
    setTimeout: () => 0,
    clearTimeout: () => undefined,
    setInterval: () => 0,
    clearInterval: () => undefined,
  };
}
