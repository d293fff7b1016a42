// The segment files of a FileEventStore: their names, listing a directory of them, reading one
// whether it is still plain JSON lines or was gzip'd once closed, and packing a closed one.
// Compression is node:zlib's gzip; a reader decodes what a torn file still holds.

import { open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { constants, gunzip, gzip } from 'node:zlib';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

const SEGMENT_RE = /^events-(\d+)\.jsonl(\.gz)?$/;
const PACKING_RE = /^events-\d+\.jsonl\.gz\.tmp$/;

/** What a directory of segments holds. */
export interface SegmentListing {
  /** Every segment's sequence number, ascending. */
  seqs: number[];
  /** Those stored gzip'd (`events-<seq>.jsonl.gz`). */
  packed: Set<number>;
  /** Segments present in both forms: a packing that renamed its `.gz` and stopped before removing the plain file. */
  both: number[];
  /** Unfinished packings (`….jsonl.gz.tmp`) left by a stop: never complete, removed on open. */
  temps: string[];
}

export function segmentFile(dir: string, seq: number, packed: boolean): string {
  return join(dir, `events-${String(seq).padStart(10, '0')}.jsonl${packed ? '.gz' : ''}`);
}

export async function listSegments(dir: string): Promise<SegmentListing> {
  const seen = new Map<number, { plain: boolean; packed: boolean }>();
  const temps: string[] = [];
  for (const name of await readdir(dir)) {
    if (PACKING_RE.test(name)) {
      temps.push(join(dir, name));
      continue;
    }
    const m = SEGMENT_RE.exec(name);
    if (m === null) continue;
    const seq = Number(m[1]);
    const s = seen.get(seq) ?? { plain: false, packed: false };
    if (m[2] === undefined) s.plain = true;
    else s.packed = true;
    seen.set(seq, s);
  }
  const seqs = [...seen.keys()].sort((a, b) => a - b);
  const packed = new Set<number>();
  const both: number[] = [];
  for (const seq of seqs) {
    const s = seen.get(seq)!;
    if (s.packed) packed.add(seq);
    if (s.packed && s.plain) both.push(seq);
  }
  return { seqs, packed, both, temps };
}

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === 'ENOENT';
}

/**
 * A segment's text, or null when it is gone (rotated away meanwhile). A plain segment packed
 * between the listing and this read is read in its new form. A gzip'd one is decoded as far as
 * it is whole: a file torn by a crash gives its complete lines (the torn one is the caller's
 * to skip); one that is not gzip at all, or decodes to more than `maxBytes`, throws.
 */
export async function readSegmentText(
  dir: string,
  seq: number,
  packed: boolean,
  maxBytes: number,
): Promise<string | null> {
  for (const gz of packed ? [true] : [false, true]) {
    let bytes: Buffer;
    try {
      bytes = await readFile(segmentFile(dir, seq, gz));
    } catch (err) {
      if (isMissing(err)) continue;
      throw err;
    }
    if (!gz) return bytes.toString('utf8');
    // bounded: a `.gz` that decodes past `maxBytes` fails (ERR_BUFFER_TOO_LARGE) instead of filling memory
    const text = await gunzipAsync(bytes, { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: maxBytes });
    return text.toString('utf8');
  }
  return null;
}

/**
 * Packs a closed plain segment into `events-<seq>.jsonl.gz`: written to a `.tmp` beside it,
 * fsync'd, renamed over (so a `.gz` is always whole), then the plain file is removed. Returns the
 * packed size, or null when the plain segment was already gone.
 */
export async function packSegment(dir: string, seq: number, level: number): Promise<number | null> {
  const plain = segmentFile(dir, seq, false);
  let text: Buffer;
  try {
    text = await readFile(plain);
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
  const packed = await gzipAsync(text, { level });
  const target = segmentFile(dir, seq, true);
  const tmp = `${target}.tmp`;
  const h = await open(tmp, 'w', 0o600);
  try {
    await h.writeFile(packed);
    await h.sync();
  } finally {
    await h.close();
  }
  await rename(tmp, target);
  await unlinkIfThere(plain);
  return packed.length;
}

export async function unlinkIfThere(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if (!isMissing(err)) throw err;
  }
}
