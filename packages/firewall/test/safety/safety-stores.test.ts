import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { waitFor } from '@finger/testkit/core';

import {
  counterKey,
  emptyAgentBreakers,
  FileSafetyStore,
  MemorySafetyStore,
  type SafetyStateStore,
} from '../../src/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tempFile(): string {
  const d = mkdtempSync(join(tmpdir(), 'finger-safety-'));
  dirs.push(d);
  return join(d, 'state', 'safety.json');
}

const LOCK = { cause: 'halt' as const, reason: 'halt', by: 'human:root', at: '2026-01-01T00:00:00.000Z' };

describe.each([
  ['memory', () => Promise.resolve(new MemorySafetyStore())],
  ['file', () => FileSafetyStore.open(tempFile())],
] as [string, () => Promise<SafetyStateStore>][])('%s store', (_name, make) => {
  it('counts atomically under concurrent increments', async () => {
    const s = await make();
    const key = counterKey('agent_tokens', 'a');
    const totals = await Promise.all(Array.from({ length: 50 }, () => s.incrBy(key, 2)));
    expect(new Set(totals).size).toBe(50);
    expect(Math.max(...totals)).toBe(100);
    expect(await s.getCounter(key)).toBe(100);
    await s.deleteCounter(key);
    expect(await s.getCounter(key)).toBe(0);
    await s.close();
  });

  it('forgets an agent’s breakers and says so; forgetting an unknown agent changes nothing', async () => {
    const s = await make();
    const seen: string[] = [];
    s.subscribe((c) => seen.push(`${c.type}:${'agent_id' in c ? c.agent_id : ''}`));
    await s.setBreakers('a', emptyAgentBreakers());
    await s.setBreakers('b', emptyAgentBreakers());
    await s.deleteBreakers('a');
    await s.deleteBreakers('nobody');
    expect(Object.keys(await s.listBreakers())).toEqual(['b']);
    expect(await s.getBreakers('a')).toBeUndefined();
    expect(seen).toEqual(['breakers:a', 'breakers:b', 'breakers:a']);
    await s.close();
  });

  it('keeps system and agent lockouts apart and hands out copies', async () => {
    const s = await make();
    await s.setLockout(LOCK);
    await s.setLockout({ ...LOCK, agent_id: 'a', cause: 'breaker', breaker: 'denial' });
    const got = await s.getLockout();
    expect(got).toEqual(LOCK);
    got!.reason = 'changed';
    expect((await s.getLockout())?.reason).toBe('halt');
    expect((await s.listLockouts()).map((l) => l.agent_id)).toEqual([undefined, 'a']);
    expect(await s.clearLockout('a', 'human:root')).toMatchObject({ breaker: 'denial' });
    expect(await s.clearLockout('a', 'human:root')).toBeUndefined();
    expect(await s.getLockout()).toEqual(LOCK);
    await s.close();
    expect(await s.getCounter('x').catch((e: { code: string }) => e.code)).toBe('E_STORE_UNAVAILABLE');
  });
});

describe('FileSafetyStore', () => {
  it('a lockout, counters and breakers survive reopening the file', async () => {
    const file = tempFile();
    const s = await FileSafetyStore.open(file);
    await s.setLockout(LOCK);
    await s.incrBy(counterKey('task_tokens', 't'), 42);
    await s.setBreakers('a', { ...emptyAgentBreakers(), status: 'error_paused' });
    await s.close();
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = await FileSafetyStore.open(file);
    expect(await again.getLockout()).toEqual(LOCK);
    expect(await again.getCounter(counterKey('task_tokens', 't'))).toBe(42);
    expect((await again.getBreakers('a'))?.status).toBe('error_paused');
    await again.close();
  });

  it('coalesces writes: the file holds the last state after concurrent changes', async () => {
    const file = tempFile();
    const s = await FileSafetyStore.open(file);
    await Promise.all(Array.from({ length: 20 }, (_, i) => s.incrBy(`k${i}`, i)));
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { counters: Record<string, number> };
    expect(Object.keys(doc.counters)).toHaveLength(20);
    expect(doc.counters.k19).toBe(19);
    await s.close();
  });

  it('a write that fails keeps the change in memory, says so, and is retried until the file is written (a full disk)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'finger-safety-retry-'));
    dirs.push(dir);
    const file = join(dir, 'state', 'safety.json');
    const s = await FileSafetyStore.open(file, { retry_ms: 20 });
    // the directory becomes unwritable: a file where it was
    rmSync(join(dir, 'state'), { recursive: true });
    writeFileSync(join(dir, 'state'), '');
    const err = await s.setLockout(LOCK).catch((e: { code: string; details: unknown }) => e);
    expect(err).toMatchObject({ code: 'E_STORE_UNAVAILABLE', details: { file, retrying: true } });
    expect(await s.getLockout()).toEqual(LOCK);
    expect(s.writeFailure()).toMatchObject({ code: 'ENOTDIR' });
    // writable again: the retry writes what is in memory, no further change needed
    rmSync(join(dir, 'state'));
    mkdirSync(join(dir, 'state'));
    const written = await waitFor('the retry to write the file', async () =>
      s.writeFailure() === undefined ? (JSON.parse(readFileSync(file, 'utf8')) as { lockouts: unknown[] }) : undefined,
    );
    expect(written.lockouts).toEqual([LOCK]);
    await s.close();
  });

  it('refuses a damaged file with E_STORE_UNAVAILABLE (a lockout is never silently dropped)', async () => {
    const file = tempFile();
    await (await FileSafetyStore.open(file)).close();
    writeFileSync(file, '{"lockouts": [');
    expect(await FileSafetyStore.open(file).catch((e: { code: string }) => e.code)).toBe('E_STORE_UNAVAILABLE');
    writeFileSync(file, '{"hello": 1}');
    expect(await FileSafetyStore.open(file).catch((e: { code: string }) => e.code)).toBe('E_STORE_UNAVAILABLE');
  });
});
