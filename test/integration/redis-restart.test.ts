import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MessageHub } from '@finger/hub';
import { RedisRequestStore } from '@finger/hub/redis';
import type { Principal } from '@finger/protocol';
import { redisServerBinary, RedisServerChild } from '@finger/testkit';

import { manifest, objectRuntimes } from '../../packages/hub/test/helpers.js';
import { redisForTest, until } from './redis-helpers.js';

const human: Principal = { kind: 'human', id: 'tester', roles: ['operator'] };
const bin = redisServerBinary();
if (bin === undefined) {
  const msg = 'redis-server binary not found: the Redis restart test cannot run';
  if (process.env.FINGER_REQUIRE_SERVICES === '1') throw new Error(`FINGER_REQUIRE_SERVICES=1 but ${msg}`);
  console.warn(`\n${'!'.repeat(78)}\n!! SKIPPED: ${msg}\n${'!'.repeat(78)}\n`);
}

describe.skipIf(!bin)('Redis outage: shared-state calls fail fast, recover, never run twice (own redis-server)', () => {
  let server: RedisServerChild;
  let t: ReturnType<typeof redisForTest>;
  const hubs: MessageHub[] = [];
  const stores: RedisRequestStore[] = [];
  /** request_id of every execution of the non-idempotent tool. */
  const executions: string[] = [];
  let gate: Promise<void> | undefined;

  beforeAll(async () => {
    server = (await RedisServerChild.start())!;
    t = redisForTest(server.url);
    for (let i = 0; i < 2; i++) {
      const conn = t.connect({ command_timeout_ms: 1000 });
      expect(await conn.ready(5000)).toBe(true);
      const requests = new RedisRequestStore(conn);
      stores.push(requests);
      const hub = new MessageHub({
        requests,
        createRuntime: objectRuntimes({
          pay: {
            tools: {
              send: async (_a, ctx) => {
                executions.push(ctx.request_id);
                if (gate) await gate;
                return { paid: ctx.request_id };
              },
            },
          },
        }),
      });
      await hub.registry.register(manifest('pay', [{ name: 'send' }]), { baseDir: '.' });
      hubs.push(hub);
    }
  });
  afterAll(async () => {
    await Promise.all(hubs.map((h) => h.close(100)));
    await server?.restart();
    await t?.cleanup();
    await server?.stop();
  });

  const send = (hub: number, request_id: string) =>
    hubs[hub]!.request({ target: 'pay.send', payload: {}, source: human, request_id, timeout_ms: 10_000 });

  it('runs before, fails with E_STORE_UNAVAILABLE during, and recovers after an outage — each id at most once', async () => {
    const ok = new Set<string>();
    // before: every id sent to both hubs at once runs once
    for (let i = 0; i < 10; i++) {
      const id = `before-${i}`;
      const [a, b] = await Promise.all([send(0, id), send(1, id)]);
      expect(a).toEqual({ paid: id });
      expect(b).toEqual({ paid: id });
      ok.add(id);
    }

    // a call in flight when Redis dies keeps its result (held, written when Redis returns)
    let open!: () => void;
    gate = new Promise<void>((r) => (open = r));
    const inflight = send(0, 'inflight-1');
    await until(() => executions.includes('inflight-1'), 'the in-flight call to start');
    await server.stop();
    open();
    gate = undefined;
    expect(await inflight).toEqual({ paid: 'inflight-1' });
    ok.add('inflight-1');
    expect(stores[0]!.pendingCount).toBe(1);

    // during: new ids and duplicates fail with E_STORE_UNAVAILABLE on both hubs and never run
    const before = executions.length;
    for (const [hub, id] of [
      [0, 'during-1'],
      [1, 'during-2'],
      [1, 'inflight-1'],
      [0, 'before-3'],
    ] as const) {
      await expect(send(hub, id)).rejects.toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
    }
    expect(executions.length).toBe(before);

    // after: the server returns (empty: no persistence) and calls succeed again within 5 s
    await server.restart();
    let n = 0;
    await until(
      async () => {
        const id = `after-${n++}`;
        try {
          expect(await send(n % 2, id)).toEqual({ paid: id });
          ok.add(id);
          return true;
        } catch (e) {
          expect(e).toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
          return false;
        }
      },
      'calls to succeed after redis returned',
      5000,
    );
    // the held outcome reached the new server: a duplicate on the other hub is answered, not run
    await until(() => stores[0]!.pendingCount === 0, 'the held outcome to be written', 5000);
    expect(await send(1, 'inflight-1')).toEqual({ paid: 'inflight-1' });

    // no id ran twice; every id that ran was answered with success
    expect(executions.length).toBe(new Set(executions).size);
    expect(new Set(executions)).toEqual(ok);
  });

  it('deletes the record of a begin whose reply was lost (the call never ran), so the id is free again', async () => {
    const slow = t.connect({ command_timeout_ms: 100 });
    const admin = t.connect();
    expect(await slow.ready(5000)).toBe(true);
    expect(await admin.ready(5000)).toBe(true);
    // the store's periodic cleanup runs when the test says so
    const ticks: (() => void)[] = [];
    const clock = {
      now: () => Date.now(),
      setTimeout: (fn: () => void, ms: number) => setTimeout(fn, ms),
      clearTimeout: (h: unknown) => clearTimeout(h as NodeJS.Timeout),
      setInterval: (fn: () => void) => ticks.push(fn),
      clearInterval: () => undefined,
    };
    const store = new RedisRequestStore(slow, { clock });
    const record = {
      request_id: 'lost-reply-1',
      correlation_id: 'lost-reply-1',
      target: 'pay.send',
      status: 'running' as const,
      created_at: '2026-11-22T00:00:00Z',
    };
    // writes are held for 300 ms: the begin times out (100 ms), then runs when the pause ends
    await admin.client.call('CLIENT', 'PAUSE', '300', 'WRITE');
    await expect(store.begin(record)).rejects.toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
    await until(async () => (await stores[0]!.get('lost-reply-1')) !== undefined, 'the late begin to land', 5000);
    expect(await stores[0]!.get('lost-reply-1')).toEqual(record); // blocks the id, though nothing ran
    for (const tick of ticks) tick();
    await until(async () => (await stores[0]!.get('lost-reply-1')) === undefined, 'the orphan to be deleted', 5000);
    // the id runs normally now, once
    expect(await send(1, 'lost-reply-1')).toEqual({ paid: 'lost-reply-1' });
    expect(executions.filter((id) => id === 'lost-reply-1')).toHaveLength(1);
    await store.close();
  });
});
