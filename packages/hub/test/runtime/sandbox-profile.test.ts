import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { sandboxForTests, thrownBy } from '@finger/testkit';

import { Sandbox, sandboxArgv } from '../../src/runtime/sandbox.js';
import { WORKSPACE_WRITE_BASE_ARGS, workspaceCacheDir, workspaceWriteArgs } from '../../src/runtime/sandbox-profile.js';

const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'finger-ww-')));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('sandboxArgv with the workspace-write profile (pure)', () => {
  it('read-only root, private /tmp and /run, the roots writable, git hooks read-only, private caches, masks deepest last', () => {
    const argv = sandboxArgv({
      bwrap: '/usr/bin/bwrap',
      masks: [
        { path: '/h', kind: 'dir' },
        { path: '/u/.ssh', kind: 'dir' },
        { path: '/w/ws/.env.key', kind: 'file' },
      ],
      keep: [{ path: '/ignored', writable: true }],
      profile: {
        kind: 'workspace-write',
        writable: ['/w/ws', '/h/task'],
        readOnly: ['/w/ws/.git/hooks'],
        tmpfs: ['/tmp', '/run'],
        caches: [{ source: '/h/state/sandbox-cache/abc/.npm', target: '/u/.npm' }],
      },
      command: ['sh', '-c', 'npm test'],
    });
    expect(argv).toEqual([
      '/usr/bin/bwrap',
      ...WORKSPACE_WRITE_BASE_ARGS,
      '--tmpfs',
      '/run',
      '--tmpfs',
      '/tmp',
      '--tmpfs',
      '/h',
      '--bind',
      '/h/task',
      '/h/task',
      '--bind',
      '/h/state/sandbox-cache/abc/.npm',
      '/u/.npm',
      '--bind',
      '/w/ws',
      '/w/ws',
      '--tmpfs',
      '/u/.ssh',
      '--ro-bind',
      '/dev/null',
      '/w/ws/.env.key',
      '--ro-bind',
      '/w/ws/.git/hooks',
      '/w/ws/.git/hooks',
      '--',
      'sh',
      '-c',
      'npm test',
    ]);
    expect(WORKSPACE_WRITE_BASE_ARGS.slice(0, 3)).toEqual(['--ro-bind', '/', '/']);
    expect(WORKSPACE_WRITE_BASE_ARGS).toContain('--unshare-net');
  });

  it('resolves the private cache per workspace, only over tool caches that exist, and git hooks and config that exist', () => {
    const home = path.join(tmp, 'user');
    const ws = path.join(tmp, 'ws1');
    fs.mkdirSync(path.join(home, '.npm'), { recursive: true });
    fs.mkdirSync(path.join(ws, '.git', 'hooks'), { recursive: true });
    const root = path.join(tmp, 'cache-root');
    const a = workspaceWriteArgs({ writable: [ws], userHome: home, cacheRoot: root });
    const dir = workspaceCacheDir(root, ws);
    expect(a).toEqual({
      kind: 'workspace-write',
      writable: [ws],
      readOnly: [path.join(ws, '.git', 'hooks')],
      tmpfs: ['/tmp', '/var/tmp', '/run'].filter((d) => fs.existsSync(d)),
      caches: [{ source: path.join(dir, '.npm'), target: path.join(home, '.npm') }],
    });
    expect(fs.statSync(path.join(dir, '.npm')).mode & 0o777).toBe(0o700);
    expect(workspaceCacheDir(root, path.join(tmp, 'ws2'))).not.toBe(dir);
  });
});

describe('Sandbox.wrap with the workspace-write profile', () => {
  it('throws E_NO_SANDBOX instead of running unwrapped when the profile cannot run', () => {
    const off = new Sandbox({ mode: 'off', protect: [] });
    expect(thrownBy(() => off.wrap(['true'], [], { profile: 'workspace-write', writable: [tmp] })).code).toBe(
      'E_NO_SANDBOX',
    );
    const noProfile = new Sandbox({
      mode: 'auto',
      protect: [],
      probe: { available: true, bwrap: '/usr/bin/bwrap' },
      profileProbe: { available: false, reason: 'no network namespace' },
    });
    expect(noProfile.status().profiles).toEqual({
      'workspace-write': { available: false, reason: 'no network namespace' },
    });
    expect(noProfile.workspaceWriteFor('shell')).toBe(false);
    expect(thrownBy(() => noProfile.wrap(['true'], [], { profile: 'workspace-write', writable: [tmp] })).code).toBe(
      'E_NO_SANDBOX',
    );
  });
});

describe.skipIf(!sandboxForTests())('inside a real workspace-write sandbox', () => {
  const fhome = path.join(tmp, 'fhome');
  const userHome = path.join(tmp, 'home');
  const ws = path.join(tmp, 'work');
  const outside = path.join(tmp, 'outside');
  let server: http.Server;
  let port = 0;
  let sb: Sandbox;

  beforeAll(async () => {
    for (const d of [
      fhome,
      path.join(userHome, '.ssh'),
      path.join(userHome, '.npm'),
      path.join(ws, '.git', 'hooks'),
      outside,
    ])
      fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(userHome, '.ssh', 'id_rsa'), 'PRIVATE KEY');
    fs.writeFileSync(path.join(userHome, '.npm', 'planted'), 'host cache');
    fs.writeFileSync(path.join(fhome, 'token'), 'admin-secret');
    sb = new Sandbox({
      mode: 'required',
      protect: [fhome],
      userHome,
      cacheRoot: path.join(fhome, 'state', 'sandbox-cache'),
      env: process.env,
    });
    server = http.createServer((_q, r) => r.end('reached'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const run = (script: string) => {
    const [file, ...args] = sb.wrap(['sh', '-c', script], [], { profile: 'workspace-write', writable: [ws], cwd: ws })!;
    return spawnSync(file!, args, { encoding: 'utf8', timeout: 20_000, cwd: ws });
  };

  it('is available here and says so', () => {
    expect(sb.status().profiles).toEqual({ 'workspace-write': { available: true } });
    expect(sb.workspaceWriteFor('shell')).toBe(true);
  });

  it('writes inside the workspace, nowhere else; /tmp is private', () => {
    const r = run(
      `touch ${ws}/made && echo ws-ok; touch ${outside}/x 2>/dev/null || echo outside-refused; ` +
        `echo hi > /tmp/t && echo tmp-ok; ls -A ${fhome} | wc -l`,
    );
    expect(r.stdout).toBe('ws-ok\noutside-refused\ntmp-ok\n0\n');
    expect(fs.existsSync(path.join(ws, 'made'))).toBe(true);
    expect(fs.existsSync(path.join(outside, 'x'))).toBe(false);
    expect(fs.existsSync('/tmp/t') && fs.readFileSync('/tmp/t', 'utf8') === 'hi\n').toBe(false);
  });

  it('cannot read ~/.ssh/id_rsa, cannot reach a server on the host loopback, cannot write git hooks', () => {
    const r = run(
      `cat ${userHome}/.ssh/id_rsa 2>/dev/null || echo no-key; ` +
        `node -e "require('http').get('http://127.0.0.1:${port}/',r=>{r.on('data',d=>process.stdout.write(d))}).on('error',e=>console.log('net:'+e.code))"; ` +
        `touch ${ws}/.git/hooks/pre-commit 2>/dev/null || echo hooks-read-only`,
    );
    expect(r.stdout).toBe('no-key\nnet:ECONNREFUSED\nhooks-read-only\n');
  });

  it('the tool cache is the private one: the host cache is not seen, what is written there stays out of the host', () => {
    const r = run(`ls -A ${userHome}/.npm; echo x > ${userHome}/.npm/written && echo cache-ok`);
    expect(r.stdout).toBe('cache-ok\n');
    expect(fs.readdirSync(path.join(userHome, '.npm'))).toEqual(['planted']);
    expect(
      fs.readFileSync(
        path.join(workspaceCacheDir(path.join(fhome, 'state', 'sandbox-cache'), ws), '.npm', 'written'),
        'utf8',
      ),
    ).toBe('x\n');
  });
});
