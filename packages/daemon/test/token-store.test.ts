import { createHash } from 'node:crypto';
import { chmod, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { TokenStore } from '@finger/daemon';
import { thrownBy } from '@finger/testkit';

import { tempDir } from './helpers.js';

const sha = (t: string) => createHash('sha256').update(t).digest('hex');

describe('TokenStore', () => {
  let home: string;
  beforeEach(async () => {
    home = await tempDir();
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('creates the admin token on first start (0600) and stores only its hash', async () => {
    const store = new TokenStore(home, { now: () => Date.parse('2026-01-02T03:04:05Z') });
    const admin = (await readFile(join(home, 'token'), 'utf8')).trim();
    expect(admin).toMatch(/^fgr_[A-Za-z0-9_-]{43}$/);
    expect((await stat(join(home, 'token'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, 'tokens.json'))).mode & 0o777).toBe(0o600);
    const file = JSON.parse(await readFile(join(home, 'tokens.json'), 'utf8'));
    expect(file).toEqual({
      version: 1,
      tokens: [{ name: 'admin', role: 'admin', created_at: '2026-01-02T03:04:05.000Z', hash: sha(admin) }],
    });
    expect(store.authenticate(admin)).toEqual({ kind: 'human', id: 'admin', roles: ['admin'] });
    // a second start keeps the same admin token
    const again = new TokenStore(home);
    expect((await readFile(join(home, 'token'), 'utf8')).trim()).toBe(admin);
    expect(again.authenticate(admin)?.id).toBe('admin');
  });

  it('create returns the plaintext once; disk holds only hashes; list/revoke work', async () => {
    const store = new TokenStore(home, { now: () => Date.parse('2026-01-02T00:00:00Z') });
    const op = store.create('ci-bot', 'operator');
    const ag = store.create('exec-1', 'agent:executor');
    expect(op).toEqual({ name: 'ci-bot', role: 'operator', token: expect.stringMatching(/^fgr_/) });
    const text = await readFile(join(home, 'tokens.json'), 'utf8');
    expect(text).not.toContain(op.token);
    expect(text).not.toContain(ag.token);
    expect(text).toContain(sha(op.token));
    expect((await stat(join(home, 'tokens.json'))).mode & 0o777).toBe(0o600);

    expect(store.authenticate(op.token)).toEqual({ kind: 'human', id: 'ci-bot', roles: ['operator'] });
    expect(store.authenticate(ag.token)).toEqual({ kind: 'agent', id: 'exec-1', roles: ['agent:executor'] });
    expect(store.authenticate('fgr_nope')).toBeUndefined();
    expect(store.authenticate('')).toBeUndefined();
    expect(store.authenticate(undefined)).toBeUndefined();

    expect(store.list().map((t) => [t.name, t.role])).toEqual([
      ['admin', 'admin'],
      ['ci-bot', 'operator'],
      ['exec-1', 'agent:executor'],
    ]);
    expect(store.list()[1]).toEqual({
      name: 'ci-bot',
      role: 'operator',
      created_at: '2026-01-02T00:00:00.000Z',
      last_used_at: '2026-01-02T00:00:00.000Z',
    });

    store.revoke('ci-bot');
    expect(store.authenticate(op.token)).toBeUndefined();
    const reopened = new TokenStore(home);
    expect(reopened.authenticate(op.token)).toBeUndefined();
    expect(reopened.authenticate(ag.token)?.id).toBe('exec-1');
    expect(reopened.list().map((t) => t.name)).toEqual(['admin', 'exec-1']);
  });

  it('refuses bad names, bad roles, duplicates, unknown revokes and revoking admin', () => {
    const store = new TokenStore(home);
    store.create('dup', 'viewer');
    expect(thrownBy(() => store.create('dup', 'viewer')).code).toBe('E_CONFLICT');
    expect(thrownBy(() => store.create('admin', 'viewer')).code).toBe('E_CONFLICT');
    expect(thrownBy(() => store.create('Bad Name', 'viewer')).code).toBe('E_INVALID_ARGS');
    expect(thrownBy(() => store.create('ok', 'root')).code).toBe('E_INVALID_ARGS');
    expect(thrownBy(() => store.revoke('ghost')).code).toBe('E_NOT_FOUND');
    expect(thrownBy(() => store.revoke('admin')).code).toBe('E_FORBIDDEN');
  });

  it('tells onRevoked listeners the name of each revoked token, after it stopped authenticating', () => {
    const store = new TokenStore(home);
    const { token } = store.create('watched', 'viewer');
    const seen: { name: string; authenticates: boolean }[] = [];
    const stop = store.onRevoked((name) => seen.push({ name, authenticates: store.authenticate(token) !== undefined }));
    store.revoke('watched');
    expect(seen).toEqual([{ name: 'watched', authenticates: false }]);
    expect(thrownBy(() => store.revoke('watched')).code).toBe('E_NOT_FOUND');
    stop();
    store.create('other', 'viewer');
    store.revoke('other');
    expect(seen).toHaveLength(1);
  });

  it('re-hashes a replaced admin token file (rotation by deleting/replacing FINGER_HOME/token)', async () => {
    const first = new TokenStore(home);
    const old = first.readAdminToken();
    await writeFile(join(home, 'token'), 'fgr_replacement-token-value\n', { mode: 0o600 });
    const store = new TokenStore(home);
    expect(store.authenticate(old)).toBeUndefined();
    expect(store.authenticate('fgr_replacement-token-value')?.roles).toEqual(['admin']);
  });

  it('writes the admin token to the tokenFile given (0600, new directories 0700), not FINGER_HOME/token', async () => {
    const file = join(home, '..', `${home.split('/').pop()}-secrets`, 'deep', 'admin.token');
    try {
      const store = new TokenStore(home, { tokenFile: file });
      expect([store.tokenFile, store.adminTokenPath]).toEqual([file, file]);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect((await stat(join(file, '..'))).mode & 0o777).toBe(0o700);
      await expect(stat(join(home, 'token'))).rejects.toMatchObject({ code: 'ENOENT' });
      expect(store.authenticate(store.readAdminToken())).toEqual({ kind: 'human', id: 'admin', roles: ['admin'] });
      expect(thrownBy(() => store.revoke('admin')).message).toContain(`delete ${file} and restart`);
    } finally {
      await rm(join(file, '..', '..'), { recursive: true, force: true });
    }
  });

  it('tightens a token file or tokens.json that others may read to 0600 and says so', async () => {
    new TokenStore(home);
    await chmod(join(home, 'token'), 0o644);
    await chmod(join(home, 'tokens.json'), 0o604);
    const warned: [string, unknown][] = [];
    new TokenStore(home, { warn: (m, d) => warned.push([m, d]) });
    expect((await stat(join(home, 'token'))).mode & 0o777).toBe(0o600);
    expect((await stat(join(home, 'tokens.json'))).mode & 0o777).toBe(0o600);
    expect(warned.map(([, d]) => d)).toEqual([
      { path: join(home, 'tokens.json'), mode: '0604' },
      { path: join(home, 'token'), mode: '0644' },
    ]);
    // already tight: nothing to say
    new TokenStore(home, { warn: (m, d) => warned.push([m, d]) });
    expect(warned).toHaveLength(2);
  });

  it('persists last_used_at on flush', async () => {
    let now = Date.parse('2026-03-01T00:00:00Z');
    const store = new TokenStore(home, { now: () => now });
    const v = store.create('v', 'viewer');
    now = Date.parse('2026-03-02T00:00:00Z');
    store.authenticate(v.token);
    store.flush();
    const file = JSON.parse(await readFile(join(home, 'tokens.json'), 'utf8'));
    expect(file.tokens[1].last_used_at).toBe('2026-03-02T00:00:00.000Z');
  });
});
