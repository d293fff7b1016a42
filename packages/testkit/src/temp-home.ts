import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A temp directory removed on dispose. */
export interface TempDir extends AsyncDisposable {
  readonly path: string;
  remove(): Promise<void>;
}

/** Creates a fresh temp directory (e.g. a FINGER_HOME for one test). */
export async function tempDir(prefix = 'finger-test-'): Promise<TempDir> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  const remove = () => rm(path, { recursive: true, force: true });
  return { path, remove, [Symbol.asyncDispose]: remove };
}
