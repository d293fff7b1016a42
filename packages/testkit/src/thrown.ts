import type { FingerError } from '@finger/protocol';

/** What `fn` throws (as a FingerError, for its code, message and details); fails when it returns. */
export function thrownBy(fn: () => unknown): FingerError {
  try {
    fn();
  } catch (e) {
    return e as FingerError;
  }
  throw new Error('expected a throw');
}
