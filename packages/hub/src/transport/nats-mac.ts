import { createHash, createHmac, hash } from 'node:crypto';

const BLOCK = 64;
/** Bodies up to this size are signed with two one-shot hashes over a reused buffer. */
const SCRATCH = 8192;

/**
 * HMAC-SHA256 of `prefix + body` under one key, computed as RFC 2104 spells it out —
 * SHA256((K ⊕ opad) ‖ SHA256((K ⊕ ipad) ‖ message)) — with Node's one-shot `crypto.hash` over
 * buffers prepared once per key. The result is exactly `createHmac('sha256', key)`'s (a unit test
 * compares them); it only skips the Hmac object, its stream machinery and its garbage, which cost
 * more than the hashing itself for the few hundred bytes of a NATS message (two MACs per call on
 * the serving side). Bodies over 8 KB go through `createHmac` (no copy into the scratch buffer).
 */
export class Sha256Mac {
  private readonly key: Buffer;
  private readonly scratch: Buffer;
  private readonly outer: Buffer;

  constructor(key: Uint8Array) {
    this.key = Buffer.from(key);
    const k = key.length > BLOCK ? createHash('sha256').update(key).digest() : key;
    this.scratch = Buffer.alloc(BLOCK + SCRATCH);
    this.outer = Buffer.alloc(BLOCK + 32);
    for (let i = 0; i < BLOCK; i++) {
      const b = i < k.length ? k[i]! : 0;
      this.scratch[i] = b ^ 0x36;
      this.outer[i] = b ^ 0x5c;
    }
  }

  /** base64url of HMAC-SHA256(key, prefix ‖ body); `prefix` is Latin-1 text. */
  sign(prefix: string, body: Uint8Array): string {
    const n = BLOCK + prefix.length + body.length;
    if (n > this.scratch.length)
      return createHmac('sha256', this.key).update(prefix, 'latin1').update(body).digest('base64url');
    this.scratch.write(prefix, BLOCK, 'latin1');
    this.scratch.set(body, BLOCK + prefix.length);
    // the inner digest as a binary (Latin-1) string written into place: a 'buffer' result costs twice as much
    this.outer.write(hash('sha256', this.scratch.subarray(0, n), 'binary'), BLOCK, 'latin1');
    return hash('sha256', this.outer, 'base64url');
  }
}
