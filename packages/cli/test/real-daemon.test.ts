import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestDaemon, type TestDaemon } from '@finger/testkit';

import { exitCodeFor } from '../src/index.js';
import { runCli } from './helpers.js';

// Issue 28 item 11b: `token create/list/revoke`, `module health` and `request --wait` were tested
// only against the fixed answers of fake-daemon.ts. Here they run against a real daemon on
// loopback (the CLI's run() in-process, found through FINGER_HOME's daemon.json and token).

let d: TestDaemon;
let env: Record<string, string>;

beforeAll(async () => {
  d = await startTestDaemon();
  env = { FINGER_HOME: d.home };
});

afterAll(async () => {
  await d?.close();
});

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('token against the real daemon', () => {
  it('create prints a secret that authenticates; list shows it; revoke makes the daemon refuse it', async () => {
    const created = await runCli(['token', 'create', '--name', 'ci', '--role', 'operator'], { env });
    expect(created.code).toBe(0);
    expect(created.stderr).toBe('');
    const secret =
      /^created token ci \(role operator\):\n\n {2}(\S+)\n\nCopy it now: it will not be shown again \(the daemon stores only its hash\)\.\n$/.exec(
        created.stdout,
      )?.[1];
    expect(secret).toBeDefined();
    expect((await d.http('GET', '/v1/modules', undefined, secret!)).status).toBe(200);

    const list = await runCli(['token', 'list'], { env });
    expect(list.code).toBe(0);
    const rows = list.stdout.trimEnd().split('\n');
    expect(rows[0]!.split(/\s+/)).toEqual(['NAME', 'ROLE', 'CREATED', 'LAST_USED']);
    const ci = rows.find((r) => r.startsWith('ci '))!.split(/\s+/);
    expect(ci[1]).toBe('operator');
    expect(ci[2]).toMatch(ISO);
    expect(rows.some((r) => /^admin\s+admin\s/.test(r))).toBe(true);
    const json = JSON.parse((await runCli(['token', 'list', '--json'], { env })).stdout) as {
      tokens: { name: string; role: string }[];
    };
    expect(json.tokens.map((t) => [t.name, t.role])).toContainEqual(['ci', 'operator']);

    expect(await runCli(['token', 'revoke', 'ci'], { env })).toEqual({
      code: 0,
      stdout: 'token ci revoked\n',
      stderr: '',
    });
    expect((await d.http('GET', '/v1/modules', undefined, secret!)).status).toBe(401);
    const again = await runCli(['token', 'revoke', 'ci', '--json'], { env });
    expect(again.code).toBe(5);
    expect(JSON.parse(again.stdout)).toMatchObject({ error: { code: 'E_NOT_FOUND' } });
  });

  it('a duplicate name exits 1 with E_CONFLICT, an unknown role 2 with E_INVALID_ARGS', async () => {
    expect(await runCli(['token', 'create', '--name', 'admin', '--role', 'viewer'], { env })).toEqual({
      code: 1,
      stdout: '',
      // the fake daemon answered 'token admin already exists'; the real one names it and lists the name
      stderr: 'error E_CONFLICT: a token named "admin" already exists\n  name: admin\n',
    });
    const bad = await runCli(['token', 'create', '--name', 'x', '--role', 'god', '--json'], { env });
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({ error: { code: 'E_INVALID_ARGS' } });
  });
});

describe('module health against the real daemon', () => {
  it('checks every module: all built-in ones healthy, exit 0', async () => {
    const r = await runCli(['module', 'health'], { env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const rows = r.stdout.trimEnd().split('\n');
    expect(rows[0]!.split(/\s+/)).toEqual(['ID', 'HEALTHY', 'FAILURES', 'CHECKED_AT', 'DETAIL']);
    const ids = (await d.http<{ modules: { id: string }[] }>('GET', '/v1/modules')).body.modules.map((m) => m.id);
    expect(
      rows
        .slice(1)
        .map((row) => row.split(/\s+/)[0])
        .sort(),
    ).toEqual([...ids].sort());
    for (const row of rows.slice(1)) expect(row.split(/\s+/).slice(1, 3)).toEqual(['yes', '0']);
  });

  it('health <id> --json is the daemon’s record; an unknown module exits 5', async () => {
    const r = await runCli(['module', 'health', 'echo', '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      id: 'echo',
      healthy: true,
      checked_at: expect.stringMatching(ISO),
      consecutive_failures: 0,
    });
    const missing = await runCli(['module', 'health', 'ghost', '--json'], { env });
    expect(missing.code).toBe(5);
    expect(JSON.parse(missing.stdout)).toMatchObject({ error: { code: 'E_NOT_FOUND' } });
  });
});

describe('request against the real daemon', () => {
  it('--wait polls a non-blocking call until it is done and prints its result', async () => {
    const sent = await runCli(['send', '--json', '/hub target=pyworker.sleep blocking=false {"ms":1000}'], { env });
    expect(sent.code).toBe(0);
    const { request_id } = JSON.parse(sent.stdout) as { request_id: string };
    const r = await runCli(['request', request_id, '--wait'], { env });
    expect(r).toEqual({ code: 0, stdout: `${JSON.stringify({ slept_ms: 1000 }, null, 2)}\n`, stderr: '' });
    const json = await runCli(['request', request_id, '--json'], { env });
    expect(JSON.parse(json.stdout)).toEqual((await d.http('GET', `/v1/requests/${request_id}`)).body);
    expect(JSON.parse(json.stdout)).toMatchObject({ request_id, status: 'succeeded', target: 'pyworker.sleep' });
  });

  it('prints a failed request as its error, exiting by its class; an unknown request exits 5', async () => {
    const sent = await runCli(['send', '--json', '/hub target=fs.read blocking=false {"path":"/nonexistent-g"}'], {
      env,
    });
    const { request_id } = JSON.parse(sent.stdout) as { request_id: string };
    const r = await runCli(['request', request_id, '--wait'], { env });
    const stored = (await d.http('GET', `/v1/requests/${request_id}`)).body as {
      status: string;
      error: { code: string; message: string };
    };
    expect(stored).toMatchObject({ status: 'failed', error: { code: 'E_FORBIDDEN' } });
    expect(r.code).toBe(exitCodeFor('E_FORBIDDEN'));
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n')[0]).toBe(`error E_FORBIDDEN: ${stored.error.message}`);
    const unknown = await runCli(['request', 'req-nope', '--json'], { env });
    expect(unknown.code).toBe(5);
    expect(JSON.parse(unknown.stdout)).toMatchObject({ error: { code: 'E_NOT_FOUND' } });
  });
});
