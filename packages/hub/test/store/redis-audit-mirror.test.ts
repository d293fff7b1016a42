// The audit mirror's queue and retries through an outage, with a connection that fails on demand
// (the stream itself is tested against a real redis-server in test/integration/redis-kv.test.ts).
import { afterEach, describe, expect, it } from 'vitest';

import { FingerError } from '@finger/protocol';

import { RedisAuditMirror } from '../../src/store/redis-audit-mirror.js';
import type { RedisConnection } from '../../src/store/redis-client.js';
import { until } from '../helpers.js';

/** A connection whose writes fail while `down`; what reached "Redis" is in `written`. */
function flakyConnection() {
  const state = { down: false, written: [] as string[], attempts: 0 };
  const conn = {
    key: (...parts: string[]) => `t:${parts.join(':')}`,
    client: {
      pipeline: () => {
        const rows: string[] = [];
        return {
          xadd: (...args: unknown[]) => rows.push(String(args.at(-1))),
          exec: async () => {
            state.written.push(...rows);
            return rows.map(() => [null, 'id']);
          },
        };
      },
    },
    run: async <T>(op: string, fn: () => Promise<T>): Promise<T> => {
      state.attempts++;
      if (state.down) throw new FingerError('E_STORE_UNAVAILABLE', `redis is unavailable (${op})`, { op });
      return fn();
    },
  };
  return { state, conn: conn as unknown as RedisConnection };
}

const mirrors: RedisAuditMirror[] = [];
afterEach(async () => {
  for (const m of mirrors.splice(0)) await m.close();
});

describe('RedisAuditMirror through an outage', () => {
  it('sends what waited once Redis is back, and keeps mirroring after (one retry at a time)', async () => {
    const { state, conn } = flakyConnection();
    const m = new RedisAuditMirror(conn, 'node-a');
    mirrors.push(m);
    state.down = true;
    m.push({ seq: 1 });
    await until(() => m.stats().failed_batches === 1, 'the first batch to fail');
    // entries queued while a retry waits go with it, not in attempts of their own
    const attempts = state.attempts;
    m.push({ seq: 2 });
    m.push({ seq: 3 });
    await new Promise((r) => setTimeout(r, 50));
    expect(state.attempts).toBe(attempts);
    expect(m.stats()).toMatchObject({ queued: 3, failed_batches: 1 });
    state.down = false;
    await until(() => m.stats().queued === 0, 'the retry to send the queue', 5_000);
    expect(state.written.map((e) => JSON.parse(e).seq)).toEqual([1, 2, 3]);
    // the mirror still works: a later entry goes out by itself, and drain returns
    await new Promise((r) => setTimeout(r, 600)); // past any second retry timer
    m.push({ seq: 4 });
    await until(() => m.stats().queued === 0, 'a later entry to be mirrored', 5_000);
    await m.drain();
    expect(m.stats()).toMatchObject({ mirrored: 4, queued: 0, dropped: 0 });
  });

  it('close makes one last attempt and returns while Redis is down', async () => {
    const { state, conn } = flakyConnection();
    const m = new RedisAuditMirror(conn, 'node-a');
    state.down = true;
    m.push({ seq: 1 });
    await until(() => m.stats().failed_batches === 1, 'the first batch to fail');
    const before = state.attempts;
    await m.close();
    expect(state.attempts).toBe(before + 1);
    expect(m.stats()).toMatchObject({ mirrored: 0, queued: 1, failed_batches: 2 });
    m.push({ seq: 2 }); // closed: ignored
    expect(m.stats().queued).toBe(1);
  });
});
