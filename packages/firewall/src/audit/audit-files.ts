// The files of an audit log: segment names, the small write surface AuditLog needs (so a test
// can put a failing shim in front of it), and line-by-line reading shared by open, read and
// verify.

import { open, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** An open segment, written only at its end. */
export interface AuditFile {
  /** Appends all of `data` at the end of the file (loops over short writes). */
  write(data: Uint8Array): Promise<void>;
  /** fdatasync: resolves once the data (and the new size) is on stable storage. */
  datasync(): Promise<void>;
  /** Cuts the file back to `length` bytes (used to drop a batch whose write or sync failed). */
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The write side of the file system the AuditLog uses. The default is {@link nodeAuditFileSystem};
 * tests pass a shim whose write or datasync fails.
 */
export interface AuditFileSystem {
  /** Opens (creating with mode 0600 if needed) a file for appending. */
  openAppend(path: string): Promise<AuditFile>;
  /** fsyncs a directory so a newly created file's name is durable. */
  syncDir(dir: string): Promise<void>;
}

/** The real file system (node:fs/promises). */
export const nodeAuditFileSystem: AuditFileSystem = {
  async openAppend(path) {
    const fh = await open(path, 'a', 0o600);
    return {
      async write(data) {
        let off = 0;
        while (off < data.length) {
          const { bytesWritten } = await fh.write(data, off, data.length - off, null);
          if (bytesWritten <= 0) throw new Error(`short write to ${path}`);
          off += bytesWritten;
        }
      },
      datasync: () => fh.datasync(),
      truncate: (length) => fh.truncate(length),
      close: () => fh.close(),
    };
  },
  async syncDir(dir) {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  },
};

const SEGMENT_RE = /^audit-(\d{1,15})\.jsonl$/;

/** File name of segment `n`: `audit-0000000001.jsonl` (zero-padded so names sort as numbers). */
export function segmentName(n: number): string {
  return `audit-${String(n).padStart(10, '0')}.jsonl`;
}

/** Segment numbers present in `dir`, ascending; [] when the directory does not exist. */
export async function listSegments(dir: string): Promise<number[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const out: number[] = [];
  for (const name of names) {
    const m = SEGMENT_RE.exec(name);
    if (m) out.push(Number(m[1]));
  }
  return out.sort((a, b) => a - b);
}

/** One line of a segment: its text (without "\n"), 1-based line number, and whether "\n" ended it. */
export interface SegmentLine {
  text: string;
  lineNo: number;
  terminated: boolean;
}

const CHUNK = 1 << 20;

/**
 * Reads a segment line by line in 1 MiB chunks, up to `limit` bytes (default: the whole file).
 * Lines are split on the byte 0x0a, which never occurs inside a multi-byte UTF-8 character.
 * A final piece without "\n" is yielded with `terminated: false`; an empty file yields nothing.
 */
export async function* readSegmentLines(path: string, limit = Infinity): AsyncGenerator<SegmentLine> {
  const fh = await open(path, 'r');
  try {
    let pos = 0;
    let carry: Buffer | null = null;
    let lineNo = 0;
    const buf = Buffer.allocUnsafe(CHUNK);
    for (;;) {
      const want = Math.min(CHUNK, limit - pos);
      if (want <= 0) break;
      const { bytesRead } = await fh.read(buf, 0, want, pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      let data: Buffer = buf.subarray(0, bytesRead);
      if (carry !== null) data = Buffer.concat([carry, data]);
      let start = 0;
      for (let nl = data.indexOf(0x0a, start); nl !== -1; nl = data.indexOf(0x0a, start)) {
        yield { text: data.toString('utf8', start, nl), lineNo: ++lineNo, terminated: true };
        start = nl + 1;
      }
      carry = start < data.length ? Buffer.from(data.subarray(start)) : null;
    }
    if (carry !== null) yield { text: carry.toString('utf8'), lineNo: ++lineNo, terminated: false };
  } finally {
    await fh.close();
  }
}

/**
 * The last line of a file of `size` bytes, read backwards in growing chunks: its text and
 * whether the file ends with "\n". Null for an empty file.
 */
export async function readLastLine(path: string, size: number): Promise<{ text: string; terminated: boolean } | null> {
  if (size === 0) return null;
  const fh = await open(path, 'r');
  try {
    let span = Math.min(size, 64 * 1024);
    for (;;) {
      const buf = Buffer.allocUnsafe(span);
      const { bytesRead } = await fh.read(buf, 0, span, size - span);
      const data = buf.subarray(0, bytesRead);
      const terminated = data[data.length - 1] === 0x0a;
      const end = terminated ? data.length - 1 : data.length;
      const nl = data.lastIndexOf(0x0a, end - 1);
      if (nl !== -1 || span === size) return { text: data.toString('utf8', nl + 1, end), terminated };
      span = Math.min(size, span * 4);
    }
  } finally {
    await fh.close();
  }
}

/** Path of segment `n` in `dir`. */
export function segmentPath(dir: string, n: number): string {
  return join(dir, segmentName(n));
}
