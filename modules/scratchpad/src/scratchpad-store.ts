/**
 * The scratchpad file on disk: `<workspace>/.finger/scratchpad.md`, read as is, written atomically
 * (temp file in the same directory, fsync, rename), one write at a time per store. The directory
 * must stay inside the workspace after symlinks are resolved, and the file must be a regular file.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

import { FingerError, isFingerError } from '@finger/protocol';

import { EMPTY_SCRATCHPAD } from './scratchpad-format.js';

/** The directory and file name under the workspace root. */
export const SCRATCHPAD_DIR = '.finger';
export const SCRATCHPAD_FILE = 'scratchpad.md';

function errno(e: unknown): string | undefined {
  const c = (e as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}

function storeError(action: string, file: string, e: unknown): FingerError {
  return new FingerError(
    'E_STORE_UNAVAILABLE',
    `cannot ${action} ${file}: ${e instanceof Error ? e.message : String(e)}`,
    { path: file, errno: errno(e) },
  );
}

/** True when `child` is `parent` or below it (both absolute, already resolved). */
function inside(parent: string, child: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** Reads and atomically rewrites one workspace's scratchpad file. */
export class ScratchpadStore {
  readonly #root: string;
  #queue: Promise<unknown> = Promise.resolve();

  /** `root` is the absolute workspace root; it need not exist until the first update. */
  constructor(root: string) {
    this.#root = root;
  }

  /** The path of the scratchpad file (before symlink resolution). */
  get file(): string {
    return path.join(this.#root, SCRATCHPAD_DIR, SCRATCHPAD_FILE);
  }

  /**
   * The resolved directory, checked to be inside the resolved root. With `create`, makes it first;
   * without, returns null when the root or the directory does not exist. Rejects E_FORBIDDEN when a
   * symlink leads out of the workspace.
   */
  async #dir(create: boolean): Promise<string | null> {
    const dir = path.join(this.#root, SCRATCHPAD_DIR);
    try {
      if (create) await fs.mkdir(dir, { recursive: true });
      const realRoot = await fs.realpath(this.#root);
      const realDir = await fs.realpath(dir);
      if (!inside(realRoot, realDir) || realDir === realRoot) {
        throw new FingerError('E_FORBIDDEN', `${dir} resolves to ${realDir}, outside the workspace ${realRoot}`, {
          path: dir,
          resolved: realDir,
          workspace: realRoot,
        });
      }
      return realDir;
    } catch (e) {
      if (isFingerError(e)) throw e;
      if (!create && errno(e) === 'ENOENT') return null;
      throw storeError(create ? 'create' : 'resolve', dir, e);
    }
  }

  /** Rejects E_FORBIDDEN when the file exists but is not a regular file (a symlink, a directory). */
  async #checkFile(file: string): Promise<boolean> {
    try {
      const st = await fs.lstat(file);
      if (!st.isFile()) {
        throw new FingerError('E_FORBIDDEN', `${file} is not a regular file`, { path: file });
      }
      return true;
    } catch (e) {
      if (isFingerError(e)) throw e;
      if (errno(e) === 'ENOENT') return false;
      throw storeError('stat', file, e);
    }
  }

  /** The file's text, or the empty template when there is no file yet. */
  async read(): Promise<string> {
    const dir = await this.#dir(false);
    if (dir === null) return EMPTY_SCRATCHPAD;
    const file = path.join(dir, SCRATCHPAD_FILE);
    if (!(await this.#checkFile(file))) return EMPTY_SCRATCHPAD;
    try {
      return await fs.readFile(file, 'utf8');
    } catch (e) {
      if (errno(e) === 'ENOENT') return EMPTY_SCRATCHPAD;
      throw storeError('read', file, e);
    }
  }

  /**
   * Reads the current text (the template when missing), applies `edit`, and writes the result
   * atomically. Calls are serialised, so two updates never lose each other's section. `edit` may
   * throw (a rule violation) and then nothing is written.
   */
  update(edit: (current: string) => string): Promise<void> {
    const run = this.#queue.then(
      () => this.#update(edit),
      () => this.#update(edit),
    );
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #update(edit: (current: string) => string): Promise<void> {
    const current = await this.read();
    const next = edit(current);
    const dir = (await this.#dir(true))!;
    const file = path.join(dir, SCRATCHPAD_FILE);
    await this.#checkFile(file);
    const tmp = path.join(dir, `.${SCRATCHPAD_FILE}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      const fh = await fs.open(tmp, 'wx', 0o644);
      try {
        await fh.writeFile(next, 'utf8');
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fs.rename(tmp, file);
    } catch (e) {
      await fs.rm(tmp, { force: true }).catch(() => undefined);
      throw storeError('write', file, e);
    }
  }
}
