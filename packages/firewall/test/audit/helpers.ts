import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach } from 'vitest';

import type { AuditRecord } from '../../src/audit/audit-entry.js';
import type { AuditFile, AuditFileSystem } from '../../src/audit/audit-files.js';
import { nodeAuditFileSystem } from '../../src/audit/audit-files.js';
import type { AuditLogOptions } from '../../src/audit/audit-log.js';
import { AuditLog } from '../../src/audit/audit-log.js';

const dirs: string[] = [];
const logs: AuditLog[] = [];

afterEach(async () => {
  await Promise.all(logs.splice(0).map((l) => l.close()));
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A fresh temp dir, removed after the test. */
export async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'finger-audit-'));
  dirs.push(d);
  return d;
}

/** Opens a log that is closed after the test. */
export async function openLog(options: AuditLogOptions): Promise<AuditLog> {
  const log = await AuditLog.open(options);
  logs.push(log);
  return log;
}

/** A fixed clock starting at 2026-01-01T00:00:00Z, advancing 1 ms per read. */
export function stepClock(): { now(): number } {
  let t = Date.UTC(2026, 0, 1);
  return { now: () => t++ };
}

/** A realistic record, the i-th of a run: a tool call with a verdict, or its result. */
export function record(i: number): AuditRecord {
  const request_id = `req-${Math.floor(i / 2)}`;
  if (i % 2 === 1) {
    return {
      type: 'tool.result',
      actor: { kind: 'agent', id: 'executor-1' },
      request_id,
      correlation_id: 'corr-1',
      tool: 'shell.exec',
      decision: 'success',
      result: { exit_code: 0, stdout: `line ${i}` },
    };
  }
  return {
    type: 'tool.call',
    actor: { kind: 'agent', id: 'executor-1' },
    request_id,
    correlation_id: 'corr-1',
    tool: 'shell.exec',
    args: { command: `ls -la /tmp/dir-${i}`, cwd: '/work' },
    verdict: {
      decision_id: `dec-${i}`,
      level: 'AUTO',
      action: 'allow',
      layer: 'permission',
      matched_rules: [],
      reasons: ['safe: read-only command'],
    },
    decision: 'allow',
    details: { risk: 'safe', n: i },
  };
}

/** Appends records 0..n-1 one after another. */
export async function fill(log: AuditLog, n: number, from = 0): Promise<void> {
  for (let i = from; i < from + n; i++) await log.append(record(i));
}

/** What a shim does instead of the real call: throw, or run the real one (optionally after a wait). */
export interface ShimControl {
  failWrite: Error | null;
  /** Write this many bytes of the buffer, then throw `failWrite`. */
  partialBytes: number;
  failSync: Error | null;
  failTruncate: Error | null;
  /** Awaited before every datasync (hold a write in flight). */
  beforeSync: (() => Promise<void>) | null;
  /** Called after every successful datasync. */
  afterSync: (() => void) | null;
  writes: number;
  syncs: number;
}

/** A file system shim over the real one, steered by the returned control object. */
export function shimFs(): { fs: AuditFileSystem; ctl: ShimControl } {
  const ctl: ShimControl = {
    failWrite: null,
    partialBytes: 0,
    failSync: null,
    failTruncate: null,
    beforeSync: null,
    afterSync: null,
    writes: 0,
    syncs: 0,
  };
  const fs: AuditFileSystem = {
    async openAppend(path) {
      const real = await nodeAuditFileSystem.openAppend(path);
      const file: AuditFile = {
        async write(data) {
          ctl.writes++;
          if (ctl.failWrite !== null) {
            if (ctl.partialBytes > 0) await real.write(data.subarray(0, ctl.partialBytes));
            throw ctl.failWrite;
          }
          await real.write(data);
        },
        async datasync() {
          if (ctl.beforeSync !== null) await ctl.beforeSync();
          if (ctl.failSync !== null) throw ctl.failSync;
          await real.datasync();
          ctl.syncs++;
          ctl.afterSync?.();
        },
        async truncate(length) {
          if (ctl.failTruncate !== null) throw ctl.failTruncate;
          await real.truncate(length);
        },
        close: () => real.close(),
      };
      return file;
    },
    syncDir: (dir) => nodeAuditFileSystem.syncDir(dir),
  };
  return { fs, ctl };
}

/** An errno-style error as node:fs throws it. */
export function ioError(code: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: simulated`), { code });
}
