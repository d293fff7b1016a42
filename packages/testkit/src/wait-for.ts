/**
 * Polls `fn` until it returns something other than `undefined` (a rejection counts as "not yet")
 * and returns that; throws naming `what` (and the last rejection) after `timeout_ms`.
 */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeout_ms = 20_000,
  interval_ms = 50,
): Promise<T> {
  const end = Date.now() + timeout_ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, interval_ms));
  }
}

/**
 * Polls `cond` until it holds (a rejection counts as "not yet"); throws naming `what` after
 * `timeout_ms`. For boolean conditions; {@link waitFor} returns a value.
 */
export async function waitUntil(
  what: string,
  cond: () => boolean | Promise<boolean>,
  timeout_ms = 20_000,
  interval_ms = 50,
): Promise<void> {
  await waitFor(what, async () => ((await cond()) ? true : undefined), timeout_ms, interval_ms);
}
