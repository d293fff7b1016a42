// Two daemons sharing a private redis-server that the test stops and restarts. Regressions:
// a non-blocking dispatch during the outage answered 202 "running" although it never ran and its
// record was lost; and every HTTP dispatch (even a plain blocking call with no request_id) failed
// with E_STORE_UNAVAILABLE, since the daemon tracks each call under an id it makes itself.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { binaryForTests, redisServerBinary, RedisServerChild } from '@finger/testkit';

import { run as runCli } from '../../packages/cli/src/main.js';
import { httpCall, type HttpReply, type RedisTestDaemon as Daemon, startRedisDaemons, until } from './redis-helpers.js';

const bin = binaryForTests(redisServerBinary(), 'the Redis outage dispatch test', 'no redis-server binary on the PATH');

type Reply = HttpReply<{
  request_id?: string;
  status?: string;
  result?: { runs: number };
  error?: { code: string; details?: unknown };
}>;

describe.skipIf(!bin)('dispatches during a Redis outage (two daemons, own redis-server)', () => {
  let server: RedisServerChild;
  let cluster: Awaited<ReturnType<typeof startRedisDaemons>> | undefined;
  let daemons: Daemon[] = [];

  beforeAll(async () => {
    server = (await RedisServerChild.start())!;
    cluster = await startRedisDaemons(2, server.url, 'outage');
    daemons = cluster.daemons;
  });
  afterAll(async () => {
    await server?.restart();
    await cluster?.close();
    await server?.stop();
  });

  const call = (d: Daemon, method: string, path: string, body?: unknown): Promise<Reply> =>
    httpCall(d, method, path, body);

  async function cli(d: Daemon, ...args: string[]): Promise<{ code: number; out: unknown }> {
    let out = '';
    const code = await runCli(['--json', ...args], {
      env: { FINGER_URL: d.url, FINGER_TOKEN: d.token, FINGER_HOME: daemons[0]!.home },
      stdout: { write: (s: string) => (out += s) },
      stderr: { write: () => undefined },
    });
    return { code, out: JSON.parse(out) as unknown };
  }

  const runs = async (d: Daemon) =>
    (await call(d, 'POST', '/v1/messages', { target: 'counter.get' })).body.result!.runs;
  const connected = async (d: Daemon) =>
    ((await (await fetch(`${d.url}/v1/health`)).json()) as { redis: { connected: boolean } }).redis.connected;

  async function outage(): Promise<void> {
    await server.stop();
    for (const d of daemons) await until(async () => !(await connected(d)), 'the daemon to see Redis gone');
  }

  async function recovery(): Promise<void> {
    await server.restart();
    for (const d of daemons) await until(() => connected(d), 'the daemon to see Redis back', 10_000);
  }

  // a failed test leaves no outage behind for the next one
  afterEach(recovery);

  const unavailable = { status: 503, body: { error: { code: 'E_STORE_UNAVAILABLE' } } };

  it('refuses non-blocking dispatches during an outage with E_STORE_UNAVAILABLE and runs nothing', async () => {
    const [a, b] = daemons as [Daemon, Daemon];
    const before = await runs(a);
    await outage();

    const nb = { target: 'counter.inc', payload: {}, blocking: false };
    expect(await call(a, 'POST', '/v1/messages', { ...nb, request_id: 'nb-out-3' })).toMatchObject(unavailable);
    expect(await call(b, 'POST', '/v1/messages', nb)).toMatchObject(unavailable);
    const sent = await cli(a, 'send', '/hub target=counter.inc blocking=false {}');
    expect(sent).toEqual({ code: 1, out: { error: expect.objectContaining({ code: 'E_STORE_UNAVAILABLE' }) } });

    await recovery();
    // nothing ran, and nothing claims to be running
    expect(await runs(a)).toBe(before);
    expect(await call(a, 'GET', '/v1/requests/nb-out-3')).toMatchObject({
      status: 404,
      body: { error: { code: 'E_NOT_FOUND' } },
    });
  });

  it('runs plain blocking calls during an outage, keeps their records and writes them when Redis returns', async () => {
    const [a, b] = daemons as [Daemon, Daemon];
    const before = await runs(a);
    await outage();

    const viaMessages = await call(a, 'POST', '/v1/messages', { target: 'counter.inc', payload: {} });
    expect(viaMessages).toMatchObject({ status: 200, body: { status: 'succeeded', result: { runs: before + 1 } } });
    const viaTools = await call(b, 'POST', '/v1/tools/counter.inc/run', { args: {} });
    expect(viaTools).toMatchObject({ status: 200, body: { status: 'succeeded', result: { runs: before + 2 } } });
    expect(await cli(a, 'send', '/hub target=counter.inc {}')).toMatchObject({
      code: 0,
      out: { status: 'succeeded', result: { runs: before + 3 } },
    });

    // a caller's request_id could be a duplicate of a call on the other daemon: refused, not run
    const withId = { target: 'counter.inc', payload: {}, request_id: 'caller-id-during-outage' };
    expect(await call(a, 'POST', '/v1/messages', withId)).toMatchObject(unavailable);
    expect(await call(b, 'POST', '/v1/tools/counter.inc/run', { args: {}, request_id: 'caller-id-2' })).toMatchObject(
      unavailable,
    );

    // the daemon that ran a call answers for it while Redis is down
    const id = viaMessages.body.request_id!;
    expect(viaMessages.headers.get('x-finger-request-id')).toBe(id);
    expect(await call(a, 'GET', `/v1/requests/${id}`)).toMatchObject({
      status: 200,
      body: { request_id: id, status: 'succeeded', target: 'counter.inc', result: { runs: before + 1 } },
    });

    await recovery();
    expect(await runs(b)).toBe(before + 3);
    // the held records reach Redis: the other daemon finds them
    await until(async () => (await call(b, 'GET', `/v1/requests/${id}`)).status === 200, 'the record in Redis', 5000);
    expect(await call(b, 'GET', `/v1/requests/${id}`)).toMatchObject({
      status: 200,
      body: { request_id: id, status: 'succeeded', result: { runs: before + 1 } },
    });
    const toolId = viaTools.body.request_id!;
    await until(async () => (await call(a, 'GET', `/v1/requests/${toolId}`)).status === 200, 'its record', 5000);
    // the refused caller ids were never recorded: they may be sent again and run now
    expect(await call(a, 'POST', '/v1/messages', withId)).toMatchObject({
      status: 200,
      body: { result: { runs: before + 4 } },
    });
  });
});
