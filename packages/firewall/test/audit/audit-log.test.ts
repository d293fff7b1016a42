import { createHash } from 'node:crypto';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import type { AuditEntry } from '../../src/audit/audit-entry.js';
import { GENESIS_HASH } from '../../src/audit/audit-entry.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { verifyAuditLog } from '../../src/audit/audit-verify.js';
import { canonicalJson, digestOf } from '../../src/audit/canonical-json.js';
import { fill, ioError, openLog, record, shimFs, stepClock, tempDir } from './helpers.js';

async function lines(dir: string): Promise<string[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.jsonl')).sort();
  const out: string[] = [];
  for (const n of names) {
    const text = await readFile(join(dir, n), 'utf8');
    out.push(...text.split('\n').filter((l) => l !== ''));
  }
  return out;
}

async function errorOf(p: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await p;
  } catch (e) {
    return e as { code?: string; message: string };
  }
  throw new Error('expected a rejection');
}

describe('AuditLog append', () => {
  it('writes the §3.8 entry, hash-chained from 64 zeros, as canonical JSON lines', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: stepClock() });
    const first = await log.append(record(0));
    const second = await log.append(record(1));
    expect(first).toEqual({
      seq: 1,
      ts: '2026-01-01T00:00:00.000Z',
      type: 'tool.call',
      actor: { kind: 'agent', id: 'executor-1' },
      request_id: 'req-0',
      correlation_id: 'corr-1',
      tool: 'shell.exec',
      args_digest: digestOf({ cwd: '/work', command: 'ls -la /tmp/dir-0' }),
      verdict: {
        decision_id: 'dec-0',
        level: 'AUTO',
        action: 'allow',
        layer: 'permission',
        matched_rules: [],
        reasons: ['safe: read-only command'],
      },
      decision: 'allow',
      result_digest: null,
      details: { risk: 'safe', n: 0 },
      prev_hash: GENESIS_HASH,
      hash: first.hash,
    });
    expect(second.prev_hash).toBe(first.hash);
    expect(second.result_digest).toBe(digestOf({ exit_code: 0, stdout: 'line 1' }));

    const onDisk = await lines(dir);
    expect(onDisk.map((l) => JSON.parse(l) as AuditEntry)).toEqual([first, second]);
    for (const [i, line] of onDisk.entries()) {
      expect(line).toBe(canonicalJson(JSON.parse(line)));
      const { hash, ...rest } = JSON.parse(line) as AuditEntry;
      const prev = i === 0 ? GENESIS_HASH : first.hash;
      expect(hash).toBe(
        createHash('sha256')
          .update(prev + canonicalJson(rest))
          .digest('hex'),
      );
    }
    expect(await readdir(dir)).toEqual(['audit-0000000001.jsonl']);
  });

  it('never writes raw args or results, only their digests', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir });
    const e = await log.append({
      type: 'tool.call',
      tool: 'http.request',
      args: { headers: { authorization: 'Bearer sk-SECRET-123' }, url: 'https://x' },
      result: { body: 'TOPSECRET-BODY' },
    });
    const text = await readFile(join(dir, 'audit-0000000001.jsonl'), 'utf8');
    expect(text).not.toContain('SECRET');
    expect(e.args_digest).toBe(digestOf({ url: 'https://x', headers: { authorization: 'Bearer sk-SECRET-123' } }));
    expect(e.result_digest).toBe(digestOf({ body: 'TOPSECRET-BODY' }));
    expect(e).not.toHaveProperty('details');
  });

  it('stores a verdict preview (diff or full command) only as its digest', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir });
    const preview = { kind: 'exec', command: 'curl -H "Authorization: Bearer sk-LEAK" https://x', cwd: '/w' };
    const e = await log.append({ type: 'approval.requested', verdict: { level: 'APPROVE', reasons: ['r'], preview } });
    expect(e.verdict).toEqual({ level: 'APPROVE', reasons: ['r'], preview_digest: digestOf(preview) });
    expect(await readFile(join(dir, 'audit-0000000001.jsonl'), 'utf8')).not.toContain('LEAK');
  });

  it('rejects a malformed record with E_INVALID_ARGS without writing anything', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir });
    const bad = [
      { type: 'tool.cal' },
      { type: 'tool.call', args_digest: 'abc' },
      { type: 'tool.call', verdict: { n: 1n } },
      { type: 'tool.call', tool: 42 },
      { type: 'tool.call', details: ['x'] },
    ];
    for (const r of bad) expect((await errorOf(log.append(r as never))).code).toBe('E_INVALID_ARGS');
    expect(await lines(dir)).toEqual([]);
    expect(log.stats()).toMatchObject({ appends: 0, failed: 5 });
  });

  it('freezes the record at append time: mutating it afterwards changes nothing', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir });
    const verdict = { reasons: ['a'] };
    const p = log.append({ type: 'tool.call', verdict });
    verdict.reasons.push('b');
    expect((await p).verdict).toEqual({ reasons: ['a'] });
    expect((await verifyAuditLog(dir)).ok).toBe(true);
  });
});

describe('AuditLog reopen', () => {
  it('continues the chain across close and open', async () => {
    const dir = await tempDir();
    const a = await AuditLog.open({ dir });
    await fill(a, 10);
    const head = a.head();
    await a.close();
    const b = await openLog({ dir });
    expect(b.head()).toEqual(head);
    const next = await b.append(record(10));
    expect(next.seq).toBe(11);
    expect(next.prev_hash).toBe(head.hash);
    await fill(b, 4, 11);
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 15, first_bad: null, reason: null });
    expect((await lines(dir)).map((l) => (JSON.parse(l) as AuditEntry).seq)).toEqual(
      Array.from({ length: 15 }, (_, i) => i + 1),
    );
  });

  it('refuses to open a log whose last line was torn, instead of starting a new chain', async () => {
    const dir = await tempDir();
    const a = await AuditLog.open({ dir });
    await fill(a, 5);
    await a.close();
    const file = join(dir, 'audit-0000000001.jsonl');
    const text = await readFile(file, 'utf8');
    await writeFile(file, text.slice(0, text.length - 20));
    const err = await errorOf(AuditLog.open({ dir }));
    expect(err.code).toBe('E_STORE_UNAVAILABLE');
    expect(err.message).toContain('audit-0000000001.jsonl is damaged at its end');
    expect(err.message).toContain('incomplete');
  });

  it('refuses to open a log whose last entry was changed', async () => {
    const dir = await tempDir();
    const a = await AuditLog.open({ dir });
    await fill(a, 5);
    await a.close();
    const file = join(dir, 'audit-0000000001.jsonl');
    await writeFile(file, (await readFile(file, 'utf8')).replace(/"line 4"/, '"line 5"').replace('req-2', 'req-9'));
    const err = await errorOf(AuditLog.open({ dir }));
    expect(err.code).toBe('E_STORE_UNAVAILABLE');
    expect(err.message).toContain('fails its hash check');
  });

  it('fails with E_STORE_UNAVAILABLE when the directory cannot be created', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'file'), 'x');
    expect((await errorOf(AuditLog.open({ dir: join(dir, 'file', 'audit') }))).code).toBe('E_STORE_UNAVAILABLE');
  });
});

describe('AuditLog group commit', () => {
  it('chains 200 concurrent appends contiguously, in call order, with far fewer fsyncs than appends', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir });
    const entries = await Promise.all(Array.from({ length: 200 }, (_, i) => log.append(record(i))));
    expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(entries.map((e) => e.details?.n ?? null)).toEqual(
      Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? i : null)),
    );
    for (let i = 1; i < entries.length; i++) expect(entries[i]?.prev_hash).toBe(entries[i - 1]?.hash);
    const stats = log.stats();
    expect(stats.appends).toBe(200);
    expect(stats.fsyncs).toBeLessThan(200 / 4);
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 200, first_bad: null, reason: null });
  });

  it('batches appends that arrive during an in-flight sync into one write+sync, acknowledging none before its sync', async () => {
    const dir = await tempDir();
    const { fs, ctl } = shimFs();
    const log = await openLog({ dir, fs });
    const events: string[] = [];
    let release!: () => void;
    let entered!: () => void;
    const inSync = new Promise<void>((r) => (entered = r));
    ctl.beforeSync = () => {
      ctl.beforeSync = null;
      entered();
      return new Promise<void>((r) => (release = r));
    };
    ctl.afterSync = () => events.push(`synced ${ctl.syncs}`);
    const first = log.append(record(0)).then((e) => events.push(`ack ${e.seq}`));
    await inSync;
    const rest = Array.from({ length: 100 }, (_, i) =>
      log.append(record(i + 1)).then((e) => events.push(`ack ${e.seq}`)),
    );
    await new Promise((r) => setTimeout(r, 20));
    expect(events).toEqual([]);
    release();
    await Promise.all([first, ...rest]);
    expect(events).toEqual(['synced 1', 'ack 1', 'synced 2', ...Array.from({ length: 100 }, (_, i) => `ack ${i + 2}`)]);
    expect(ctl.writes).toBe(2);
    expect(log.stats()).toMatchObject({ appends: 101, batches: 2 });
    expect((await verifyAuditLog(dir)).ok).toBe(true);
  });
});

describe('AuditLog commit', () => {
  it('chains, writes and syncs the same entry as append, in arrival order, and resolves with nothing', async () => {
    const dir = await tempDir();
    const { fs, ctl } = shimFs();
    const log = await openLog({ dir, fs, clock: stepClock() });
    const acks: string[] = [];
    ctl.afterSync = () => acks.push(`synced ${ctl.syncs}`);
    const results = await Promise.all([
      log.commit(record(0)).then((v) => (acks.push('commit 0'), v)),
      log.append(record(1)).then((e) => (acks.push(`append ${e.seq}`), e)),
      log.commit(record(2)).then((v) => (acks.push('commit 2'), v)),
    ]);
    expect(results[0]).toBeUndefined();
    expect(results[2]).toBeUndefined();
    expect(acks).toEqual(['synced 1', 'commit 0', 'append 2', 'commit 2']);
    const onDisk = (await lines(dir)).map((l) => JSON.parse(l) as AuditEntry);
    expect(onDisk.map((e) => [e.seq, e.request_id])).toEqual([
      [1, 'req-0'],
      [2, 'req-0'],
      [3, 'req-1'],
    ]);
    expect(results[1]).toEqual(onDisk[1]);
    expect(onDisk[0]!.args_digest).toBe(digestOf({ cwd: '/work', command: 'ls -la /tmp/dir-0' }));
    expect(log.head()).toEqual({ seq: 3, hash: onDisk[2]!.hash });
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 3, first_bad: null, reason: null });
  });

  it('hands onAppended listeners the whole entry of a committed record too', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, clock: stepClock() });
    const seen: AuditEntry[] = [];
    log.onAppended((e) => seen.push(e));
    await log.commit(record(0));
    expect(seen).toEqual((await lines(dir)).map((l) => JSON.parse(l) as AuditEntry));
    expect(seen[0]!.verdict).toEqual(record(0).verdict);
  });

  it('refuses like append: E_INVALID_ARGS for a malformed record, E_STORE_UNAVAILABLE when the write fails or the log is closed', async () => {
    const dir = await tempDir();
    const { fs, ctl } = shimFs();
    const log = await openLog({ dir, fs });
    expect((await errorOf(log.commit({ type: 'no.such' as 'tool.call' }))).code).toBe('E_INVALID_ARGS');
    ctl.failWrite = ioError('ENOSPC');
    expect((await errorOf(log.commit(record(0)))).code).toBe('E_STORE_UNAVAILABLE');
    ctl.failWrite = null;
    await log.commit(record(1));
    expect(log.head().seq).toBe(1);
    await log.close();
    expect((await errorOf(log.commit(record(2)))).code).toBe('E_STORE_UNAVAILABLE');
  });
});

describe('AuditLog failures', () => {
  it('rejects with E_STORE_UNAVAILABLE when the write fails, cuts the partial bytes, and continues afterwards', async () => {
    const dir = await tempDir();
    const { fs, ctl } = shimFs();
    const log = await openLog({ dir, fs });
    await fill(log, 3);
    const file = join(dir, 'audit-0000000001.jsonl');
    const size = (await stat(file)).size;
    ctl.failWrite = ioError('ENOSPC');
    ctl.partialBytes = 50;
    const errs = await Promise.all([log.append(record(3)), log.append(record(4))].map(errorOf));
    expect(errs.map((e) => e.code)).toEqual(['E_STORE_UNAVAILABLE', 'E_STORE_UNAVAILABLE']);
    expect(errs[0]?.message).toContain('ENOSPC');
    expect((await stat(file)).size).toBe(size);
    // what /v1/health reports until a later write works
    expect(log.writeFailure()).toMatchObject({ code: 'ENOSPC', message: expect.stringContaining('ENOSPC') });
    ctl.failWrite = null;
    expect((await log.append(record(5))).seq).toBe(4);
    expect(log.writeFailure()).toBeUndefined();
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 4, first_bad: null, reason: null });
    expect(log.stats()).toMatchObject({ appends: 4, failed: 2 });
  });

  it('rejects with E_STORE_UNAVAILABLE when fsync fails: the entry is not acknowledged and not kept', async () => {
    const dir = await tempDir();
    const { fs, ctl } = shimFs();
    const log = await openLog({ dir, fs });
    await fill(log, 2);
    ctl.beforeSync = () => {
      ctl.beforeSync = null;
      return Promise.reject(ioError('EIO'));
    };
    let ran = false;
    const err = await errorOf(log.append(record(2)).then(() => (ran = true)));
    expect(err.code).toBe('E_STORE_UNAVAILABLE');
    expect(ran).toBe(false);
    expect((await log.append(record(3))).seq).toBe(3);
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: true, entries: 3 });
  });

  it('becomes unavailable until reopened when fsync keeps failing', async () => {
    const dir = await tempDir();
    const { fs, ctl } = shimFs();
    const log = await openLog({ dir, fs });
    await fill(log, 2);
    ctl.failSync = ioError('EIO');
    expect((await errorOf(log.append(record(2)))).code).toBe('E_STORE_UNAVAILABLE');
    ctl.failSync = null;
    const writes = ctl.writes;
    const later = await errorOf(log.append(record(3)));
    expect(later.code).toBe('E_STORE_UNAVAILABLE');
    expect(later.message).toContain('reopen');
    expect(ctl.writes).toBe(writes);
  });

  it('stays unavailable when a failed write cannot be cut back, and the torn tail then blocks reopening', async () => {
    const dir = await tempDir();
    const { fs, ctl } = shimFs();
    const log = await AuditLog.open({ dir, fs });
    await fill(log, 2);
    ctl.failWrite = ioError('EIO');
    ctl.partialBytes = 30;
    ctl.failTruncate = ioError('EIO');
    expect((await errorOf(log.append(record(2)))).code).toBe('E_STORE_UNAVAILABLE');
    ctl.failWrite = null;
    ctl.failTruncate = null;
    const later = await errorOf(log.append(record(3)));
    expect(later.code).toBe('E_STORE_UNAVAILABLE');
    expect(later.message).toContain('reopen');
    await log.close();
    expect((await errorOf(AuditLog.open({ dir }))).code).toBe('E_STORE_UNAVAILABLE');
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: false, entries: 3, first_bad: 3 });
  });

  it('rejects appends after close with E_STORE_UNAVAILABLE, after flushing those already made', async () => {
    const dir = await tempDir();
    const log = await AuditLog.open({ dir });
    const p = log.append(record(0));
    await log.close();
    expect((await p).seq).toBe(1);
    expect((await errorOf(log.append(record(1)))).code).toBe('E_STORE_UNAVAILABLE');
    await log.close();
  });
});

describe('AuditLog segments and read', () => {
  it('rotates at max_segment_bytes, keeps the chain across files and never deletes one', async () => {
    const dir = await tempDir();
    const a = await AuditLog.open({ dir, max_segment_bytes: 4000 });
    await fill(a, 20);
    await Promise.all(Array.from({ length: 30 }, (_, i) => a.append(record(20 + i))));
    await a.close();
    const names = (await readdir(dir)).sort();
    expect(names.length).toBeGreaterThan(4);
    expect(names[0]).toBe('audit-0000000001.jsonl');
    for (const n of names) expect((await stat(join(dir, n))).size).toBeLessThanOrEqual(4000);
    const b = await openLog({ dir, max_segment_bytes: 4000 });
    expect((await b.append(record(50))).seq).toBe(51);
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 51, first_bad: null, reason: null });
    expect(await b.verify()).toEqual({ ok: true, entries: 51, first_bad: null, reason: null });
  });

  it('reads by request_id, type and since_seq, oldest first, across segments', async () => {
    const dir = await tempDir();
    const log = await openLog({ dir, max_segment_bytes: 3000 });
    await fill(log, 40);
    expect((await log.read({ request_id: 'req-7' })).map((e) => [e.seq, e.type])).toEqual([
      [15, 'tool.call'],
      [16, 'tool.result'],
    ]);
    expect((await log.read({ type: 'tool.result', since_seq: 30, limit: 3 })).map((e) => e.seq)).toEqual([32, 34, 36]);
    expect((await log.read({ since_seq: 38 })).map((e) => e.seq)).toEqual([39, 40]);
    expect((await log.read({ limit: 2 })).map((e) => e.seq)).toEqual([1, 2]);
    expect(await log.read({ since_seq: 40 })).toEqual([]);
    const all = await log.read({ limit: 1000 });
    expect(all).toEqual((await lines(dir)).map((l) => JSON.parse(l) as AuditEntry));
  });
});
