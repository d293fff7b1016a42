let lastMs = -1;
let lastIso = '';
let lastSecond = -1;
let secondPrefix = '';

/**
 * RFC 3339 UTC timestamp of `ms` (epoch milliseconds), e.g. `2026-11-21T21:43:37.123Z`.
 * `Date#toISOString` costs microseconds, so the string is cached per millisecond and the
 * date part per second — the hub stamps every envelope with it.
 */
export function rfc3339(ms: number = Date.now()): string {
  if (ms === lastMs) return lastIso;
  const sec = Math.floor(ms / 1000);
  if (sec !== lastSecond) {
    lastSecond = sec;
    secondPrefix = new Date(sec * 1000).toISOString().slice(0, 20);
  }
  const frac = ms - sec * 1000;
  lastMs = ms;
  lastIso = `${secondPrefix}${frac < 10 ? '00' : frac < 100 ? '0' : ''}${frac}Z`;
  return lastIso;
}
