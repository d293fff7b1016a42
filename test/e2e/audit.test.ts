import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { verifyAuditLog } from '@finger/firewall';
import { runCli, startTestDaemon, type TestDaemon } from '@finger/testkit';

const SEGMENT = 'audit-0000000001.jsonl';

/** Grants and revokes a grant, creates and revokes a token: four audited admin changes. Returns the token. */
async function adminChanges(d: TestDaemon): Promise<string> {
  expect((await d.http('POST', '/v1/grants', { role: 'executor', tool: 'calc.*' })).status).toBe(201);
  const viewer = await d.token('viewer', 'e2e-viewer');
  expect((await d.http('DELETE', '/v1/tokens/e2e-viewer')).status).toBe(200);
  expect((await d.http('DELETE', '/v1/grants', { role: 'executor', tool: 'calc.*' })).status).toBe(200);
  return viewer;
}

// The two describes are independent: each has a daemon of its own, and every offline test writes
// the file it checks from the pristine copy taken once the daemon stopped.
describe('myfinger audit (built CLI) against a real daemon', () => {
  let d: TestDaemon;
  let home: string;
  let file: string;

  beforeAll(async () => {
    d = await startTestDaemon({ config: { log: { level: 'silent' } } });
    home = d.home;
    file = join(home, 'audit', SEGMENT);
  });
  afterAll(async () => {
    await d?.close();
  });

  it('audits admin changes and shows and verifies them through the daemon', async () => {
    const viewer = await adminChanges(d);

    const env = { FINGER_HOME: home };
    const show = await runCli(['audit', 'show', '--type', 'grant.changed', '--json'], env);
    expect(show.code).toBe(0);
    const page = JSON.parse(show.stdout) as { entries: any[]; head: { seq: number; hash: string } };
    expect(page.entries.map((e) => [e.type, e.actor, e.decision, e.details])).toEqual([
      ['grant.changed', { kind: 'human', id: 'admin' }, 'grant', { role: 'executor', tool: 'calc.*', action: 'grant' }],
      [
        'grant.changed',
        { kind: 'human', id: 'admin' },
        'revoke',
        { role: 'executor', tool: 'calc.*', action: 'revoke' },
      ],
    ]);
    const entries = page.head.seq;
    expect(entries).toBeGreaterThanOrEqual(4);

    const table = await runCli(['audit', 'show', '--type', 'token.changed'], env);
    expect(table.code).toBe(0);
    const rows = table.stdout.trim().split('\n');
    expect(rows[0]!.split(/\s+/)).toEqual(['SEQ', 'TIME', 'TYPE', 'ACTOR', 'TOOL', 'DECISION']);
    expect(rows.slice(1).map((r) => r.split(/\s+/).slice(2))).toEqual([
      ['token.changed', 'human:admin', '-', 'create'],
      ['token.changed', 'human:admin', '-', 'revoke'],
    ]);

    const live = await runCli(['audit', 'verify', '--json'], env);
    expect(live.code).toBe(0);
    expect(JSON.parse(live.stdout)).toEqual({ ok: true, entries, first_bad: null, reason: null });
    expect(await readFile(file, 'utf8')).not.toContain(viewer);
  });
});

describe('myfinger audit verify (built CLI) offline on a stopped daemon’s files', () => {
  let home: string;
  let file: string;
  let original: string;
  let entries: number;

  beforeAll(async () => {
    const d = await startTestDaemon({ keepHome: true, config: { log: { level: 'silent' } } });
    home = d.home;
    file = join(home, 'audit', SEGMENT);
    try {
      await adminChanges(d);
    } finally {
      await d.close();
    }
    original = await readFile(file, 'utf8');
    entries = original.split('\n').length - 1;
  });
  afterAll(async () => {
    if (home) await rm(home, { recursive: true, force: true });
  });

  /** `audit verify --json` with the daemon stopped (daemon.json gone: the files are read). */
  const verifyOffline = async (): Promise<{ code: number | null; json: any; stderr: string }> => {
    const r = await runCli(['audit', 'verify', '--json', '--home', home], {});
    return { code: r.code, json: JSON.parse(r.stdout), stderr: r.stderr };
  };
  const lines = (): string[] => original.split('\n').slice(0, -1);
  const writeLines = (ls: string[]): Promise<void> => writeFile(file, ls.map((l) => `${l}\n`).join(''));

  it('verifies the files with the daemon stopped', async () => {
    await writeFile(file, original);
    expect(entries).toBeGreaterThanOrEqual(4);
    const r = await verifyOffline();
    expect([r.code, r.json]).toEqual([0, { ok: true, entries, first_bad: null, reason: null }]);
    const human = await runCli(['audit', 'verify', '--home', home], {});
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`intact (${entries} entries, ${join(home, 'audit')})`);
  });

  it('names entry 2 when one byte in the middle of its line changes', async () => {
    const ls = lines();
    const line = ls[1]!;
    const mid = Math.floor(line.length / 2);
    ls[1] = line.slice(0, mid) + String.fromCharCode(line.charCodeAt(mid) ^ 1) + line.slice(mid + 1);
    await writeLines(ls);
    const r = await verifyOffline();
    expect(r.code).toBe(1);
    expect(r.json).toEqual({ ok: false, entries, first_bad: 2, reason: expect.stringContaining(`${SEGMENT}:2`) });
    const human = await runCli(['audit', 'verify', '--home', home], {});
    expect(human.code).toBe(1);
    expect(human.stderr).toContain('BROKEN at entry 2');
  });

  it('names the entry after the gap when an entry is removed', async () => {
    const ls = lines();
    ls.splice(2, 1);
    await writeLines(ls);
    const r = await verifyOffline();
    expect(r.code).toBe(1);
    expect(r.json).toEqual({ ok: false, entries: entries - 1, first_bad: 4, reason: expect.any(String) });
  });

  it('names the first swapped position when two entries are swapped', async () => {
    const ls = lines();
    [ls[1], ls[2]] = [ls[2]!, ls[1]!];
    await writeLines(ls);
    const r = await verifyOffline();
    expect(r.code).toBe(1);
    expect(r.json).toEqual({ ok: false, entries, first_bad: 2, reason: expect.any(String) });
  });

  it('names the entry holding any single changed byte of the file', async () => {
    const bytes = Buffer.from(original, 'utf8');
    const lineOf: number[] = [];
    let line = 1;
    for (const b of bytes) {
      lineOf.push(line);
      if (b === 0x0a) line++;
    }
    const wrong: string[] = [];
    for (let i = 0; i < bytes.length; i++) {
      const changed = Buffer.from(bytes);
      changed[i] = changed[i]! ^ 1;
      await writeFile(file, changed);
      const r = await verifyAuditLog(join(home, 'audit'));
      if (r.ok || r.first_bad !== lineOf[i]) wrong.push(`byte ${i}: expected ${lineOf[i]}, got ${JSON.stringify(r)}`);
    }
    expect(wrong).toEqual([]);
    await writeFile(file, original);
    expect((await verifyOffline()).json.ok).toBe(true);
  });
});
