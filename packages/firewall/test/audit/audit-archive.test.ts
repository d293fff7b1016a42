import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { ANCHOR_FILE } from '../../src/audit/audit-anchor.js';
import { archiveAuditLog } from '../../src/audit/audit-archive.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { verifyAuditLog } from '../../src/audit/audit-verify.js';
import { fill, openLog, tempDir } from './helpers.js';

const SMALL = 1024; // a new segment every few entries

const segmentsIn = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.jsonl'));

/** A log in a fresh directory with `n` entries over several segments, closed. */
async function logWith(n: number): Promise<string> {
  const dir = await tempDir();
  const log = await openLog({ dir, max_segment_bytes: SMALL });
  await fill(log, n);
  await log.close();
  return dir;
}

describe('archiveAuditLog', () => {
  it('moves every closed segment, and the log still verifies, reopens and goes on from the anchor', async () => {
    const dir = await logWith(30);
    const all = segmentsIn(dir);
    expect(all.length).toBeGreaterThan(3);
    const to = join(await tempDir(), 'archive');
    const r = await archiveAuditLog(dir, to);
    expect(r.archived).toEqual(all.slice(0, -1));
    expect(segmentsIn(dir)).toEqual(all.slice(-1));
    expect(segmentsIn(to)).toEqual(all.slice(0, -1));
    const anchor = JSON.parse(readFileSync(join(dir, ANCHOR_FILE), 'utf8')) as { seq: number; hash: string };
    expect(r.anchor).toMatchObject({ through_segment: all.length - 1, seq: anchor.seq, hash: anchor.hash, to: r.to });

    // here: from the anchor on; the archive: from the start, on its own
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: true, archived_through: anchor.seq });
    expect(await verifyAuditLog(to)).toEqual({ ok: true, entries: anchor.seq, first_bad: null, reason: null });

    const log = await openLog({ dir, max_segment_bytes: SMALL });
    await fill(log, 10, 30);
    expect(log.head().seq).toBe(40);
    expect(await log.verify()).toMatchObject({ ok: true, archived_through: anchor.seq });
    expect((await log.read({ limit: 1000 })).map((e) => e.seq)[0]).toBe(anchor.seq + 1);
  });

  it('archives again into another directory, which then verifies from the anchor it continues', async () => {
    const dir = await logWith(20);
    const first = join(await tempDir(), 'one');
    await archiveAuditLog(dir, first);
    const log = await openLog({ dir, max_segment_bytes: SMALL });
    await fill(log, 20, 20);
    await log.close();
    const second = join(await tempDir(), 'two');
    const r = await archiveAuditLog(dir, second);
    expect(r.archived.length).toBeGreaterThan(0);
    const inSecond = await verifyAuditLog(second);
    expect(inSecond.ok).toBe(true);
    expect(inSecond.archived_through).toBeGreaterThan(0);
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: true, archived_through: r.anchor!.seq });
  });

  it('goes on from the anchor when only an empty segment is left (numbering and chain)', async () => {
    const dir = await logWith(12);
    const names = segmentsIn(dir);
    const next = Number(/(\d+)/.exec(names.at(-1)!)![1]) + 1;
    writeFileSync(join(dir, `audit-${String(next).padStart(10, '0')}.jsonl`), ''); // a segment just started
    const r = await archiveAuditLog(dir, join(await tempDir(), 'a'));
    expect(r.anchor!.seq).toBe(12);
    const log = await openLog({ dir, max_segment_bytes: SMALL });
    expect(log.head()).toEqual({ seq: 12, hash: r.anchor!.hash });
    await fill(log, 3, 12);
    expect(await log.verify()).toMatchObject({ ok: true, entries: 3, archived_through: 12 });
  });

  it('archives nothing when only the newest segment is there', async () => {
    const dir = await logWith(1);
    const r = await archiveAuditLog(dir, join(await tempDir(), 'a'));
    expect(r).toMatchObject({ archived: [] });
    expect(r.anchor).toBeUndefined();
  });

  it('refuses a broken chain (E_CONFLICT) and moves nothing', async () => {
    const dir = await logWith(20);
    const first = join(dir, segmentsIn(dir)[0]!);
    const [line, ...rest] = readFileSync(first, 'utf8').split('\n');
    const changed = { ...(JSON.parse(line!) as object), ts: '2020-01-01T00:00:00.000Z' };
    writeFileSync(first, [JSON.stringify(changed), ...rest].join('\n'));
    const before = segmentsIn(dir);
    await expect(archiveAuditLog(dir, join(await tempDir(), 'a'))).rejects.toMatchObject({
      code: 'E_CONFLICT',
      message: expect.stringMatching(/^the audit log is broken at entry 1 .*nothing archived/),
    });
    expect(segmentsIn(dir)).toEqual(before);
  });

  it('refuses an archive holding a different file of a segment name (E_CONFLICT), removing nothing', async () => {
    const dir = await logWith(20);
    const to = await tempDir();
    const name = segmentsIn(dir)[0]!;
    writeFileSync(join(to, name), 'something else\n');
    const before = segmentsIn(dir);
    await expect(archiveAuditLog(dir, to)).rejects.toMatchObject({
      code: 'E_CONFLICT',
      details: { file: join(to, name) },
    });
    expect(segmentsIn(dir)).toEqual(before);
    expect(readdirSync(dir)).not.toContain(ANCHOR_FILE);
    // an identical copy already there (an archiving cut short) is fine
    writeFileSync(join(to, name), readFileSync(join(dir, name)));
    await expect(archiveAuditLog(dir, to)).resolves.toMatchObject({ archived: before.slice(0, -1) });
  });

  it('refuses the log directory itself or a directory inside it (E_INVALID_ARGS)', async () => {
    const dir = await logWith(20);
    await expect(archiveAuditLog(dir, dir)).rejects.toMatchObject({ code: 'E_INVALID_ARGS' });
    await expect(archiveAuditLog(dir, join(dir, 'old'))).rejects.toMatchObject({ code: 'E_INVALID_ARGS' });
  });
});

describe('verifying an archived log', () => {
  it('names the anchor when the first entry here does not link to it', async () => {
    const dir = await logWith(20);
    await archiveAuditLog(dir, join(await tempDir(), 'a'));
    const path = join(dir, ANCHOR_FILE);
    const anchor = JSON.parse(readFileSync(path, 'utf8')) as { hash: string };
    writeFileSync(path, JSON.stringify({ ...anchor, hash: 'f'.repeat(64) }));
    const r = await verifyAuditLog(dir);
    expect(r).toMatchObject({ ok: false, reason: expect.stringMatching(/last archived entry \(archived\.json\)$/) });
  });

  it('checks the anchor against the log while the archived segments are still here', async () => {
    const dir = await logWith(20);
    const to = join(await tempDir(), 'a');
    await archiveAuditLog(dir, to);
    // the archived segments put back (as after a restore): verified from the start, the anchor checked too
    for (const f of segmentsIn(to)) await rename(join(to, f), join(dir, f));
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 20, first_bad: null, reason: null });
    const path = join(dir, ANCHOR_FILE);
    const anchor = JSON.parse(readFileSync(path, 'utf8')) as { seq: number; hash: string };
    writeFileSync(path, JSON.stringify({ ...anchor, hash: 'e'.repeat(64) }));
    expect(await verifyAuditLog(dir)).toMatchObject({
      ok: false,
      first_bad: anchor.seq,
      reason: expect.stringMatching(new RegExp(`archived\\.json names another hash for entry ${anchor.seq}$`)),
    });
  });

  it('says segments moved by hand are missing, and how to archive; an unreadable anchor is E_STORE_UNAVAILABLE', async () => {
    const dir = await logWith(20);
    const to = await tempDir();
    for (const f of segmentsIn(dir).slice(0, -1)) await rename(join(dir, f), join(to, f));
    const r = await verifyAuditLog(dir);
    expect(r.ok).toBe(false);
    expect(r.reason).toMatch(/are missing before entry \d+ \(segments moved away by hand\? `myfinger audit archive/);
    writeFileSync(join(dir, ANCHOR_FILE), '{nope');
    await expect(verifyAuditLog(dir)).rejects.toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
    await expect(AuditLog.open({ dir })).rejects.toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
  });
});
