import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const POOL_SIZE = 16 * 512;
const pool = new Uint8Array(POOL_SIZE);
let poolOffset = POOL_SIZE;

let lastTime = -1;
let lastTimePart = '';
const lastRandom = new Uint8Array(16);
/** The time part and the first 15 random digits as one string, rebuilt only when they change: an id is then one concatenation. */
let prefix = '';

function refill(): void {
  randomFillSync(pool);
  poolOffset = 0;
}

function encodeTime(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32]! + out;
    t = Math.floor(t / 32);
  }
  return out;
}

/**
 * Returns a new ULID (26 Crockford base32 chars, time-sortable). Ids made within the same
 * millisecond are strictly increasing (monotonic), as the ULID spec recommends.
 */
export function ulid(now: number = Date.now()): string {
  if (now === lastTime) {
    // fast path: bump the last digit only
    const last = lastRandom[15]! + 1;
    if (last < 32) {
      lastRandom[15] = last;
      return prefix + ALPHABET[last]!;
    }
    // increment the 80-bit random part (16 base32 digits)
    let i = 15;
    while (i >= 0) {
      const v = lastRandom[i]! + 1;
      if (v < 32) {
        lastRandom[i] = v;
        break;
      }
      lastRandom[i] = 0;
      i--;
    }
  } else {
    lastTime = now;
    lastTimePart = encodeTime(now);
    if (poolOffset + 16 > POOL_SIZE) refill();
    for (let i = 0; i < 16; i++) lastRandom[i] = pool[poolOffset + i]! & 31;
    poolOffset += 16;
  }
  let head = '';
  for (let i = 0; i < 15; i++) head += ALPHABET[lastRandom[i]!];
  prefix = lastTimePart + head;
  return prefix + ALPHABET[lastRandom[15]!]!;
}

/** True when `s` has the shape of a ULID. */
export function isUlid(s: unknown): s is string {
  return typeof s === 'string' && /^[0-9A-HJKMNP-TV-Z]{26}$/.test(s);
}

/**
 * The engine's one copy of `s` (an internalized string). Tool ids are looked up in several maps on
 * every call; stored this way, the copies two registries made apart are one object, and a map
 * compares them by pointer instead of by content (a string compare per look-up, seen with
 * callgrind in bench/firewall). Registration time only.
 */
export function internId(s: string): string {
  // a property key is internalized; the key read back is the engine's copy
  for (const k in { [s]: 0 }) return k;
  return s;
}
