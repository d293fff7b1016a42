import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { AuditLog } from '@finger/firewall';

import { runCli } from './helpers.js';

const SEGMENT = 'audit-0000000001.jsonl';

describe('myfinger audit', () => {
  const homes: string[] = [];
  let server: Server;
  let url: string;
  const seen: string[] = [];

  beforeAll(async () => {
    // A stand-in daemon answering only the audit routes.
    server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.setHeader('content-type', 'application/json');
      if (req.url === '/v1/audit/verify') {
        res.end(JSON.stringify({ ok: true, entries: 7, first_bad: null, reason: null, extra: 'dropped' }));
      } else if (req.url?.startsWith('/v1/audit')) {
        const entries = [
          {
            seq: 3,
            ts: '2026-01-01T00:00:00.000Z',
            type: 'tool.call',
            actor: { kind: 'agent', id: 'bot' },
            tool: 'fs.write',
            decision: 'allow',
            prev_hash: 'a'.repeat(64),
            hash: 'b'.repeat(64),
          },
          { seq: 4, ts: '2026-01-01T00:00:01.000Z', type: 'halt', actor: null, tool: null, decision: null },
        ];
        res.end(JSON.stringify({ entries, head: { seq: 4, hash: 'c'.repeat(64) } }));
      } else {
        res.statusCode = 404;
        res.end(JSON.stringify({ error: { code: 'E_NOT_FOUND', message: 'no route' } }));
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });
  afterEach(async () => {
    for (const h of homes.splice(0)) await rm(h, { recursive: true, force: true });
  });

  /** A home with an audit log of `n` entries written by the real AuditLog (segments of `segment_bytes`). */
  async function homeWithLog(n: number, segment_bytes?: number): Promise<string> {
    const home = await mkdtemp(join(tmpdir(), 'finger-cli-audit-'));
    homes.push(home);
    const log = await AuditLog.open({
      dir: join(home, 'audit'),
      ...(segment_bytes !== undefined ? { max_segment_bytes: segment_bytes } : {}),
    });
    for (let i = 0; i < n; i++) await log.append({ type: 'grant.changed', details: { i } });
    await log.close();
    return home;
  }

  it('verify reads FINGER_HOME/audit directly when no daemon of that home runs', async () => {
    const home = await homeWithLog(3);
    const r = await runCli(['audit', 'verify', '--json'], { env: { FINGER_HOME: home } });
    expect([r.code, JSON.parse(r.stdout), r.stderr]).toEqual([
      0,
      { ok: true, entries: 3, first_bad: null, reason: null },
      '',
    ]);
    // A stale daemon.json (nothing listens there) falls back to the files too.
    await writeFile(join(home, 'daemon.json'), JSON.stringify({ pid: 1, url: 'http://127.0.0.1:9' }));
    const stale = await runCli(['audit', 'verify', '--json', '--home', home], {});
    expect(JSON.parse(stale.stdout)).toEqual({ ok: true, entries: 3, first_bad: null, reason: null });
  });

  it('verify exits 1 naming the first bad entry, and prints exactly the four keys under --json', async () => {
    const home = await homeWithLog(3);
    const file = join(home, 'audit', SEGMENT);
    await writeFile(file, (await readFile(file, 'utf8')).replace('"i":2', '"i":9'));
    const r = await runCli(['audit', 'verify', '--json', '--home', home], {});
    expect(r.code).toBe(1);
    expect(Object.keys(JSON.parse(r.stdout))).toEqual(['ok', 'entries', 'first_bad', 'reason']);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, entries: 3, first_bad: 3 });
    const human = await runCli(['audit', 'verify', '--home', home], {});
    expect(human.code).toBe(1);
    expect(human.stdout).toBe('');
    expect(human.stderr).toContain(`audit log is BROKEN at entry 3: ${SEGMENT}:3: hash mismatch`);
  });

  it('archive moves the closed segments; verify then says where the chain starts and checks the archive with --dir', async () => {
    const home = await homeWithLog(12, 512);
    const to = join(home, '..', `${home.split('/').at(-1)}-archive`);
    homes.push(to);
    const r = await runCli(['audit', 'archive', '--to', to, '--json', '--home', home], {});
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { archived: string[]; to: string; anchor: { seq: number; hash: string } };
    expect(out.archived[0]).toBe(SEGMENT);
    expect(out.anchor.seq).toBeGreaterThan(0);
    const here = await runCli(['audit', 'verify', '--json', '--home', home], {});
    expect(JSON.parse(here.stdout)).toEqual({
      ok: true,
      entries: 12 - out.anchor.seq,
      first_bad: null,
      reason: null,
      archived_through: out.anchor.seq,
    });
    const human = await runCli(['audit', 'verify', '--home', home], {});
    expect(human.stdout).toContain(`intact from entry ${out.anchor.seq + 1} on`);
    const archive = await runCli(['audit', 'verify', '--dir', to, '--json'], {});
    expect(JSON.parse(archive.stdout)).toEqual({ ok: true, entries: out.anchor.seq, first_bad: null, reason: null });
    const again = await runCli(['audit', 'archive', '--to', to, '--home', home], {});
    expect(again.stdout).toMatch(/^nothing to archive: only the newest segment is in /);
  });

  it('archive refuses a broken log (E_CONFLICT, exit 1) and an archive inside the log (E_INVALID_ARGS, exit 2)', async () => {
    const home = await homeWithLog(12, 512);
    const inside = await runCli(['audit', 'archive', '--to', join(home, 'audit', 'old'), '--json', '--home', home], {});
    expect(inside.code).toBe(2);
    expect(JSON.parse(inside.stdout).error.code).toBe('E_INVALID_ARGS');
    const file = join(home, 'audit', SEGMENT);
    await writeFile(file, (await readFile(file, 'utf8')).replace('"i":0', '"i":9'));
    const broken = await runCli(['audit', 'archive', '--to', join(home, 'x'), '--json', '--home', home], {});
    expect(broken.code).toBe(1);
    expect(JSON.parse(broken.stdout).error).toMatchObject({ code: 'E_CONFLICT', details: { first_bad: 1 } });
    const missing = await runCli(['audit', 'archive', '--home', home], {});
    expect(missing.code).toBe(2);
  });

  it('verify asks the daemon when it answers, unless --offline', async () => {
    const home = await homeWithLog(2);
    const env = { FINGER_HOME: home, FINGER_URL: url, FINGER_TOKEN: 't' };
    const viaDaemon = await runCli(['audit', 'verify', '--json'], { env });
    expect(JSON.parse(viaDaemon.stdout)).toEqual({ ok: true, entries: 7, first_bad: null, reason: null });
    expect(seen).toContain('GET /v1/audit/verify');
    const offline = await runCli(['audit', 'verify', '--offline', '--json'], { env });
    expect(JSON.parse(offline.stdout)).toEqual({ ok: true, entries: 2, first_bad: null, reason: null });
  });

  it('show prints the table of GET /v1/audit with its filters', async () => {
    const env = { FINGER_URL: url, FINGER_TOKEN: 't', FINGER_HOME: '/nonexistent-finger-home' };
    const r = await runCli(['audit', 'show', '--request', 'r1', '--type', 'tool.call', '--limit', '5'], { env });
    expect(r.code).toBe(0);
    expect(seen).toContain('GET /v1/audit?request_id=r1&type=tool.call&limit=5');
    expect(
      r.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/\s+/)),
    ).toEqual([
      ['SEQ', 'TIME', 'TYPE', 'ACTOR', 'TOOL', 'DECISION'],
      ['3', '2026-01-01T00:00:00.000Z', 'tool.call', 'agent:bot', 'fs.write', 'allow'],
      ['4', '2026-01-01T00:00:01.000Z', 'halt', '-', '-', '-'],
    ]);
    const bad = await runCli(['audit', 'show', '--limit', '0'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--limit must be an integer');
  });
});
