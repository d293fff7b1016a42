// What `nats.url` and `module serve --nats` accept. Pure (no `nats` import): the root entry exports it.

/** `nats://`, `tls://` or `ws(s)://` URLs, comma-separated (a JSON Schema / RegExp pattern). */
export const NATS_URLS = '^(nats|tls|wss?)://[^,\\s]+(\\s*,\\s*(nats|tls|wss?)://[^,\\s]+)*$';

const NATS_URLS_RE = new RegExp(NATS_URLS);

/** True when `url` is one NATS URL or several, comma-separated, each with a NATS scheme. */
export function isNatsUrlList(url: string): boolean {
  return NATS_URLS_RE.test(url);
}
