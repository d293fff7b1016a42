import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { ulid } from '@finger/protocol';

/**
 * fsyncs a directory so a rename or unlink inside it survives a crash. Platforms that cannot
 * open or sync a directory (EISDIR, EINVAL, EPERM) are tolerated.
 */
export async function fsyncDir(dir: string): Promise<void> {
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(dir, 'r');
    await fh.sync();
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM' && code !== 'EBADF') throw e;
  } finally {
    await fh?.close();
  }
}

/**
 * Replaces `file` with `data` atomically: a temp file in the same directory is written, fsync'd,
 * given `mode` (default: 0o666 less the umask, like a new file) and renamed over `file`, then the
 * directory is fsync'd. A reader sees the old or the new bytes, never a mix. On failure the temp
 * file is removed and the original is untouched.
 */
export async function atomicWriteFile(file: string, data: Uint8Array, options: { mode?: number } = {}): Promise<void> {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.finger-${ulid()}.tmp`);
  const fh = await fsp.open(tmp, 'wx', 0o666);
  let renamed = false;
  try {
    try {
      await fh.writeFile(data);
      if (options.mode !== undefined) await fh.chmod(options.mode & 0o7777);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, file);
    renamed = true;
    await fsyncDir(dir);
  } finally {
    if (!renamed) await fsp.rm(tmp, { force: true });
  }
}

/** Appends `text` to `file` and fsyncs it before resolving (index journals). */
export async function appendSynced(file: string, text: string): Promise<void> {
  const fh = await fsp.open(file, 'a', 0o600);
  try {
    await fh.appendFile(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
}
