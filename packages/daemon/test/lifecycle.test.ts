import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import { build, runDaemon } from '@finger/daemon';
import { waitFor } from '@finger/testkit';

import { startDaemon, tempDir } from './helpers.js';

const MAIN_JS = fileURLToPath(new URL('../dist/main.js', import.meta.url));

describe('daemon lifecycle', () => {
  const homes: string[] = [];
  afterEach(async () => {
    for (const h of homes.splice(0)) await rm(h, { recursive: true, force: true });
  });

  it('listen writes daemon.json (0600); close drains in-flight calls, is idempotent and removes it', async () => {
    const d = await startDaemon();
    const { url } = await d.app.listen();
    const file = join(d.home, 'daemon.json');
    const info = JSON.parse(await readFile(file, 'utf8'));
    expect(info).toEqual({
      pid: process.pid,
      url,
      started_at: expect.any(String),
      home: d.home,
      version: '0.1.0',
      token_file: join(d.home, 'token'),
    });
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    const inflight = fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ target: 'fx.sleep', payload: { ms: 400 } }),
    });
    await waitFor('the call in flight', async () => (d.app.hub.stats().inflight > 0 ? true : undefined));
    expect(d.app.hub.stats().inflight).toBe(1);
    const closing = d.app.close();
    const again = d.app.close();
    expect(again).toBe(closing);
    const res = await inflight;
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'succeeded', result: { slept: 400 } });
    await closing;
    expect(existsSync(file)).toBe(false);
    await d.close();
  });

  it('close(): a call that outlives shutdown.drain_ms is answered 503 E_PROVIDER_CLOSED and close still resolves', async () => {
    const d = await startDaemon({ shutdown: { drain_ms: 50 } });
    const { url } = await d.app.listen();
    const inflight = fetch(`${url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ target: 'fx.sleep', payload: { ms: 60_000 } }),
    });
    await waitFor('the call in flight', async () => (d.app.hub.stats().inflight > 0 ? true : undefined));
    await d.app.close();
    const res = await inflight;
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ error: { code: 'E_PROVIDER_CLOSED' } });
    await d.close();
  });

  it('runDaemon: a port in use is reported naming the port, exit 1', async () => {
    const busy = await startDaemon();
    const { url } = await busy.app.listen();
    const port = Number(new URL(url).port);
    const home = await tempDir();
    homes.push(home);
    await mkdir(join(home, 'config'), { recursive: true });
    await writeFile(
      join(home, 'config', 'config.json'),
      JSON.stringify({ modules: { builtin: false }, log: { level: 'silent' } }),
    );
    let err = '';
    let code: number | undefined;
    await runDaemon({ home, port, env: {}, err: (t) => (err += t), out: () => undefined, exit: (c) => (code = c) });
    expect(code).toBe(1);
    expect(err).toContain(`port ${port} is already in use`);
    expect(err).toContain('E_CONFLICT');
    await busy.close();
  });

  it('runDaemon: a bad config is reported naming the key, exit 1', async () => {
    const home = await tempDir();
    homes.push(home);
    await mkdir(join(home, 'config'), { recursive: true });
    await writeFile(join(home, 'config', 'config.json'), JSON.stringify({ server: { port: 'x' } }));
    let err = '';
    let code: number | undefined;
    await runDaemon({ home, env: {}, err: (t) => (err += t), out: () => undefined, exit: (c) => (code = c) });
    expect(code).toBe(1);
    expect(err).toContain('config.json: $.server.port must be integer');
  });

  it('build() loads the built-in modules (echo) and /hub reaches them', async () => {
    const home = await tempDir();
    homes.push(home);
    const app = await build({ home, config: { log: { level: 'silent' }, modules: { builtin: true } } });
    try {
      expect(app.hub.registry.list().map((m) => m.id)).toContain('echo');
      const res = await app.fastify.inject({
        method: 'POST',
        url: '/v1/input',
        headers: { authorization: `Bearer ${app.tokens.readAdminToken()}` },
        payload: { text: '/hub target=echo {"text":"hi"}' },
      });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ status: 'succeeded', target: 'echo.echo', result: { text: 'hi' } });
    } finally {
      await app.close();
    }
  });

  // a whole daemon process starts here: bounded at 60 s for a loaded machine (it took 18 s under load)
  it(
    'node dist/main.js prints the banner, and SIGTERM stops it cleanly (exit 0, daemon.json removed)',
    { timeout: 60_000 },
    async () => {
      expect(existsSync(MAIN_JS), 'build the daemon first (npm run build)').toBe(true);
      const home = await tempDir();
      homes.push(home);
      const child = spawn(process.execPath, [MAIN_JS], {
        env: { ...process.env, FINGER_HOME: home, FINGER_PORT: '0', FINGER_LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      try {
        let out = '';
        child.stdout.on('data', (b: Buffer) => (out += b.toString()));
        const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
        await waitFor('the banner', async () => (out.includes('API docs') ? true : undefined));
        expect(out).toMatch(/^finger daemon listening on http:\/\/127\.0\.0\.1:\d+ \(pid \d+\)$/m);
        expect(out).toContain(`  home: ${home}\n`);
        expect(out).toContain(`  admin token: ${join(home, 'token')}\n`);
        expect(out).toMatch(/^ {2}modules: .*echo/m);
        expect(out).toMatch(/^ {2}API docs: http:\/\/127\.0\.0\.1:\d+\/docs$/m);
        const info = JSON.parse(await readFile(join(home, 'daemon.json'), 'utf8'));
        expect(info.pid).toBe(child.pid);
        const health = await fetch(`${info.url}/v1/health`);
        expect(health.status).toBe(200);
        child.kill('SIGTERM');
        expect(await exited).toBe(0);
        expect(existsSync(join(home, 'daemon.json'))).toBe(false);
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    },
  );
});
