// Where the hash chain continues once its first segments were archived (`myfinger audit
// archive`): `FINGER_HOME/audit/archived.json` names the last archived segment and the seq and
// hash of its last entry, so verification starts there and the log goes on from it.

import { open, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** File name of the anchor in the audit directory. */
export const ANCHOR_FILE = 'archived.json';

/** What `archived.json` holds. */
export interface AuditAnchor {
  /** Segments numbered up to this one were moved to the archive. */
  through_segment: number;
  /** seq of the last archived entry (the log here continues at seq + 1). */
  seq: number;
  /** hash of that entry (the next entry's prev_hash). */
  hash: string;
  /** Where they were moved (informative). */
  to?: string;
  /** When (RFC 3339, informative). */
  at?: string;
}

const HASH_RE = /^[0-9a-f]{64}$/;

/**
 * The anchor of the log in `dir`, undefined when there is none. Throws (with the file named) when
 * it exists but cannot be read or is not an anchor: a log must not silently verify from a
 * guess.
 */
export async function readAnchor(dir: string): Promise<AuditAnchor | undefined> {
  const path = join(dir, ANCHOR_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new Error(`${path} is not valid JSON`);
  }
  const a = v as Partial<AuditAnchor> | null;
  if (
    typeof a !== 'object' ||
    a === null ||
    !Number.isSafeInteger(a.through_segment) ||
    (a.through_segment as number) < 1 ||
    !Number.isSafeInteger(a.seq) ||
    (a.seq as number) < 1 ||
    typeof a.hash !== 'string' ||
    !HASH_RE.test(a.hash)
  )
    throw new Error(`${path} does not name through_segment, seq and hash`);
  return {
    through_segment: a.through_segment as number,
    seq: a.seq as number,
    hash: a.hash,
    ...(typeof a.to === 'string' ? { to: a.to } : {}),
    ...(typeof a.at === 'string' ? { at: a.at } : {}),
  };
}

/** Writes the anchor of `dir` durably: a temporary file, fsync, rename over the old one, fsync of the directory. */
export async function writeAnchor(dir: string, anchor: AuditAnchor): Promise<void> {
  const path = join(dir, ANCHOR_FILE);
  const tmp = `${path}.tmp-${process.pid}`;
  const fh = await open(tmp, 'w', 0o600);
  try {
    await fh.writeFile(`${JSON.stringify(anchor, null, 2)}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await rename(tmp, path);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
  const d = await open(dir, 'r');
  try {
    await d.sync();
  } finally {
    await d.close();
  }
}
