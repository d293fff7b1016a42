// The package-registry proxy inside a real workspace-write sandbox (bubblewrap, --unshare-net):
// the bridge listens on the sandbox's own loopback, the command gets HTTP(S)_PROXY, and through the
// daemon's proxy it reaches a listed fake registry on the host's loopback (listed as a literal
// address:port) while an unlisted host is refused with the proxy's 403 and a direct connection
// reaches nothing. Without the proxy flag the profile has no network at all.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { sandboxForTests, thrownBy } from '@finger/testkit';

import { Sandbox, sandboxArgv } from '../../src/runtime/sandbox.js';
import { SANDBOX_BRIDGE_CODE } from '../../src/runtime/sandbox-bridge.js';
import { WORKSPACE_WRITE_BASE_ARGS } from '../../src/runtime/sandbox-profile.js';
import { type ProxyRefusal, SandboxProxy } from '../../src/runtime/sandbox-proxy.js';

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'finger-pxb-')));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('sandboxArgv with the registry proxy (pure)', () => {
  it('binds the proxy socket read-only over the private /run and starts the bridge before the command', () => {
    const argv = sandboxArgv({
      bwrap: '/usr/bin/bwrap',
      masks: [],
      profile: {
        kind: 'workspace-write',
        writable: ['/w/ws'],
        tmpfs: ['/tmp', '/run'],
        proxy: { socket: '/h/state/sandbox-proxy/proxy.sock', inside: '/run/finger-proxy.sock' },
      },
      command: ['sh', '-c', 'npm ci'],
    });
    expect(argv).toEqual([
      '/usr/bin/bwrap',
      ...WORKSPACE_WRITE_BASE_ARGS,
      '--tmpfs',
      '/run',
      '--tmpfs',
      '/tmp',
      '--bind',
      '/w/ws',
      '/w/ws',
      '--ro-bind',
      '/h/state/sandbox-proxy/proxy.sock',
      '/run/finger-proxy.sock',
      '--',
      process.execPath,
      '-e',
      SANDBOX_BRIDGE_CODE,
      '/run/finger-proxy.sock',
      'sh',
      '-c',
      'npm ci',
    ]);
  });
});

describe.skipIf(!sandboxForTests())('the registry proxy inside a real workspace-write sandbox', () => {
  let registry: http.Server;
  let port = 0;
  let hits = 0;
  let proxy: SandboxProxy;
  const refusals: ProxyRefusal[] = [];
  const ws = path.join(tmp, 'ws');

  beforeAll(async () => {
    fs.mkdirSync(ws);
    registry = http.createServer((req, res) => {
      hits++;
      res.end(`tarball of ${req.url} via ${req.headers.host}`);
    });
    await new Promise<void>((r) => registry.listen(0, '127.0.0.1', r));
    port = (registry.address() as AddressInfo).port;
    proxy = new SandboxProxy({
      socketPath: path.join(tmp, 'state', 'sandbox-proxy', 'proxy.sock'),
      allow: ['registries', `127.0.0.1:${port}`],
      judgeAddress: (a) => (a.startsWith('127.') ? { allowed: false, reason: 'loopback address' } : { allowed: true }),
      // no resolver on a test machine: every name is unknown (the registries' names are never reached here)
      resolve: () => Promise.reject(new Error('ENOTFOUND')),
      onRefusal: (r) => refusals.push(r),
    });
    await proxy.start();
  });

  afterAll(async () => {
    await proxy.close();
    await new Promise<void>((r) => registry.close(() => r()));
  });

  function sandbox(withProxy: boolean): Sandbox {
    return new Sandbox({
      mode: 'required',
      protect: [],
      ...(withProxy ? { proxy: { socket: proxy.socketPath, allow: ['registries'], hosts: proxy.hosts } } : {}),
    });
  }

  /**
   * Runs `script` with sh in the profile (with the proxy when `network`), answering its exit status
   * and output; asynchronously: the proxy answers from this process.
   */
  function run(sb: Sandbox, script: string, network: boolean): Promise<{ status: number | null; out: string }> {
    const argv = sb.wrap(['sh', '-c', script], [], {
      profile: 'workspace-write',
      writable: [ws],
      cwd: ws,
      ...(network ? { network: 'registries' as const } : {}),
    })!;
    // no proxy variables from this process: only the bridge's
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', NO_PROXY: '*' };
    return new Promise((resolve, reject) => {
      const child = spawn(argv[0]!, argv.slice(1), { cwd: ws, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('close', (status) => resolve({ status, out }));
    });
  }

  it('reaches a listed fake registry through the proxy; an unlisted host gets the 403; a direct connection reaches nothing', async () => {
    const sb = sandbox(true);
    const env = await run(sb, 'echo "$HTTP_PROXY $HTTPS_PROXY $npm_config_https_proxy [$NO_PROXY]"', true);
    expect(env.status).toBe(0);
    expect(env.out).toMatch(/^http:\/\/127\.0\.0\.1:\d+ http:\/\/127\.0\.0\.1:\d+ http:\/\/127\.0\.0\.1:\d+ \[\]\n$/);

    const fetched = await run(sb, `curl -sS http://127.0.0.1:${port}/left-pad/-/left-pad-1.3.0.tgz`, true);
    expect(fetched).toEqual({ status: 0, out: `tarball of /left-pad/-/left-pad-1.3.0.tgz via 127.0.0.1:${port}` });
    expect(hits).toBe(1);

    const refused = await run(sb, 'curl -sS -o /dev/null https://example.com/', true);
    expect(refused.status).not.toBe(0);
    expect(refused.out).toMatch(/CONNECT tunnel failed, response 403|Received HTTP code 403 from proxy after CONNECT/);
    expect(refusals.at(-1)).toEqual({
      method: 'CONNECT',
      target: 'example.com:443',
      reason: 'example.com:443 is not in sandbox.network.allow (only the listed hosts are reachable)',
    });

    const direct = await run(sb, `curl -sS --noproxy '*' http://127.0.0.1:${port}/x`, true);
    expect(direct.status).not.toBe(0);
    expect(hits).toBe(1);
  });

  it('without the proxy flag the profile has no network: the same fetch fails', async () => {
    const r = await run(sandbox(true), `curl -sS --max-time 5 http://127.0.0.1:${port}/y`, false);
    expect(r.status).not.toBe(0);
    expect(hits).toBe(1);
  });

  it('a call let through with the proxy where none runs is refused: E_NO_SANDBOX', () => {
    expect(
      thrownBy(() =>
        sandbox(false).wrap(['true'], [], { profile: 'workspace-write', writable: [ws], network: 'registries' }),
      ),
    ).toMatchObject({ code: 'E_NO_SANDBOX' });
  });
});
