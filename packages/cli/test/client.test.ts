import http from 'node:http';

import { afterEach, describe, expect, it } from 'vitest';

import { DaemonClient, daemonDispatcher } from '../src/client.js';

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

describe('DaemonClient', () => {
  it('waits for the daemon as long as its call lasts: fetch’s 300 s header and body limits are off', async () => {
    const DAEMON_DISPATCHER = await daemonDispatcher();
    // undici's defaults cut a call held for a person (approval timeout 5 min) or a long tool
    // call off at 300 s, and the CLI then said the daemon was not running
    const options = Object.getOwnPropertySymbols(DAEMON_DISPATCHER).find((s) => s.description === 'options');
    expect((DAEMON_DISPATCHER as unknown as Record<symbol, unknown>)[options!]).toMatchObject({
      headersTimeout: 0,
      bodyTimeout: 0,
    });
  });

  it('sends its requests through that dispatcher', async () => {
    const server = http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end('{"ok":true}');
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    const seen: string[] = [];
    const DAEMON_DISPATCHER = await daemonDispatcher();
    const dispatch = DAEMON_DISPATCHER.dispatch.bind(DAEMON_DISPATCHER);
    DAEMON_DISPATCHER.dispatch = (opts, handler) => {
      seen.push(String(opts.path));
      return dispatch(opts, handler);
    };
    try {
      const client = new DaemonClient({ url: `http://127.0.0.1:${port}` });
      expect((await client.call('GET', '/v1/anything')).body).toEqual({ ok: true });
    } finally {
      DAEMON_DISPATCHER.dispatch = dispatch;
    }
    expect(seen).toEqual(['/v1/anything']);
  });
});
