import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';

/** Length of a frame MAC on the wire: the whole HMAC-SHA256 (32 bytes) in unpadded base64url. */
export const MAC_LEN = 43;

/**
 * One key a frame may be signed with: HMAC-SHA256 from `node:crypto` (no hashing of our own),
 * the full 256-bit tag, compared with `timingSafeEqual`. `id` is the key id the frame line
 * names next to the MAC (`c`, `r` or `m.<module>`, see nats-wire.ts); it is also the first
 * field of what is signed, so a MAC made under one key id is never checked as another's.
 */
export class FrameKey {
  private readonly key: KeyObject;

  constructor(
    readonly id: string,
    secret: string,
  ) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  /**
   * The MAC of `header ‖ body[start, end)` as {@link MAC_LEN} base64url characters (ASCII bytes).
   * `header` is the Latin-1 signing header {@link signingHeader} builds.
   */
  mac(header: string, body: Uint8Array, start = 0, end = body.length): Buffer {
    const h = createHmac('sha256', this.key).update(header, 'latin1');
    h.update(start === 0 && end === body.length ? body : body.subarray(start, end));
    return Buffer.from(h.digest('base64url'), 'latin1');
  }

  /** Whether `sig[at, at + len)` is the MAC of `header ‖ body[start, end)` (constant time in its content). */
  verify(
    header: string,
    body: Uint8Array,
    start: number,
    end: number,
    sig: Uint8Array,
    at: number,
    len: number,
  ): boolean {
    if (len !== MAC_LEN) return false;
    return timingSafeEqual(this.mac(header, body, start, end), sig.subarray(at, at + len));
  }
}

/**
 * What a frame's MAC covers before the body: the frame version, the key id, the kind, the sending
 * node, the sender's timestamp and the NATS subject, one per line. The subject makes a frame
 * captured on one subject fail on any other; the key id separates the MACs of the keys.
 */
export function signingHeader(
  version: string,
  keyId: string,
  kind: string,
  node: string,
  ts: string,
  subject: string,
): string {
  return `${version}\n${keyId}\n${kind}\n${node}\n${ts}\n${subject}\n`;
}
