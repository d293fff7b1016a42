import { copyFile, mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { auditHeadPath, AuditLog, FileAuditHeadStore, verifyAuditLog } from '@finger/firewall';

import { runCli } from './helpers.js';

const SEGMENT = 'audit-0000000001.jsonl';

describe('myfinger audit against the audit head (offline)', () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
  });

  async function temp(): Promise<string> {
    const d = await mkdtemp(join(tmpdir(), 'finger-cli-anchor-'));
    dirs.push(d);
    return d;
  }

  /** Appends `n` entries to the log of `home`, keeping its head in state/audit-head.json as the daemon does. */
  async function append(home: string, n: number): Promise<{ seq: number; hash: string }> {
    const log = await AuditLog.open({ dir: join(home, 'audit'), heads: [new FileAuditHeadStore(auditHeadPath(home))] });
    for (let i = 0; i < n; i++) await log.append({ type: 'grant.changed', details: { i } });
    await log.close();
    return log.head();
  }

  const verifyJson = async (home: string, ...extra: string[]) => {
    const r = await runCli(['audit', 'verify', '--json', '--home', home, ...extra], {});
    return { code: r.code, json: JSON.parse(r.stdout), stderr: r.stderr };
  };

  it('verify names the gap of an emptied log against state/audit-head.json', async () => {
    const home = await temp();
    const head = await append(home, 4);
    expect(await verifyJson(home)).toEqual({
      code: 0,
      json: { ok: true, entries: 4, first_bad: null, reason: null },
      stderr: '',
    });
    await truncate(join(home, 'audit', SEGMENT), 0);
    const reason = `missing: no audit entries in ${join(home, 'audit')} but ${auditHeadPath(home)} records entry 4 (hash ${head.hash.slice(0, 12)}…): 4 entries missing (the log was emptied or deleted)`;
    expect(await verifyJson(home)).toEqual({
      code: 1,
      json: { ok: false, entries: 0, first_bad: 1, reason },
      stderr: '',
    });
    const human = await runCli(['audit', 'verify', '--home', home], {});
    expect(human.code).toBe(1);
    expect(human.stderr).toContain(`audit log is BROKEN at entry 1: ${reason}`);
    expect(human.stderr).toContain('`myfinger audit acknowledge --yes` (daemon stopped) starts a new chain');
  });

  it('verify --anchor catches a log rolled back together with its state file', async () => {
    const home = await temp();
    const offsite = await temp();
    await append(home, 3);
    // the state at 3 entries, as an attacker would keep it
    await copyFile(join(home, 'audit', SEGMENT), join(offsite, 'old-segment'));
    await copyFile(auditHeadPath(home), join(offsite, 'old-head'));
    await append(home, 2);
    // the operator's copy of the head, taken off the machine
    const copy = join(offsite, 'audit-head.json');
    await copyFile(auditHeadPath(home), copy);
    const ok = await runCli(['audit', 'verify', '--home', home, '--anchor', copy], {});
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`it reaches the head recorded in the anchor copy ${copy} (entry 5)`);
    // roll both back
    await copyFile(join(offsite, 'old-segment'), join(home, 'audit', SEGMENT));
    await copyFile(join(offsite, 'old-head'), auditHeadPath(home));
    expect((await verifyJson(home)).json.ok).toBe(true);
    const caught = await verifyJson(home, '--anchor', copy);
    expect(caught).toEqual({
      code: 1,
      json: {
        ok: false,
        entries: 3,
        first_bad: 4,
        reason: expect.stringMatching(
          new RegExp(`^truncated: 2 entries missing — the log ends at entry 3 \\(${SEGMENT}:3\\) but the anchor copy `),
        ),
      },
      stderr: '',
    });
  });

  it('verify --anchor refuses a missing or malformed copy with its code', async () => {
    const home = await temp();
    await append(home, 1);
    const missing = await verifyJson(home, '--anchor', join(home, 'nope.json'));
    expect([missing.code, missing.json.error.code]).toEqual([5, 'E_NOT_FOUND']);
    await writeFile(join(home, 'bad.json'), '{"seq":"x"}');
    const bad = await verifyJson(home, '--anchor', join(home, 'bad.json'));
    expect([bad.code, bad.json.error.code]).toEqual([2, 'E_INVALID_ARGS']);
  });

  it('acknowledge wants --yes (E_USAGE) and a stopped daemon (E_CONFLICT), and refuses an intact log (E_CONFLICT)', async () => {
    const home = await temp();
    await append(home, 2);
    const noYes = await runCli(['audit', 'acknowledge', '--json', '--home', home], {});
    expect([noYes.code, JSON.parse(noYes.stdout).error.code]).toEqual([2, 'E_USAGE']);
    const intact = await runCli(['audit', 'acknowledge', '--yes', '--json', '--home', home], {});
    expect([intact.code, JSON.parse(intact.stdout).error]).toEqual([
      1,
      {
        code: 'E_CONFLICT',
        message: `nothing to acknowledge: the audit log in ${join(home, 'audit')} is intact (2 entries) and reaches its recorded head`,
        details: { dir: join(home, 'audit'), entries: 2 },
      },
    ]);
    await truncate(join(home, 'audit', SEGMENT), 0);
    // this test process stands in for a running daemon of the home
    await writeFile(join(home, 'daemon.json'), JSON.stringify({ pid: process.pid, url: 'http://127.0.0.1:9' }));
    const running = await runCli(['audit', 'acknowledge', '--yes', '--json', '--home', home], {});
    expect([running.code, JSON.parse(running.stdout).error.code]).toEqual([1, 'E_CONFLICT']);
    expect(JSON.parse(running.stdout).error.message).toContain(`is running (pid ${process.pid})`);
    expect(await readdir(join(home, 'audit'))).toEqual([SEGMENT]);
  });

  it('acknowledge --yes starts a new chain whose first entry records the gap; verify is ok again', async () => {
    const home = await temp();
    const head = await append(home, 6);
    await writeFile(
      join(home, 'audit', SEGMENT),
      (await readFile(join(home, 'audit', SEGMENT), 'utf8')).split('\n').slice(0, 2).join('\n') + '\n',
    );
    const r = await runCli(
      ['audit', 'acknowledge', '--yes', '--reason', 'restored from backup', '--json', '--home', home],
      {},
    );
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({
      acknowledged: true,
      found: { ok: false, entries: 2, first_bad: 3, reason: expect.stringMatching(/^truncated: 4 entries missing/) },
      superseded: expect.stringMatching(new RegExp(`^${join(home, 'audit', 'superseded-')}\\d{8}T\\d{6}Z$`)),
      entry: {
        seq: 1,
        type: 'audit.acknowledged',
        actor: { kind: 'human', id: expect.stringContaining('@') },
        decision: 'new_chain',
        details: {
          previous_heads: [{ seq: 6, hash: head.hash, source: auditHeadPath(home) }],
          found: { entries: 2, first_bad: 3, last: { seq: 2, hash: expect.any(String) } },
          reason: 'restored from backup',
        },
      },
      head: { seq: 1, hash: expect.any(String) },
    });
    expect(JSON.parse(await readFile(auditHeadPath(home), 'utf8'))).toEqual(out.head);
    expect(await verifyJson(home)).toEqual({
      code: 0,
      json: { ok: true, entries: 1, first_bad: null, reason: null },
      stderr: '',
    });
    expect(await verifyAuditLog(out.superseded)).toEqual({ ok: true, entries: 2, first_bad: null, reason: null });
  });
});
