/** RFC 3339 UTC timestamp of `ms` (epoch milliseconds). */
export function rfc3339(ms: number = Date.now()): string {
  return new Date(ms).toISOString();
}
