import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { checkTaskWorkspace, TaskWorkspaces } from '../../src/tasks/task-workspace.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** FINGER_HOME, a user home with the default workspace root `~/finger-workspace`, and a project side by side. */
function layout() {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'finger-task-ws-')));
  dirs.push(dir);
  const home = join(dir, 'users', 'me', '.finger');
  const homeDir = join(dir, 'users', 'me');
  const root = join(homeDir, 'finger-workspace');
  const proj = join(dir, 'code', 'proj');
  for (const d of [root, join(root, 'inside'), proj, join(home, 'state')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(proj, 'file.txt'), '');
  symlinkSync(proj, join(dir, 'link-to-proj'));
  return { dir, home, homeDir, root, proj, policy: { roots: [root], home, homeDir } };
}

function refused(f: () => unknown): { code: string; message: string; details: any } {
  try {
    f();
  } catch (e) {
    return e as { code: string; message: string; details: any };
  }
  throw new Error('not refused');
}

describe('checkTaskWorkspace', () => {
  it('a directory inside a configured root needs no own root; one outside gets it, realpath’d', () => {
    const { dir, root, proj, policy } = layout();
    expect(checkTaskWorkspace(join(root, 'inside'), policy)).toEqual({ path: join(root, 'inside'), own_root: false });
    expect(checkTaskWorkspace(proj, policy)).toEqual({ path: proj, own_root: true });
    expect(checkTaskWorkspace(join(dir, 'link-to-proj'), policy)).toEqual({ path: proj, own_root: true });
    expect(checkTaskWorkspace(`${proj}/../proj/`, policy)).toEqual({ path: proj, own_root: true });
  });

  it('a relative path, a missing directory or a file: E_INVALID_ARGS', () => {
    const { proj, policy } = layout();
    expect(refused(() => checkTaskWorkspace('code/proj', policy)).code).toBe('E_INVALID_ARGS');
    expect(refused(() => checkTaskWorkspace(join(proj, 'nope'), policy)).code).toBe('E_INVALID_ARGS');
    expect(refused(() => checkTaskWorkspace(join(proj, 'file.txt'), policy)).code).toBe('E_INVALID_ARGS');
  });

  it('/, the home directory, FINGER_HOME, inside it, and directories holding them: E_FORBIDDEN naming why', () => {
    const { dir, home, homeDir, policy } = layout();
    const cases: [string, string][] = [
      ['/', 'it is the root directory'],
      [homeDir, 'it is your home directory'],
      [home, 'it is FINGER_HOME'],
      [join(home, 'state'), `it is inside FINGER_HOME (${home})`],
      [join(dir, 'users'), `it holds FINGER_HOME (${home})`],
      [dir, 'it holds FINGER_HOME'],
    ];
    for (const [input, why] of cases) {
      const e = refused(() => checkTaskWorkspace(input, policy));
      expect(e.code).toBe('E_FORBIDDEN');
      expect(e.message).toContain(why);
      expect(e.message).toContain('myfinger run');
      expect(e.details.workspace).toBe(input === '/' ? '/' : realpathSync(input));
    }
    // FINGER_HOME elsewhere: a directory holding the user's home is still refused
    const elsewhere = { ...policy, home: join(dir, 'code', 'proj', 'never') };
    expect(refused(() => checkTaskWorkspace(join(dir, 'users'), elsewhere)).message).toContain(
      'it holds your home directory',
    );
  });

  it('inside FINGER_HOME is refused even when a configured root covers it (regression: roots were checked first)', () => {
    const { home, policy } = layout();
    const covering = { ...policy, roots: [home] };
    const e = refused(() => checkTaskWorkspace(join(home, 'state'), covering));
    expect([e.code, e.details.reason]).toEqual([
      'E_FORBIDDEN',
      `it is inside FINGER_HOME (${home}), the daemon's own state`,
    ]);
  });

  it('a directory holding the admin token file kept outside FINGER_HOME: E_FORBIDDEN', () => {
    const { dir, policy } = layout();
    const secrets = join(dir, 'code', 'secrets');
    mkdirSync(secrets);
    const tokenFile = join(secrets, 'finger-token');
    const e = refused(() => checkTaskWorkspace(secrets, { ...policy, tokenFile }));
    expect([e.code, e.details.reason]).toEqual(['E_FORBIDDEN', `it holds the admin token file (${tokenFile})`]);
    expect(refused(() => checkTaskWorkspace(join(dir, 'code'), { ...policy, tokenFile })).code).toBe('E_FORBIDDEN');
  });
});

describe('TaskWorkspaces', () => {
  it('binds the exact principal object it returns, only while bound', () => {
    const w = new TaskWorkspaces();
    const p = w.bind('t1', { path: '/p', own_root: true });
    expect(p).toEqual({ kind: 'agent', id: 'executor-t1', roles: ['agent:executor'] });
    expect(Object.isFrozen(p) && Object.isFrozen(p.roles)).toBe(true);
    expect(w.principalOf('t1')).toBe(p);
    expect(w.workspaceFor(p)).toBe('/p');
    // the same id in another object: a token, an HTTP caller, a copy
    expect(w.workspaceFor({ ...p })).toBeUndefined();
    expect(w.workspaceFor({ kind: 'agent', id: 'executor-t1', roles: ['agent:executor'] })).toBeUndefined();
    expect(w.workspaceFor(undefined)).toBeUndefined();
    w.release('t1');
    expect(w.workspaceFor(p)).toBeUndefined();
    expect(w.principalOf('t1')).toBeUndefined();
  });

  it('a workspace inside the configured roots binds no own root; a resume replaces the principal', () => {
    const w = new TaskWorkspaces();
    const inRoot = w.bind('t1', { path: '/ws/a', own_root: false });
    expect(w.workspaceFor(inRoot)).toBeUndefined();
    const first = w.bind('t2', { path: '/p', own_root: true });
    w.release('t2');
    const again = w.bind('t2', { path: '/p', own_root: true });
    expect(again).not.toBe(first);
    expect(w.workspaceFor(first)).toBeUndefined();
    expect(w.workspaceFor(again)).toBe('/p');
  });
});
