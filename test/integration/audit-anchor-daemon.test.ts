// The audit head against the real daemon: an emptied, deleted or rolled-back audit log refuses
// the start with E_AUDIT_BROKEN, `audit verify` names the gap, and after `audit acknowledge` the
// daemon starts again on a new chain whose first entry records what was lost.
import { copyFile, cp, readFile, rm, truncate } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { isFingerError } from '@finger/protocol';
import { startTestDaemon, type TestDaemon } from '@finger/testkit';

import { run } from '../../packages/cli/src/main.js';

const SEGMENT = 'audit-0000000001.jsonl';
const config = { log: { level: 'silent' as const }, modules: { builtin: false } };

/** Homes made by this suite, removed at the end (a refused start leaves its home behind). */
const homes: string[] = [];
afterAll(async () => {
  for (const h of homes.splice(0)) await rm(h, { recursive: true, force: true });
});

/** A daemon on a copy of `from` (or a fresh home); its home is kept after close. */
async function startOn(from?: string): Promise<TestDaemon> {
  return startTestDaemon({
    keepHome: true,
    config,
    prepareHome: async (home) => {
      homes.push(home);
      if (from !== undefined) await cp(from, home, { recursive: true });
    },
  });
}

/** The error a start on a copy of `from` is refused with (the copy is gone then: `from` is what the CLI checks). */
async function refusedOn(from: string): Promise<{ code: string; details: any; message: string }> {
  try {
    const d = await startOn(from);
    await d.close();
  } catch (e) {
    if (!isFingerError(e)) throw e;
    return { code: e.code, details: e.details, message: e.message };
  }
  throw new Error('the daemon started');
}

/** Runs `myfinger` in-process on `home`; stdout parsed as JSON. */
async function cli(home: string, ...argv: string[]): Promise<{ code: number; json: any }> {
  let stdout = '';
  const sink = (s: string): boolean => ((stdout += s), true);
  const code = await run([...argv, '--json', '--home', home], {
    env: {},
    stdout: { write: sink, isTTY: false },
    stderr: { write: () => true, isTTY: false },
  });
  return { code, json: JSON.parse(stdout) };
}

/** A stopped daemon's home with a few audited admin changes in its log; and its last seq. */
async function homeWithEntries(): Promise<{ home: string; seq: number }> {
  const d = await startOn();
  for (const tool of ['one.*', 'two.*', 'three.*'])
    expect((await d.http('POST', '/v1/grants', { role: 'executor', tool })).status).toBe(201);
  const seq = (await d.http<{ head: { seq: number } }>('GET', '/v1/audit')).body.head.seq;
  await d.close();
  return { home: d.home, seq };
}

describe('the audit head refuses a daemon start over a broken log (real daemon)', () => {
  it('an emptied log: E_AUDIT_BROKEN, and `audit verify` names the gap', async () => {
    const { home, seq } = await homeWithEntries();
    await truncate(join(home, 'audit', SEGMENT), 0);
    const err = await refusedOn(home);
    const reason = expect.stringMatching(new RegExp(`^missing: no audit entries in .* ${seq} entries missing`));
    expect(err).toMatchObject({
      code: 'E_AUDIT_BROKEN',
      details: { first_bad: 1, reason, source: expect.stringMatching(/\/state\/audit-head\.json$/) },
    });
    expect(err.message).toContain('`myfinger audit acknowledge --yes`');
    expect(await cli(home, 'audit', 'verify')).toEqual({
      code: 1,
      json: { ok: false, entries: 0, first_bad: 1, reason },
    });
  });

  it('a deleted audit directory: E_AUDIT_BROKEN', async () => {
    const { home, seq } = await homeWithEntries();
    await rm(join(home, 'audit'), { recursive: true });
    const err = await refusedOn(home);
    expect([err.code, err.details.first_bad, err.details.reason]).toEqual([
      'E_AUDIT_BROKEN',
      1,
      expect.stringMatching(new RegExp(`^missing: .* ${seq} entries missing`)),
    ]);
  });

  it('a log replaced by an older copy: E_AUDIT_BROKEN naming the missing entries', async () => {
    const first = await homeWithEntries();
    const old = join(first.home, 'old-segment');
    await copyFile(join(first.home, 'audit', SEGMENT), old);
    const d = await startOn(first.home);
    expect((await d.http('POST', '/v1/grants', { role: 'executor', tool: 'more.*' })).status).toBe(201);
    const { head } = (await d.http<{ head: { seq: number; hash: string } }>('GET', '/v1/audit')).body;
    const seq = head.seq;
    await d.close();
    expect(seq).toBe(first.seq + 1);
    await copyFile(old, join(d.home, 'audit', SEGMENT));
    const err = await refusedOn(d.home);
    expect([err.code, err.details.first_bad, err.details.reason]).toEqual([
      'E_AUDIT_BROKEN',
      first.seq + 1,
      expect.stringMatching(
        new RegExp(
          `^truncated: 1 entry missing — the log ends at entry ${first.seq} \\(${SEGMENT}:${first.seq}\\) but \\S+/state/audit-head\\.json ` +
            `records entry ${seq} \\(hash ${head.hash.slice(0, 12)}…\\) \\(cut short, or replaced by an older copy\\)$`,
        ),
      ),
    ]);
  });

  it('after `audit acknowledge` the daemon starts; verify is ok and the gap entry opens the chain', async () => {
    const { home, seq } = await homeWithEntries();
    const head = JSON.parse(await readFile(join(home, 'state', 'audit-head.json'), 'utf8'));
    await truncate(join(home, 'audit', SEGMENT), 0);
    expect((await refusedOn(home)).code).toBe('E_AUDIT_BROKEN');
    const ack = await cli(home, 'audit', 'acknowledge', '--yes', '--reason', 'test');
    expect([ack.code, ack.json.error]).toEqual([0, undefined]);
    const d = await startOn(home);
    try {
      expect((await d.http('GET', '/v1/audit/verify')).body).toMatchObject({ ok: true, first_bad: null });
      const gap = (await d.http<{ entries: any[] }>('GET', '/v1/audit?type=audit.acknowledged')).body.entries;
      expect(gap).toEqual([
        expect.objectContaining({
          seq: 1,
          type: 'audit.acknowledged',
          decision: 'new_chain',
          details: expect.objectContaining({
            previous_heads: [{ seq, hash: head.hash, source: join(home, 'state', 'audit-head.json') }],
            found: expect.objectContaining({ entries: 0, first_bad: 1 }),
            reason: 'test',
          }),
        }),
      ]);
      expect((await d.http('POST', '/v1/grants', { role: 'executor', tool: 'after.*' })).status).toBe(201);
    } finally {
      await d.close();
    }
    expect(await cli(d.home, 'audit', 'verify')).toMatchObject({ code: 0, json: { ok: true, first_bad: null } });
  });
});
