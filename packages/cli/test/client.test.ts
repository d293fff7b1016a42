import http from 'node:http';

import { afterEach, describe, expect, it } from 'vitest';

import { DAEMON_AGENT, DaemonClient } from '../src/client.js';

const servers: http.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
});

describe('DaemonClient', () => {
  it('waits for the daemon as long as its call lasts: no timeout of its own (fetch’s 300 s limits are gone)', () => {
    // undici's defaults cut a call held for a person (approval timeout 5 min) or a long tool
    // call off at 300 s, and the CLI then said the daemon was not running
    const agent = DAEMON_AGENT as unknown as { options: http.AgentOptions; keepAlive: boolean };
    expect(agent.options.timeout).toBeUndefined();
    expect(agent.keepAlive).toBe(false);
  });

  it('sends its requests through that agent, and reads an answer that comes slowly', async () => {
    const server = http.createServer((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.write('{"ok":');
      setTimeout(() => res.end('true}'), 200);
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    const seen: string[] = [];
    type AddRequest = (req: http.ClientRequest, options: http.RequestOptions) => void;
    const agent = DAEMON_AGENT as unknown as { addRequest: AddRequest };
    const add = agent.addRequest.bind(DAEMON_AGENT);
    agent.addRequest = (req, options) => {
      seen.push(String(req.path));
      add(req, options);
    };
    try {
      const client = new DaemonClient({ url: `http://127.0.0.1:${port}` });
      expect((await client.call('GET', '/v1/anything')).body).toEqual({ ok: true });
    } finally {
      agent.addRequest = add;
    }
    expect(seen).toEqual(['/v1/anything']);
  });

  it('a daemon that does not answer is E_DAEMON_NOT_RUNNING; an aborted call rejects with the abort', async () => {
    const server = http.createServer(() => undefined);
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as { port: number };
    const client = new DaemonClient({ url: `http://127.0.0.1:${port}` });
    await expect(client.call('GET', '/v1/x', undefined, { timeoutMs: 100 })).rejects.toMatchObject({
      code: 'E_DAEMON_NOT_RUNNING',
    });
    const ac = new AbortController();
    const p = client.call('GET', '/v1/x', undefined, { signal: ac.signal });
    ac.abort();
    await expect(p).rejects.toMatchObject({ name: 'AbortError' });
    server.closeAllConnections();
  });
});
