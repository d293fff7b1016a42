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
  /**
   * The expected tag's bytes while {@link verify} compares them: one buffer per key, reused (the
   * process is single-threaded and verify is synchronous), so a check allocates no Buffer for it.
   */
  private readonly expected = Buffer.alloc(MAC_LEN);

  constructor(
    readonly id: string,
    secret: string,
  ) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  /**
   * The MAC of `header ‖ body[start, end)` as {@link MAC_LEN} base64url characters. `header` is the
   * Latin-1 signing header {@link signingHeader} builds.
   */
  mac(header: string, body: Uint8Array, start = 0, end = body.length): string {
    const h = createHmac('sha256', this.key).update(header, 'latin1');
    h.update(start === 0 && end === body.length ? body : body.subarray(start, end));
    return h.digest('base64url');
  }

  /**
   * Writes the MAC of `header ‖ body[start, end)` ({@link MAC_LEN} ASCII bytes) at `out[at]`:
   * straight from the digest's base64url text into the frame (no Buffer of the tag made and read
   * back).
   */
  macInto(header: string, body: Uint8Array, start: number, end: number, out: Buffer, at: number): void {
    out.write(this.mac(header, body, start, end), at, MAC_LEN, 'latin1');
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
    const expected = this.expected;
    expected.write(this.mac(header, body, start, end), 0, MAC_LEN, 'latin1');
    return timingSafeEqual(expected, sig.subarray(at, at + MAC_LEN));
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
