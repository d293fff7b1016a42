/**
 * Keyed BLAKE2s-256 (RFC 7693) in JavaScript, for the MAC of small frames (nats-mac.ts). BLAKE2s
 * is a keyed hash by design (WireGuard authenticates with it): one pass over the message, no
 * outer hash, ten rounds of 32-bit additions, rotations and XORs per 64-byte block — about a
 * third of the work of an HMAC-SHA256 block in JavaScript, and a small message costs one block
 * per 64 bytes (the key block's state is computed once per key).
 */

const BLOCK = 64;
const IV = new Int32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);
/** The message word order of each of the ten rounds. */
const SIGMA = Uint8Array.from([
  0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3, 11, 8, 12,
  0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4, 7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8, 9, 0, 5, 7, 2, 4, 10,
  15, 14, 1, 11, 12, 6, 8, 3, 13, 2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9, 12, 5, 1, 15, 14, 13, 4, 10, 0,
  7, 6, 3, 9, 2, 8, 11, 13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10, 6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7,
  1, 4, 10, 5, 10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0,
]);
/** The message words of the block being compressed (single-threaded, never held across calls). */
const M = new Int32Array(16);

/**
 * One BLAKE2s compression of the block at `buf[at]` into `h`; `t` is the byte count so far
 * (messages here stay far below 2³² bytes), `last` marks the final block.
 */
function compress(h: Int32Array, buf: Uint8Array, at: number, t: number, last: boolean): void {
  for (let i = 0; i < 16; i++) {
    const j = at + i * 4;
    M[i] = buf[j]! | (buf[j + 1]! << 8) | (buf[j + 2]! << 16) | (buf[j + 3]! << 24);
  }
  let v0 = h[0]!;
  let v1 = h[1]!;
  let v2 = h[2]!;
  let v3 = h[3]!;
  let v4 = h[4]!;
  let v5 = h[5]!;
  let v6 = h[6]!;
  let v7 = h[7]!;
  let v8 = IV[0]!;
  let v9 = IV[1]!;
  let v10 = IV[2]!;
  let v11 = IV[3]!;
  let v12 = IV[4]! ^ t;
  let v13 = IV[5]!;
  let v14 = last ? ~IV[6]! : IV[6]!;
  let v15 = IV[7]!;
  // the eight G functions of a round written out (columns, then diagonals); rotations right by 16, 12, 8, 7
  for (let r = 0; r < 160; r += 16) {
    v0 = (v0 + v4 + M[SIGMA[r]!]!) | 0;
    v12 ^= v0;
    v12 = (v12 >>> 16) | (v12 << 16);
    v8 = (v8 + v12) | 0;
    v4 ^= v8;
    v4 = (v4 >>> 12) | (v4 << 20);
    v0 = (v0 + v4 + M[SIGMA[r + 1]!]!) | 0;
    v12 ^= v0;
    v12 = (v12 >>> 8) | (v12 << 24);
    v8 = (v8 + v12) | 0;
    v4 ^= v8;
    v4 = (v4 >>> 7) | (v4 << 25);

    v1 = (v1 + v5 + M[SIGMA[r + 2]!]!) | 0;
    v13 ^= v1;
    v13 = (v13 >>> 16) | (v13 << 16);
    v9 = (v9 + v13) | 0;
    v5 ^= v9;
    v5 = (v5 >>> 12) | (v5 << 20);
    v1 = (v1 + v5 + M[SIGMA[r + 3]!]!) | 0;
    v13 ^= v1;
    v13 = (v13 >>> 8) | (v13 << 24);
    v9 = (v9 + v13) | 0;
    v5 ^= v9;
    v5 = (v5 >>> 7) | (v5 << 25);

    v2 = (v2 + v6 + M[SIGMA[r + 4]!]!) | 0;
    v14 ^= v2;
    v14 = (v14 >>> 16) | (v14 << 16);
    v10 = (v10 + v14) | 0;
    v6 ^= v10;
    v6 = (v6 >>> 12) | (v6 << 20);
    v2 = (v2 + v6 + M[SIGMA[r + 5]!]!) | 0;
    v14 ^= v2;
    v14 = (v14 >>> 8) | (v14 << 24);
    v10 = (v10 + v14) | 0;
    v6 ^= v10;
    v6 = (v6 >>> 7) | (v6 << 25);

    v3 = (v3 + v7 + M[SIGMA[r + 6]!]!) | 0;
    v15 ^= v3;
    v15 = (v15 >>> 16) | (v15 << 16);
    v11 = (v11 + v15) | 0;
    v7 ^= v11;
    v7 = (v7 >>> 12) | (v7 << 20);
    v3 = (v3 + v7 + M[SIGMA[r + 7]!]!) | 0;
    v15 ^= v3;
    v15 = (v15 >>> 8) | (v15 << 24);
    v11 = (v11 + v15) | 0;
    v7 ^= v11;
    v7 = (v7 >>> 7) | (v7 << 25);

    v0 = (v0 + v5 + M[SIGMA[r + 8]!]!) | 0;
    v15 ^= v0;
    v15 = (v15 >>> 16) | (v15 << 16);
    v10 = (v10 + v15) | 0;
    v5 ^= v10;
    v5 = (v5 >>> 12) | (v5 << 20);
    v0 = (v0 + v5 + M[SIGMA[r + 9]!]!) | 0;
    v15 ^= v0;
    v15 = (v15 >>> 8) | (v15 << 24);
    v10 = (v10 + v15) | 0;
    v5 ^= v10;
    v5 = (v5 >>> 7) | (v5 << 25);

    v1 = (v1 + v6 + M[SIGMA[r + 10]!]!) | 0;
    v12 ^= v1;
    v12 = (v12 >>> 16) | (v12 << 16);
    v11 = (v11 + v12) | 0;
    v6 ^= v11;
    v6 = (v6 >>> 12) | (v6 << 20);
    v1 = (v1 + v6 + M[SIGMA[r + 11]!]!) | 0;
    v12 ^= v1;
    v12 = (v12 >>> 8) | (v12 << 24);
    v11 = (v11 + v12) | 0;
    v6 ^= v11;
    v6 = (v6 >>> 7) | (v6 << 25);

    v2 = (v2 + v7 + M[SIGMA[r + 12]!]!) | 0;
    v13 ^= v2;
    v13 = (v13 >>> 16) | (v13 << 16);
    v8 = (v8 + v13) | 0;
    v7 ^= v8;
    v7 = (v7 >>> 12) | (v7 << 20);
    v2 = (v2 + v7 + M[SIGMA[r + 13]!]!) | 0;
    v13 ^= v2;
    v13 = (v13 >>> 8) | (v13 << 24);
    v8 = (v8 + v13) | 0;
    v7 ^= v8;
    v7 = (v7 >>> 7) | (v7 << 25);

    v3 = (v3 + v4 + M[SIGMA[r + 14]!]!) | 0;
    v14 ^= v3;
    v14 = (v14 >>> 16) | (v14 << 16);
    v9 = (v9 + v14) | 0;
    v4 ^= v9;
    v4 = (v4 >>> 12) | (v4 << 20);
    v3 = (v3 + v4 + M[SIGMA[r + 15]!]!) | 0;
    v14 ^= v3;
    v14 = (v14 >>> 8) | (v14 << 24);
    v9 = (v9 + v14) | 0;
    v4 ^= v9;
    v4 = (v4 >>> 7) | (v4 << 25);
  }
  h[0] = h[0]! ^ v0 ^ v8;
  h[1] = h[1]! ^ v1 ^ v9;
  h[2] = h[2]! ^ v2 ^ v10;
  h[3] = h[3]! ^ v3 ^ v11;
  h[4] = h[4]! ^ v4 ^ v12;
  h[5] = h[5]! ^ v5 ^ v13;
  h[6] = h[6]! ^ v6 ^ v14;
  h[7] = h[7]! ^ v7 ^ v15;
}

/**
 * BLAKE2s-256 keyed with a key of 1–32 bytes, over `prefix ‖ body[start, end)` of at most
 * `maxMessage` bytes — exactly `hashlib.blake2s(prefix + body, key=key)` (unit tests hold it to
 * known answers).
 */
export class Blake2sKeyed {
  /** The parameter block's state (digest length 32, key length, fanout and depth 1). */
  private readonly h0: Int32Array;
  /** The key block, zero-padded (the first block of a keyed message). */
  private readonly keyBlock = new Uint8Array(BLOCK);
  /** The state after the key block, when more blocks follow (they always do for a non-empty message). */
  private readonly afterKey: Int32Array;
  private readonly h = new Int32Array(8);
  private readonly blocks: Uint8Array;

  constructor(
    key: Uint8Array,
    /** Longest message this instance takes (its block buffer is allocated once). */
    readonly maxMessage: number,
  ) {
    if (key.length < 1 || key.length > 32) throw new Error('a BLAKE2s key has 1 to 32 bytes');
    this.h0 = new Int32Array(IV);
    this.h0[0] = this.h0[0]! ^ 0x01010000 ^ (key.length << 8) ^ 32;
    this.keyBlock.set(key);
    this.afterKey = new Int32Array(this.h0);
    compress(this.afterKey, this.keyBlock, 0, BLOCK, false);
    this.blocks = new Uint8Array((maxMessage + BLOCK - 1) & ~(BLOCK - 1) || BLOCK);
  }

  /** Writes the 32-byte digest of `prefix ‖ body[start, end)` (`prefix` Latin-1) at `out[at]`. */
  digestInto(prefix: string, body: Uint8Array, start: number, end: number, out: Uint8Array, at: number): void {
    const pl = prefix.length;
    const n = pl + end - start;
    if (n > this.maxMessage) throw new RangeError(`message of ${n} bytes over ${this.maxMessage}`);
    const h = this.h;
    if (n === 0) {
      h.set(this.h0);
      compress(h, this.keyBlock, 0, BLOCK, true);
    } else {
      const m = this.blocks;
      for (let i = 0; i < pl; i++) m[i] = prefix.charCodeAt(i);
      for (let i = start, j = pl; i < end; i++, j++) m[j] = body[i]!;
      const padded = (n + BLOCK - 1) & ~(BLOCK - 1);
      for (let i = n; i < padded; i++) m[i] = 0;
      h.set(this.afterKey);
      const lastAt = padded - BLOCK;
      for (let b = 0; b < lastAt; b += BLOCK) compress(h, m, b, BLOCK + b + BLOCK, false);
      compress(h, m, lastAt, BLOCK + n, true);
    }
    for (let i = 0; i < 8; i++) {
      const v = h[i]!;
      const j = at + i * 4;
      out[j] = v & 255;
      out[j + 1] = (v >>> 8) & 255;
      out[j + 2] = (v >>> 16) & 255;
      out[j + 3] = v >>> 24;
    }
  }
}
