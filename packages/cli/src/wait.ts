import { setTimeout as delay } from 'node:timers/promises';

/** Exit code after an interrupt (128 + SIGINT), as shells report it. */
export const EXIT_INTERRUPTED = 130;

/**
 * Waits `ms`; resolves false instead of waiting when `signal` is (or becomes) aborted, so poll
 * loops can stop cleanly on Ctrl-C.
 */
export async function pause(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return false;
  try {
    await delay(ms, undefined, signal ? { signal } : undefined);
    return true;
  } catch {
    return false;
  }
}
