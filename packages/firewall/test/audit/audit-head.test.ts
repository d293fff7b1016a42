import { copyFile, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { isFingerError } from '@finger/protocol';

import { acknowledgeAuditGap } from '../../src/audit/audit-acknowledge.js';
import { archiveAuditLog } from '../../src/audit/audit-archive.js';
import type { AuditEntry } from '../../src/audit/audit-entry.js';
import { segmentName } from '../../src/audit/audit-files.js';
import type { AuditHead, AuditHeadStore } from '../../src/audit/audit-head.js';
import { FileAuditHeadStore, readAuditHeadFile } from '../../src/audit/audit-head.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { verifyAuditLog } from '../../src/audit/audit-verify.js';
import { fill, openLog, record, stepClock, tempDir } from './helpers.js';

const SEG1 = segmentName(1);

/** A home-like layout: `<root>/audit` and the head in `<root>/state/audit-head.json`. */
async function layout(): Promise<{ root: string; dir: string; headFile: string; store: FileAuditHeadStore }> {
  const root = await tempDir();
  const headFile = join(root, 'state', 'audit-head.json');
  return { root, dir: join(root, 'audit'), headFile, store: new FileAuditHeadStore(headFile) };
}

/** Writes `n` entries through a log that keeps its head in `store`, and closes it. */
async function written(dir: string, store: AuditHeadStore, n: number): Promise<AuditEntry[]> {
  const log = await AuditLog.open({ dir, clock: stepClock(), heads: [store] });
  // appended together: one write + fsync for all of them
  const out = await Promise.all(Array.from({ length: n }, (_, i) => log.append(record(i))));
  await log.close();
  return out;
}

/** The error `p` rejects with, as `{code, message, details}`. */
async function failure(p: Promise<unknown>): Promise<{ code: string; message: string; details: any }> {
  try {
    await p;
  } catch (e) {
    if (!isFingerError(e)) throw e;
    return { code: e.code, message: e.message, details: e.details };
  }
  throw new Error('expected a rejection');
}

/** The first `k` lines of segment 1. */
async function firstLines(dir: string, k: number): Promise<string> {
  const lines = (await readFile(join(dir, SEG1), 'utf8')).split('\n');
  return lines
    .slice(0, k)
    .map((l) => `${l}\n`)
    .join('');
}

describe('the audit head (state/audit-head.json)', () => {
  it('is written with every batch and at close: the last entry seq and hash, mode 0600', async () => {
    const { dir, headFile, store } = await layout();
    const log = await openLog({ dir, heads: [store] });
    expect(await readAuditHeadFile(headFile)).toEqual({ seq: 0, hash: '0'.repeat(64) });
    await fill(log, 3);
    const last = await log.append(record(3));
    await log.close();
    expect(await readAuditHeadFile(headFile)).toEqual({ seq: 4, hash: last.hash });
    expect((await stat(headFile)).mode & 0o777).toBe(0o600);
  });

  it('an emptied log (segment cut to 0 bytes) refuses to open with E_AUDIT_BROKEN naming the missing entries', async () => {
    const { dir, headFile, store } = await layout();
    const entries = await written(dir, store, 5);
    await truncate(join(dir, SEG1), 0);
    const err = await failure(AuditLog.open({ dir, heads: [store] }));
    const reason = `missing: no audit entries in ${dir} but ${headFile} records entry 5 (hash ${entries[4]!.hash.slice(0, 12)}…): 5 entries missing (the log was emptied or deleted)`;
    expect(err).toEqual({
      code: 'E_AUDIT_BROKEN',
      message: expect.stringContaining(`audit log ${dir} is broken: ${reason}.`),
      details: { dir, first_bad: 1, reason, source: headFile },
    });
    // the head is left as it was, and verify names the same gap
    expect(await readAuditHeadFile(headFile)).toEqual({ seq: 5, hash: entries[4]!.hash });
    expect(await verifyAuditLog(dir, { heads: [{ seq: 5, hash: entries[4]!.hash, source: headFile }] })).toEqual({
      ok: false,
      entries: 0,
      first_bad: 1,
      reason,
    });
  });

  it('a deleted audit directory refuses to open, and nothing is created in its place', async () => {
    const { dir, store } = await layout();
    await written(dir, store, 3);
    await rm(dir, { recursive: true });
    const err = await failure(AuditLog.open({ dir, heads: [store] }));
    expect([err.code, err.details.first_bad, err.details.reason]).toEqual([
      'E_AUDIT_BROKEN',
      1,
      expect.stringMatching(/^missing: no audit entries in .* 3 entries missing/),
    ]);
    await expect(stat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a log cut short is "truncated", first_bad the first missing entry', async () => {
    const { dir, headFile, store } = await layout();
    const entries = await written(dir, store, 1210);
    await writeFile(join(dir, SEG1), await firstLines(dir, 6));
    const err = await failure(AuditLog.open({ dir, heads: [store] }));
    expect(err.code).toBe('E_AUDIT_BROKEN');
    expect(err.details).toEqual({
      dir,
      first_bad: 7,
      reason: `truncated: 1,204 entries missing — the log ends at entry 6 (${SEG1}:6) but ${headFile} records entry 1,210 (hash ${entries[1209]!.hash.slice(0, 12)}…) (cut short, or replaced by an older copy)`,
      source: headFile,
    });
  });

  it('a log replaced by an older copy of itself (rolled back) is detected', async () => {
    const { root, dir, store } = await layout();
    await written(dir, store, 4);
    const copy = join(root, 'old-copy.jsonl');
    await copyFile(join(dir, SEG1), copy);
    const log = await AuditLog.open({ dir, heads: [store] });
    await fill(log, 3, 4);
    await log.close();
    await copyFile(copy, join(dir, SEG1));
    const err = await failure(AuditLog.open({ dir, heads: [store] }));
    expect([err.code, err.details.first_bad, err.details.reason]).toEqual([
      'E_AUDIT_BROKEN',
      5,
      expect.stringMatching(/^truncated: 3 entries missing — the log ends at entry 4 /),
    ]);
  });

  it('a log rewritten to the same length (another chain) is "rewritten" at the head entry', async () => {
    const { root, dir, store } = await layout();
    await written(dir, store, 3);
    const forged = join(root, 'forged');
    const other = await AuditLog.open({ dir: forged });
    for (let i = 0; i < 3; i++) await other.append({ type: 'halt', details: { forged: i } });
    await other.close();
    await copyFile(join(forged, SEG1), join(dir, SEG1));
    const err = await failure(AuditLog.open({ dir, heads: [store] }));
    expect([err.code, err.details.first_bad, err.details.reason]).toEqual([
      'E_AUDIT_BROKEN',
      3,
      expect.stringMatching(/^rewritten: entry 3 \(audit-0000000001\.jsonl:3\) has hash [0-9a-f]{12}… but .* records /),
    ]);
  });

  it('a head behind the log with the same hash at its seq (written before a crash) is brought up to date', async () => {
    const { dir, headFile, store } = await layout();
    const entries = await written(dir, store, 8);
    await writeFile(headFile, JSON.stringify({ seq: 5, hash: entries[4]!.hash }));
    const log = await openLog({ dir, heads: [store] });
    expect(log.head()).toEqual({ seq: 8, hash: entries[7]!.hash });
    expect(await readAuditHeadFile(headFile)).toEqual({ seq: 8, hash: entries[7]!.hash });
    // a head behind the log whose hash differs is not a lag: refused
    await log.close();
    await writeFile(headFile, JSON.stringify({ seq: 5, hash: entries[3]!.hash }));
    const err = await failure(AuditLog.open({ dir, heads: [store] }));
    expect([err.code, err.details.first_bad]).toEqual(['E_AUDIT_BROKEN', 5]);
  });

  it('a missing head with a log (the first start after the upgrade) is created from the log, with a warning', async () => {
    const { dir, headFile } = await layout();
    const plain = await AuditLog.open({ dir });
    await fill(plain, 3);
    const last = plain.head();
    await plain.close();
    const warned: unknown[] = [];
    const logger = { info() {}, error() {}, warn: (o: unknown, msg?: string) => warned.push([o, msg]) };
    const log = await openLog({ dir, heads: [new FileAuditHeadStore(headFile)], logger });
    expect(await readAuditHeadFile(headFile)).toEqual(last);
    expect(warned).toEqual([
      [
        { dir, source: headFile, seq: 3 },
        'audit head was missing: recorded from the log (the first start with it, or it was deleted)',
      ],
    ]);
    await log.append(record(3));
  });

  it('a head file that is not a head refuses to open with E_AUDIT_BROKEN naming the file', async () => {
    const { dir, headFile, store } = await layout();
    await written(dir, store, 2);
    await writeFile(headFile, '{"seq":');
    const err = await failure(AuditLog.open({ dir, heads: [store] }));
    expect([err.code, err.details.first_bad, err.details.source, err.details.reason]).toEqual([
      'E_AUDIT_BROKEN',
      null,
      headFile,
      expect.stringContaining(`the audit head ${headFile} is not valid JSON`),
    ]);
  });

  it('a store that fails to write never fails an append: the failure is logged once and the head lags', async () => {
    const { dir } = await layout();
    let failing = false;
    let written: AuditHead | undefined;
    const store: AuditHeadStore = {
      source: 'flaky',
      read: async () => written,
      write: async (h) => {
        if (failing) throw new Error('disk full');
        written = h;
      },
    };
    const errors: string[] = [];
    const logger = { info() {}, error: (_o: unknown, msg?: string) => errors.push(msg ?? '') };
    const log = await openLog({ dir, heads: [store], logger });
    await fill(log, 2);
    failing = true;
    await fill(log, 3, 2);
    expect(log.stats()).toMatchObject({ appends: 5, failed: 0 });
    expect(written?.seq).toBe(2);
    failing = false;
    await log.append(record(5));
    await log.close();
    expect(written).toEqual(log.head());
    expect(errors).toEqual(['audit head could not be written: it lags behind the log until a write succeeds']);
  });

  it('the live verify() checks the log against its stores', async () => {
    const { dir, headFile, store } = await layout();
    const log = await openLog({ dir, heads: [store] });
    await fill(log, 4);
    await log.close();
    const again = await openLog({ dir, heads: [store] });
    expect(await again.verify()).toEqual({ ok: true, entries: 4, first_bad: null, reason: null });
    // a copy that the log does not reach (say, the file was cut while the daemon ran)
    await writeFile(headFile, JSON.stringify({ seq: 9, hash: 'a'.repeat(64) }));
    expect(await again.verify()).toMatchObject({
      ok: false,
      first_bad: 5,
      reason: expect.stringMatching(/^truncated: 5 entries missing/),
    });
  });

  it('an archived log verifies against its head, and opens', async () => {
    const { root, dir, store } = await layout();
    const log = await AuditLog.open({ dir, heads: [store], max_segment_bytes: 2048 });
    await fill(log, 12);
    const head = log.head();
    await log.close();
    await archiveAuditLog(dir, join(root, 'archive'));
    const reopened = await openLog({ dir, heads: [store] });
    expect(reopened.head()).toEqual(head);
    expect((await reopened.verify()).ok).toBe(true);
  });
});

describe('acknowledgeAuditGap (audit acknowledge)', () => {
  const by = { kind: 'human', id: 'alice' };

  it('starts a new chain over an emptied log: the old files kept aside, the gap in the first entry, the head reset', async () => {
    const { dir, headFile, store } = await layout();
    const entries = await written(dir, store, 5);
    await writeFile(join(dir, SEG1), await firstLines(dir, 2));
    const old = await readFile(join(dir, SEG1), 'utf8');
    const r = await acknowledgeAuditGap(dir, {
      heads: [store],
      by,
      reason: 'disk restored from a backup',
      clock: stepClock(),
    });
    expect(r.superseded).toBe(join(dir, 'superseded-20260101T000000Z'));
    expect(await readdir(r.superseded!)).toEqual([SEG1]);
    expect(await readFile(join(r.superseded!, SEG1), 'utf8')).toBe(old);
    expect(r.entry).toMatchObject({
      seq: 1,
      type: 'audit.acknowledged',
      actor: by,
      decision: 'new_chain',
      prev_hash: '0'.repeat(64),
      details: {
        previous_heads: [{ seq: 5, hash: entries[4]!.hash, source: headFile }],
        found: {
          entries: 2,
          first_bad: 3,
          reason: expect.stringMatching(/^truncated: 3 entries missing/),
          last: { seq: 2, hash: entries[1]!.hash },
        },
        superseded: 'superseded-20260101T000000Z',
        acknowledged_at: '2026-01-01T00:00:00.000Z',
        reason: 'disk restored from a backup',
      },
    });
    expect(r.head).toEqual({ seq: 1, hash: r.entry.hash });
    expect(await readAuditHeadFile(headFile)).toEqual(r.head);
    // the log opens against its head, continues the new chain, and verifies; the old files verify on their own
    const log = await openLog({ dir, heads: [store] });
    await log.append(record(0));
    expect(await log.verify()).toEqual({ ok: true, entries: 2, first_bad: null, reason: null });
    expect(await verifyAuditLog(r.superseded!)).toEqual({ ok: true, entries: 2, first_bad: null, reason: null });
  });

  it('an older copy of the head named by the acknowledgement is superseded; a head that the new chain does not reach is not', async () => {
    const { dir, store } = await layout();
    const entries = await written(dir, store, 3);
    await truncate(join(dir, SEG1), 0);
    const copy = { seq: 2, hash: entries[1]!.hash, source: 'the copy' };
    const r = await acknowledgeAuditGap(dir, { heads: [store], copies: [copy], by });
    expect(r.entry.details?.previous_heads).toEqual([
      { seq: 3, hash: entries[2]!.hash, source: store.source },
      { seq: 2, hash: entries[1]!.hash, source: 'the copy' },
    ]);
    expect(await readdir(r.superseded!)).toEqual([SEG1]);
    expect((await verifyAuditLog(dir, { heads: [copy] })).ok).toBe(true);
    expect(await verifyAuditLog(dir, { heads: [{ seq: 7, hash: 'b'.repeat(64), source: 'another' }] })).toMatchObject({
      ok: false,
      first_bad: 2,
    });
  });

  it('acknowledges an unreadable head file too', async () => {
    const { dir, headFile, store } = await layout();
    await written(dir, store, 2);
    await writeFile(headFile, 'garbage');
    const r = await acknowledgeAuditGap(dir, { heads: [store], by });
    expect(r.unreadable).toEqual([{ source: headFile, error: `the audit head ${headFile} is not valid JSON` }]);
    expect(r.found).toEqual({ ok: true, entries: 2, first_bad: null, reason: null });
    expect(r.entry.details?.unreadable).toEqual(r.unreadable);
  });

  it('refuses with E_CONFLICT when the log is intact and reaches its head: nothing moved', async () => {
    const { dir, store } = await layout();
    await written(dir, store, 2);
    const err = await failure(acknowledgeAuditGap(dir, { heads: [store], by }));
    expect(err).toEqual({
      code: 'E_CONFLICT',
      message: `nothing to acknowledge: the audit log in ${dir} is intact (2 entries) and reaches its recorded head`,
      details: { dir, entries: 2 },
    });
    expect((await readdir(dir)).sort()).toEqual([SEG1]);
  });
});
