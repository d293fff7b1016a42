import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { manifestIssues } from '@finger/protocol';

import { ADMIN_TOKEN, type FakeDaemon, REPLAY_EVENTS, startFakeDaemon } from './fake-daemon.js';
import { runCli } from './helpers.js';

let fake: FakeDaemon;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await startFakeDaemon();
  env = { FINGER_HOME: fake.home };
});
afterAll(async () => {
  await fake.close();
});

describe('send', () => {
  it('prints a blocking string result raw and posts the text with the admin token', async () => {
    const r = await runCli(['send', '/hub target=echo.say {"text":"hello there"}', '--session', 's-9'], { env });
    expect(r).toEqual({ code: 0, stdout: 'hello there\n', stderr: '' });
    expect(fake.seen.at(-1)).toEqual({
      method: 'POST',
      path: '/v1/input',
      auth: `Bearer ${ADMIN_TOKEN}`,
      body: { text: '/hub target=echo.say {"text":"hello there"}', session_id: 's-9' },
    });
  });

  it('prints an object result as indented JSON', async () => {
    const r = await runCli(['send', '/hub target=echo.echo {"a":1,"b":[true]}'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${JSON.stringify({ a: 1, b: [true] }, null, 2)}\n`);
  });

  it('prints the whole answer with --json', async () => {
    const r = await runCli(['--json', 'send', '/hub target=echo.echo {"a":1}'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      request_id: 'req-1',
      correlation_id: 'corr-1',
      status: 'succeeded',
      target: 'echo.echo',
      result: { a: 1 },
    });
  });

  it('prints the request id of a non-blocking dispatch with the command to fetch it', async () => {
    const r = await runCli(['send', '/hub target=echo.echo blocking=false {}'], { env });
    expect(r).toEqual({
      code: 0,
      stdout: 'request_id: req-nb (running) — fetch with: myfinger request req-nb\n',
      stderr: '',
    });
  });

  it('shows a caret under the position of a /hub syntax error and exits 2', async () => {
    const text = '/hub target=echo.say blocking=maybe {}';
    const r = await runCli(['send', text], { env });
    const pos = text.indexOf('maybe');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `error E_BAD_HUB_SYNTAX: bad /hub syntax at position ${pos}: expected true or false, found "maybe"\n` +
        `  ${text}\n` +
        `  ${' '.repeat(pos)}^ expected true or false\n`,
    );
  });

  it('prints {"error"} on stdout with --json and still exits by class', async () => {
    const text = '/hub target=echo.say timeout=x {}';
    const r = await runCli(['send', text, '--json'], { env });
    expect(r.code).toBe(2);
    const body = JSON.parse(r.stdout) as { error: { code: string; details: unknown } };
    expect(body.error.code).toBe('E_BAD_HUB_SYNTAX');
    expect(body.error.details).toEqual({
      position: text.indexOf('=x') + 1,
      expected: 'a timeout in ms (1..86400000)',
      found: '"x"',
    });
  });

  it('lists the details of E_NO_TARGET and exits 5', async () => {
    const r = await runCli(['send', '/hub target=nowhere {}'], { env });
    expect(r.code).toBe(5);
    expect(r.stderr).toBe('error E_NO_TARGET: no such target: nowhere\n  tools: echo.echo, echo.say\n');
  });

  it('exits 4 with a hint when the token is refused', async () => {
    const r = await runCli(['send', '/hub target=echo.say {"text":"x"}'], { env: { ...env, FINGER_TOKEN: 'wrong' } });
    expect(r.code).toBe(4);
    expect(r.stderr).toBe(
      'error E_UNAUTHENTICATED: missing or invalid bearer token\n' +
        `  hint: the CLI sends FINGER_TOKEN, or else the token in ${path.join(fake.home, 'token')}\n`,
    );
  });

  it('exits 1 for a generic daemon error (E_ROUTE_FAILED)', async () => {
    const r = await runCli(['send', 'hello world'], { env });
    expect(r).toEqual({ code: 1, stdout: '', stderr: 'error E_ROUTE_FAILED: no router configured\n' });
  });
});

describe('daemon not running', () => {
  let deadUrl: string;
  let home: string;
  beforeAll(async () => {
    const s = http.createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    deadUrl = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => s.close(() => resolve()));
    home = await mkdtemp(path.join(os.tmpdir(), 'finger-cli-dead-'));
    await writeFile(path.join(home, 'daemon.json'), JSON.stringify({ pid: 1, url: deadUrl, started_at: 'x' }));
  });
  afterAll(() => rm(home, { recursive: true, force: true }));

  const message = (url: string): string =>
    `error: the finger daemon is not running (no answer at ${url}). Start it with: myfinger daemon start\n`;

  it('says so and exits 3 when nothing answers at daemon.json url', async () => {
    const r = await runCli(['send', 'hi'], { env: { FINGER_HOME: home } });
    expect(r).toEqual({ code: 3, stdout: '', stderr: message(deadUrl) });
  });

  it('uses FINGER_URL over daemon.json, and --url over both', async () => {
    const other = 'http://127.0.0.1:1';
    expect((await runCli(['module', 'list'], { env: { FINGER_HOME: home, FINGER_URL: other } })).stderr).toBe(
      message(other),
    );
    expect(
      (await runCli(['module', 'list', '--url', deadUrl], { env: { FINGER_HOME: home, FINGER_URL: other } })).stderr,
    ).toBe(message(deadUrl));
  });

  it('gives the error object with --json', async () => {
    const r = await runCli(['daemon', 'status', '--json', '--home', home], {});
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout)).toEqual({
      error: {
        code: 'E_DAEMON_NOT_RUNNING',
        message: `the finger daemon is not running (no answer at ${deadUrl}). Start it with: myfinger daemon start`,
        details: { url: deadUrl },
      },
    });
  });
});

describe('request', () => {
  it('--wait polls until the request is done and prints the result', async () => {
    fake.runningPolls = 2;
    const before = fake.seen.length;
    const r = await runCli(['request', 'req-nb', '--wait'], { env });
    expect(r).toEqual({ code: 0, stdout: `${JSON.stringify({ done: true }, null, 2)}\n`, stderr: '' });
    expect(fake.seen.slice(before).map((s) => s.path)).toEqual([
      '/v1/requests/req-nb',
      '/v1/requests/req-nb',
      '/v1/requests/req-nb',
    ]);
  });

  it('prints a failed request as its error and exits by the error class', async () => {
    const r = await runCli(['request', 'req-failed'], { env });
    expect(r).toEqual({ code: 8, stdout: '', stderr: 'error E_DENIED_BY_POLICY: rule r1 denies shell.run\n' });
  });

  it('exits 5 for an unknown request', async () => {
    const r = await runCli(['request', 'nope'], { env });
    expect(r).toEqual({ code: 5, stdout: '', stderr: 'error E_NOT_FOUND: no request nope\n' });
  });
});

describe('module', () => {
  it('list prints a table', async () => {
    const r = await runCli(['module', 'list'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      'ID     VERSION  RUNTIME    LOCATION  TOOLS     STATUS     INFLIGHT',
      'echo   0.1.0    inprocess  local     echo,say  ready      2/64',
      'shell  1.2.3    stdio      local     run       unhealthy  0/4',
      '',
    ]);
  });

  it('list --json prints the modules', async () => {
    const r = await runCli(['module', 'list', '--json'], { env });
    expect((JSON.parse(r.stdout) as { modules: Array<{ id: string }> }).modules.map((m) => m.id)).toEqual([
      'echo',
      'shell',
    ]);
  });

  it('health checks every module and exits 7 when one is unhealthy', async () => {
    const r = await runCli(['module', 'health'], { env });
    expect(r.code).toBe(7);
    expect(r.stdout.split('\n')).toEqual([
      'ID     HEALTHY  FAILURES  CHECKED_AT                DETAIL',
      'echo   yes      0         2026-01-02T03:04:05.000Z',
      'shell  no       3         2026-01-02T03:04:05.000Z  no answer in 2000 ms',
      '',
    ]);
  });

  it('health <id> of a healthy module exits 0', async () => {
    const r = await runCli(['module', 'health', 'echo', '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      id: 'echo',
      healthy: true,
      checked_at: '2026-01-02T03:04:05.000Z',
      consecutive_failures: 0,
    });
  });

  it('unregister deletes the module; an unknown id exits 5', async () => {
    expect(await runCli(['module', 'unregister', 'echo'], { env })).toEqual({
      code: 0,
      stdout: 'module echo unregistered\n',
      stderr: '',
    });
    expect(fake.seen.at(-1)?.method).toBe('DELETE');
    expect((await runCli(['module', 'unregister', 'ghost'], { env })).code).toBe(5);
  });
});

describe('tool register', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'finger-cli-manifest-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('posts the manifest with its folder as base_dir', async () => {
    const manifest = {
      id: 'greeter',
      name: 'Greeter',
      version: '1.0.0',
      kind: 'tool',
      runtime: { type: 'stdio', command: ['python3', 'greeter.py'] },
      tools: [
        { name: 'greet', description: 'says hi' },
        { name: 'wave', description: 'waves' },
      ],
    };
    await writeFile(path.join(dir, 'module.json'), JSON.stringify(manifest));
    const r = await runCli(['tool', 'register', '-f', path.join(dir, 'module.json')], { env });
    expect(r).toEqual({
      code: 0,
      stdout: 'registered module greeter 1.0.0 (stdio) — 2 tool(s): greeter.greet, greeter.wave\n',
      stderr: '',
    });
    expect(fake.seen.at(-1)?.body).toEqual({ manifest, base_dir: dir });
  });

  it('prints every manifest issue on its own line and exits 2', async () => {
    const bad = {
      id: 'Bad Id',
      name: 'x',
      version: '1',
      kind: 'tool',
      runtime: { type: 'stdio', command: ['x'] },
      tools: [],
      extra: 1,
    };
    await writeFile(path.join(dir, 'bad.json'), JSON.stringify(bad));
    const r = await runCli(['tool', 'register', '--file', path.join(dir, 'bad.json')], { env });
    expect(r.code).toBe(2);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^error E_INVALID_MANIFEST: invalid module manifest: \d+ error\(s\)/);
    const issues = manifestIssues(bad);
    expect(issues.length).toBeGreaterThanOrEqual(3);
    expect(lines.slice(1)).toEqual(issues.map((i) => `  ${i.path}: ${i.message}`));
  });

  it('reports a file that is not JSON locally (exit 2) and a missing file as usage (exit 2)', async () => {
    await writeFile(path.join(dir, 'broken.json'), '{ nope');
    const broken = await runCli(['tool', 'register', '-f', path.join(dir, 'broken.json')], { env });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/^error E_INVALID_MANIFEST: .*broken\.json is not valid JSON/);
    const missing = await runCli(['tool', 'register', '-f', path.join(dir, 'missing.json')], { env });
    expect(missing).toEqual({
      code: 2,
      stdout: '',
      stderr: `error E_USAGE: cannot read ${path.join(dir, 'missing.json')}: ENOENT\n`,
    });
  });
});

describe('token', () => {
  it('create prints the secret once with a warning; list and revoke work', async () => {
    const created = await runCli(['token', 'create', '--name', 'ci', '--role', 'operator'], { env });
    expect(created).toEqual({
      code: 0,
      stdout:
        'created token ci (role operator):\n\n  fgr_secret_ci\n\nCopy it now: it will not be shown again (the daemon stores only its hash).\n',
      stderr: '',
    });
    const list = await runCli(['token', 'list'], { env });
    expect(list.stdout.split('\n')).toEqual([
      'NAME   ROLE      CREATED                   LAST_USED',
      'admin  admin     2026-01-01T00:00:00.000Z  2026-01-02T00:00:00.000Z',
      'ci     operator  2026-01-03T00:00:00.000Z  -',
      '',
    ]);
    expect(await runCli(['token', 'revoke', 'ci'], { env })).toEqual({
      code: 0,
      stdout: 'token ci revoked\n',
      stderr: '',
    });
    expect((await runCli(['token', 'revoke', 'ci'], { env })).code).toBe(5);
  });

  it('a duplicate name exits 1 (E_CONFLICT) and a bad role exits 2 (E_INVALID_ARGS)', async () => {
    expect((await runCli(['token', 'create', '--name', 'admin', '--role', 'viewer'], { env })).stderr).toBe(
      'error E_CONFLICT: token admin already exists\n',
    );
    const bad = await runCli(['token', 'create', '--name', 'x', '--role', 'god', '--json'], { env });
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toEqual({ error: { code: 'E_INVALID_ARGS', message: 'unknown role god' } });
  });

  it('a missing required option is a usage error (exit 2)', async () => {
    const r = await runCli(['token', 'create', '--name', 'x'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("error: required option '--role <role>' not specified");
  });
});

describe('events replay', () => {
  it('prints the path numbered under the correlation id', async () => {
    const r = await runCli(['events', 'replay', 'req-1'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      'correlation_id: corr-1',
      'request_id: req-1',
      '1. 2026-01-02T03:04:00.000Z INPUT_RECEIVED      echo.echo text_len=38',
      '2. 2026-01-02T03:04:01.000Z MODE_PARSED         echo.echo mode=hub',
      '3. 2026-01-02T03:04:02.000Z DISPATCH_SENT       echo.echo direct=true',
      '4. 2026-01-02T03:04:03.000Z DISPATCH_RESULT     echo.echo ok=true',
      '',
    ]);
  });

  it('names the node that emitted each event another daemon of the cluster recorded, as tail does', async () => {
    const r = await runCli(['events', 'replay', 'req-remote'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n').slice(2, 4)).toEqual([
      '1. 2026-01-02T03:04:00.000Z INPUT_RECEIVED      echo.echo text_len=38 @daemon-b-1-ab',
      '2. 2026-01-02T03:04:01.000Z MODE_PARSED         echo.echo mode=hub @daemon-b-1-ab',
    ]);
  });

  it('--json prints the events; no events exits 5', async () => {
    expect(JSON.parse((await runCli(['events', 'replay', 'req-1', '--json'], { env })).stdout)).toEqual({
      events: REPLAY_EVENTS,
    });
    expect(await runCli(['events', 'replay', 'req-x'], { env })).toEqual({
      code: 5,
      stdout: '',
      stderr: 'error E_NOT_FOUND: no events recorded for request req-x\n',
    });
  });
});

describe('usage', () => {
  it('an unknown command exits 2; --help and --version exit 0', async () => {
    const bad = await runCli(['bogus'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("error: unknown command 'bogus'");
    const help = await runCli(['--help'], { env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Exit codes: 0 ok');
    expect(await runCli(['--version'], { env })).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
  });

  it('a usage error with --json also prints an E_USAGE object', async () => {
    const r = await runCli(['module', 'list', '--json', '--zzzz'], { env });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({ error: { code: 'E_USAGE', message: "unknown option '--zzzz'" } });
  });
});
