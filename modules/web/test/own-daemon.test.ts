// Issue 22: web.fetch never reaches finger's own daemon, even where the operator allowed
// loopback by host or range: the governed cannot govern. E_FORBIDDEN, `details.reason`
// OWN_DAEMON, and nothing is sent.

import { afterEach, describe, expect, it } from 'vitest';

import { createWebModule, OWN_DAEMON } from '../src/index.js';
import { rejection, startServer, tableLookup, type TestServer } from './helpers.js';

const servers: TestServer[] = [];
afterEach(async () => {
  while (servers.length > 0) await servers.pop()!.close();
});

async function daemonLike(): Promise<TestServer> {
  const s = await startServer((_req, res) => res.end('{"token":"x"}'));
  servers.push(s);
  return s;
}

describe("web.fetch of finger's own daemon", () => {
  it('is refused on loopback allowed by allow_hosts and allow_cidrs, by IP and by name', async () => {
    const s = await daemonLike();
    const web = createWebModule({
      settings: { allow_hosts: ['127.0.0.1', 'localhost'], allow_cidrs: ['127.0.0.0/8'], daemon_ports: () => [s.port] },
      lookup: tableLookup({ localhost: ['127.0.0.1'] }),
    });
    for (const url of [`http://127.0.0.1:${s.port}/v1/tokens`, `http://localhost:${s.port}/v1/tokens`]) {
      const err = await rejection(web.tools.fetch({ url }));
      expect({ code: err.code, details: err.details }).toEqual({
        code: 'E_FORBIDDEN',
        details: { url, address: '127.0.0.1', reason: OWN_DAEMON },
      });
    }
    expect(s.requests).toEqual([]);
  });

  it('another loopback port the operator allowed is still fetched', async () => {
    const s = await daemonLike();
    const web = createWebModule({ settings: { allow_hosts: ['127.0.0.1'], daemon_ports: () => [s.port + 1] } });
    const r = await web.tools.fetch({ url: `${s.origin}/x` });
    expect(r.status).toBe(200);
  });
});
