/**
 * `url` (or a comma-separated list of URLs) without its `user:password@` parts: what may be shown
 * in logs, `/v1/health`, events and `myfinger doctor` (a password in a NATS or Redis URL never is).
 */
export function withoutCredentials(url: string): string {
  return url.replace(/\/\/[^@/]*@/g, '//');
}
