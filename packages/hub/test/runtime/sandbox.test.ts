import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { sandboxForTests, thrownBy } from '@finger/testkit';

import { probeSandbox, Sandbox, SANDBOX_BASE_ARGS, sandboxArgv, sandboxWarning } from '../../src/runtime/sandbox.js';
import { credentialPaths, resolveMasks } from '../../src/runtime/sandbox-paths.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'finger-sandbox-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const UNAVAILABLE = {
  available: false,
  reason: 'bubblewrap ("bwrap") not found on PATH: install the bubblewrap package',
};

describe('sandboxArgv (pure)', () => {
  it('hides masks, keeps the deeper workspace below FINGER_HOME writable, and masks a credential dir inside it', () => {
    const argv = sandboxArgv({
      bwrap: '/usr/bin/bwrap',
      masks: [
        { path: '/w/ws/.ssh', kind: 'dir' },
        { path: '/h', kind: 'dir' },
        { path: '/t/token', kind: 'file' },
      ],
      keep: [
        { path: '/h/ws', writable: true },
        { path: '/elsewhere', writable: true }, // under no mask: no bind needed
      ],
      command: ['sh', '-c', 'echo hi'],
    });
    expect(argv).toEqual([
      '/usr/bin/bwrap',
      ...SANDBOX_BASE_ARGS,
      '--tmpfs',
      '/h',
      '--bind',
      '/h/ws',
      '/h/ws',
      '--ro-bind',
      '/dev/null',
      '/t/token',
      '--tmpfs',
      '/w/ws/.ssh',
      '--',
      'sh',
      '-c',
      'echo hi',
    ]);
  });

  it('a token file inside a masked home needs no mount of its own; a credential dir inside a kept workspace below it does', () => {
    const argv = sandboxArgv({
      bwrap: 'bwrap',
      masks: [
        { path: '/h', kind: 'dir' },
        { path: '/h/token', kind: 'file' },
        { path: '/h/ws/.ssh', kind: 'dir' },
      ],
      keep: [{ path: '/h/ws', writable: true }],
      command: ['true'],
    });
    expect(argv.slice(1 + SANDBOX_BASE_ARGS.length)).toEqual([
      '--tmpfs',
      '/h',
      '--bind',
      '/h/ws',
      '/h/ws',
      '--tmpfs',
      '/h/ws/.ssh',
      '--',
      'true',
    ]);
  });

  it('a kept path equal to a mask stays masked (the mask is applied last)', () => {
    const argv = sandboxArgv({
      bwrap: 'bwrap',
      masks: [{ path: '/h', kind: 'dir' }],
      keep: [{ path: '/h', writable: true }],
      command: ['true'],
    });
    expect(argv.slice(1 + SANDBOX_BASE_ARGS.length)).toEqual(['--tmpfs', '/h', '--', 'true']);
  });

  it('always unshares user and PID namespaces, drops every capability and dies with its parent', () => {
    expect(SANDBOX_BASE_ARGS).toEqual([
      '--dev-bind',
      '/',
      '/',
      '--unshare-user',
      '--unshare-pid',
      '--die-with-parent',
      '--new-session',
      '--cap-drop',
      'ALL',
      '--proc',
      '/proc',
    ]);
  });
});

describe('resolveMasks', () => {
  it('resolves symlinks, keeps files and directories, drops missing and relative paths', () => {
    const dir = path.join(tmp, 'home');
    fs.mkdirSync(dir);
    const file = path.join(tmp, 'token');
    fs.writeFileSync(file, 'secret');
    const link = path.join(tmp, 'token-link');
    fs.symlinkSync(file, link);
    const real = fs.realpathSync(tmp);
    expect(resolveMasks([dir, link, path.join(tmp, 'missing'), 'relative/token'])).toEqual([
      { path: path.join(real, 'home'), kind: 'dir' },
      { path: path.join(real, 'token'), kind: 'file' },
    ]);
  });

  it('lists the credential places below the user home', () => {
    expect(credentialPaths('/home/u')).toContain('/home/u/.ssh');
    expect(credentialPaths('/home/u')).toContain('/home/u/.git-credentials');
    expect(credentialPaths(undefined)).toEqual([]);
  });
});

describe('probe and modes', () => {
  it('a missing bubblewrap is unavailable with the reason', () => {
    expect(probeSandbox({ bwrap: 'no-such-bwrap-binary', env: { PATH: tmp }, fresh: true })).toEqual({
      available: false,
      reason: 'bubblewrap ("no-such-bwrap-binary") not found on PATH: install the bubblewrap package',
    });
  });

  it('a bubblewrap that cannot run fails its trial run', () => {
    const fake = path.join(tmp, 'fake-bwrap');
    fs.writeFileSync(fake, '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n', {
      mode: 0o755,
    });
    const p = probeSandbox({ bwrap: fake, env: { PATH: '/usr/bin:/bin' }, fresh: true });
    expect(p).toEqual({
      available: false,
      bwrap: fake,
      reason: `trial run of ${fake} failed: bwrap: No permissions to create new namespace (user namespaces disabled or not permitted?)`,
    });
  });

  it('required without a sandbox refuses to wrap: E_NO_SANDBOX', () => {
    const sb = new Sandbox({ mode: 'required', protect: [tmp], probe: UNAVAILABLE });
    expect(thrownBy(() => sb.wrap(['true'])).code).toBe('E_NO_SANDBOX');
    expect(sb.status()).toEqual({
      mode: 'required',
      available: false,
      active: false,
      reason: UNAVAILABLE.reason,
      profiles: { 'workspace-write': { available: false, reason: UNAVAILABLE.reason } },
    });
  });

  it('auto without a sandbox runs unwrapped and says so loudly', () => {
    const sb = new Sandbox({ mode: 'auto', protect: [tmp], probe: UNAVAILABLE });
    expect(sb.wrap(['true'])).toBeUndefined();
    expect(sandboxWarning(sb.status())).toBe(
      `no sandbox: ${UNAVAILABLE.reason}; agents can read finger's files (FINGER_HOME, the admin token) through the programs they run — run the daemon as its own OS user`,
    );
  });

  it('off never wraps, and an exempt module is not wrapped', () => {
    const off = new Sandbox({ mode: 'off', protect: [tmp], probe: { available: true, bwrap: '/usr/bin/bwrap' } });
    expect(off.wrap(['true'])).toBeUndefined();
    expect(off.appliesTo('shell')).toBe(false);
    const on = new Sandbox({
      mode: 'auto',
      protect: [tmp],
      exempt: ['trusted'],
      probe: { available: true, bwrap: '/usr/bin/bwrap' },
    });
    expect([on.appliesTo('trusted'), on.appliesTo('shell')]).toEqual([false, true]);
    expect(sandboxWarning(on.status())).toBeUndefined();
  });
});

describe.skipIf(!sandboxForTests())('inside a real sandbox', () => {
  const home = path.join(tmp, 'fhome');
  fs.mkdirSync(path.join(home, 'ws'), { recursive: true });
  fs.writeFileSync(path.join(home, 'token'), 'admin-secret');
  const outside = path.join(tmp, 'outside-token');
  fs.writeFileSync(outside, 'moved-secret');
  const sb = new Sandbox({ mode: 'required', protect: [home, outside], env: process.env });

  const run = (script: string) => {
    const [file, ...args] = sb.wrap(['sh', '-c', script], [{ path: path.join(home, 'ws'), writable: true }])!;
    return spawnSync(file!, args, { encoding: 'utf8', timeout: 10_000 });
  };

  it('FINGER_HOME and a token file elsewhere read as nothing; the workspace inside the home stays writable', () => {
    const r = run(
      `cat ${home}/token; echo "home=$(ls -A ${home} | tr '\\n' ' ')"; cat ${outside}; echo "outside=$?"; ` +
        `echo ok > ${home}/ws/out.txt && echo wrote`,
    );
    expect(r.stdout).toBe('home=ws \noutside=1\nwrote\n'); // no `token` mount point left in the home
    expect(fs.readFileSync(path.join(home, 'ws', 'out.txt'), 'utf8')).toBe('ok\n');
  });

  it('umount and mount -o remount,rw / fail inside, even as root', () => {
    const r = run('umount /proc; echo "umount=$?"; mount -o remount,rw /; echo "remount=$?"; cat /proc/self/status');
    expect(r.stdout).toMatch(/^umount=[1-9]\d*\nremount=[1-9]\d*\n/);
    // no capability at all inside
    expect(r.stdout).toMatch(/\nCapEff:\s+0000000000000000\n/);
  });

  it('runs in a fresh PID namespace: the shell is not pid 1 and sees none of the daemon processes', () => {
    const r = run('echo $$; ls /proc | grep -c "^[0-9]"');
    const [pid, count] = r.stdout.trim().split('\n').map(Number);
    expect(pid).toBe(2);
    expect(count).toBeLessThan(10);
  });
});
