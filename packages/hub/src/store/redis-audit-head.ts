// The audit head of one daemon's log kept in Redis (distributed mode), next to its copy in
// `state/audit-head.json`: a log rolled back together with its state file is still caught, as long
// as whoever rolled them back could not also write Redis.

import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

import type { RedisConnection } from './redis-client.js';

/** The head as stored: seq and hash of the log's last entry (AuditHead of @finger/firewall). */
export interface RedisAuditHeadValue {
  seq: number;
  hash: string;
}

const HASH_RE = /^[0-9a-f]{64}$/;

/**
 * Names one audit log among the daemons of a cluster, the same for the daemon and for offline
 * `myfinger audit` commands on that machine: `<hostname>:<first 16 hex digits of sha256 of the
 * log directory's real path>` (each daemon has a FINGER_HOME of its own; node ids change at each
 * start). The directory need not exist: its parent's real path is used then.
 */
export function auditHeadId(dir: string, host = hostname()): string {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    try {
      real = join(realpathSync(dirname(dir)), basename(dir));
    } catch {
      real = resolve(dir);
    }
  }
  return `${host}:${createHash('sha256').update(real).digest('hex').slice(0, 16)}`;
}

/**
 * The head of one audit log under `<prefix>audit:head:<id>` (a JSON `{seq, hash, dir, at}`),
 * satisfying the AuditHeadStore of @finger/firewall. `read()` rejects with E_STORE_UNAVAILABLE
 * while Redis is unreachable and with a plain Error when the key holds no head; `write()` is one
 * SET (the AuditLog writes one at a time, newest head last).
 */
export class RedisAuditHeadStore {
  readonly key: string;
  readonly source: string;

  constructor(
    private readonly redis: RedisConnection,
    /** The log directory (kept in the value, for people reading Redis). */
    private readonly dir: string,
    id = auditHeadId(dir),
  ) {
    this.key = redis.key('audit', 'head', id);
    this.source = `the audit head in Redis (${redis.url} ${this.key})`;
  }

  async read(): Promise<RedisAuditHeadValue | undefined> {
    const raw = await this.redis.run('audit_head.get', (c) => c.get(this.key));
    if (raw === null) return undefined;
    let v: Partial<RedisAuditHeadValue> | null = null;
    try {
      v = JSON.parse(raw) as Partial<RedisAuditHeadValue>;
    } catch {
      // reported below
    }
    if (
      v === null ||
      typeof v !== 'object' ||
      !Number.isSafeInteger(v.seq) ||
      (v.seq as number) < 0 ||
      typeof v.hash !== 'string' ||
      !HASH_RE.test(v.hash)
    )
      throw new Error(`${this.source} does not hold {seq, hash}`);
    return { seq: v.seq as number, hash: v.hash };
  }

  async write(head: RedisAuditHeadValue): Promise<void> {
    const value = JSON.stringify({ seq: head.seq, hash: head.hash, dir: this.dir, at: new Date().toISOString() });
    await this.redis.run('audit_head.set', (c) => c.set(this.key, value));
  }
}
