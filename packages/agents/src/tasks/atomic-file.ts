import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Writes `text` to `file` atomically: a temp file beside it, fsync'd, then renamed over the
 * target, then the directory fsync'd — a crash leaves either the old or the new content, never a
 * torn one. Throws the operating-system error; callers map it to E_STORE_UNAVAILABLE.
 */
export function writeFileAtomicSync(file: string, text: string, mode = 0o600): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${Date.now().toString(36)}.tmp`);
  const fd = openSync(tmp, 'w', mode);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (e) {
    // a full disk: no half-written temp file is left behind
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  try {
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
  try {
    const dfd = openSync(dirname(file), 'r');
    try {
      fsyncSync(dfd);
    } finally {
      closeSync(dfd);
    }
  } catch {
    // directories cannot be fsync'd on every platform
  }
}
