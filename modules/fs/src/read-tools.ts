import { constants as fsc, promises as fsp } from 'node:fs';
import path from 'node:path';

import { FingerError, rfc3339 } from '@finger/protocol';

import { type FsCallContext, type FsContext, lstatOrNull, mapFsErrors, modeString, notFound } from './context.js';
import { type ContentEncoding, encodeContent } from './encoding.js';

/** Arguments of `fs.read`. */
export interface ReadParams {
  path: string;
  encoding?: ContentEncoding;
  offset?: number;
  length?: number;
}

/** Result of `fs.read`. */
export interface ReadResult {
  path: string;
  encoding: ContentEncoding;
  content: string;
  /** Bytes returned. */
  bytes: number;
  /** Size of the whole file. */
  size: number;
  offset: number;
  /** True when the returned range reaches the end of the file. */
  eof: boolean;
}

function nonNegInt(name: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) {
    throw new FingerError('E_INVALID_ARGS', `${name} must be a non-negative integer`, { [name]: v });
  }
  return v;
}

/**
 * `fs.read`: a file, or a byte range of it. Refuses (E_INVALID_ARGS naming `max_read_bytes`) a
 * range larger than the limit rather than truncating, and invalid UTF-8 under encoding utf8.
 * E_NOT_FOUND when missing, E_INVALID_ARGS for a directory.
 */
export async function readTool(ctx: FsContext, args: ReadParams, call?: FsCallContext): Promise<ReadResult> {
  const p = await ctx.resolve(args.path, call);
  const encoding = args.encoding ?? 'utf8';
  if (encoding !== 'utf8' && encoding !== 'base64') {
    throw new FingerError('E_INVALID_ARGS', 'encoding must be "utf8" or "base64"', { encoding });
  }
  const offset = nonNegInt('offset', args.offset) ?? 0;
  const length = nonNegInt('length', args.length);
  if (!p.exists) throw notFound(p);
  return mapFsErrors(p, async () => {
    const fh = await fsp.open(p.path, fsc.O_RDONLY | fsc.O_NOFOLLOW);
    try {
      const st = await fh.stat();
      if (st.isDirectory())
        throw new FingerError('E_INVALID_ARGS', `${p.input} is a directory; use fs.list`, { path: p.input });
      const max = ctx.settings.max_read_bytes;
      const start = Math.min(offset, st.size);
      const want = length ?? st.size - start;
      if (want > max) {
        throw new FingerError(
          'E_INVALID_ARGS',
          `${p.input}: reading ${want} bytes exceeds max_read_bytes (${max}); read a range with offset/length`,
          { path: p.input, size: st.size, requested: want, max_read_bytes: max },
        );
      }
      const buf = Buffer.alloc(Math.min(want, st.size - start));
      let got = 0;
      while (got < buf.length) {
        const { bytesRead } = await fh.read(buf, got, buf.length - got, start + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      const bytes = buf.subarray(0, got);
      return {
        path: p.path,
        encoding,
        content: encodeContent(bytes, encoding, p.input),
        bytes: got,
        size: st.size,
        offset: start,
        eof: start + got >= st.size,
      };
    } finally {
      await fh.close();
    }
  });
}

/** One entry of `fs.list`. */
export interface ListEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  size?: number;
}

/** Arguments of `fs.list`. */
export interface ListParams {
  path?: string;
  recursive?: boolean;
  max_entries?: number;
}

/** Result of `fs.list`. */
export interface ListResult {
  path: string;
  entries: ListEntry[];
  /** Every entry found, returned or not. */
  total: number;
  truncated: boolean;
}

/**
 * `fs.list`: a directory's entries sorted by name (recursive: pre-order, symlinks listed but never
 * followed). At most `max_entries` (default 1000) are returned; `total` counts all of them and
 * `truncated` says when some were left out. E_INVALID_ARGS when the path is not a directory.
 */
export async function listTool(ctx: FsContext, args: ListParams, call?: FsCallContext): Promise<ListResult> {
  const p = await ctx.resolve(args.path ?? '.', call);
  const max = args.max_entries ?? 1000;
  if (!Number.isSafeInteger(max) || max < 1) {
    throw new FingerError('E_INVALID_ARGS', 'max_entries must be a positive integer', { max_entries: max });
  }
  if (!p.exists) throw notFound(p);
  return mapFsErrors(p, async () => {
    const st = await fsp.stat(p.path);
    if (!st.isDirectory()) throw new FingerError('E_INVALID_ARGS', `${p.input} is not a directory`, { path: p.input });
    const entries: ListEntry[] = [];
    let total = 0;
    const visit = async (rel: string): Promise<void> => {
      const dirents = await fsp.readdir(path.join(p.path, rel), { withFileTypes: true });
      dirents.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const d of dirents) {
        const r = rel === '' ? d.name : `${rel}/${d.name}`;
        total++;
        const type = d.isFile() ? 'file' : d.isDirectory() ? 'dir' : d.isSymbolicLink() ? 'symlink' : 'other';
        if (entries.length < max) {
          const entry: ListEntry = { path: r, type };
          if (type === 'file') {
            const s = await lstatOrNull(path.join(p.path, r));
            if (s !== null) entry.size = s.size;
          }
          entries.push(entry);
        }
        if (args.recursive === true && type === 'dir') await visit(r);
      }
    };
    await visit('');
    return { path: p.path, entries, total, truncated: total > entries.length };
  });
}

/** Result of `fs.stat`. */
export interface StatResult {
  path: string;
  exists: boolean;
  type?: 'file' | 'dir' | 'other';
  size?: number;
  mode?: string;
  mtime?: string;
}

/** `fs.stat`: what is at a path (symlinks resolved); a missing path answers `exists: false`. */
export async function statTool(ctx: FsContext, args: { path: string }, call?: FsCallContext): Promise<StatResult> {
  const p = await ctx.resolve(args.path, call);
  if (!p.exists) return { path: p.path, exists: false };
  return mapFsErrors(p, async () => {
    const st = await fsp.stat(p.path);
    return {
      path: p.path,
      exists: true,
      type: st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other',
      size: st.size,
      mode: modeString(st.mode),
      mtime: rfc3339(Math.floor(st.mtimeMs)),
    };
  });
}
