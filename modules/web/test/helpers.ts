import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { isFingerError } from '@finger/protocol';

import type { HostLookup, ResolvedAddress } from '../src/index.js';

/** A real HTTP server on 127.0.0.1:0 recording every request it sees. */
export interface TestServer {
  port: number;
  origin: string;
  requests: Array<{ method: string; url: string; headers: http.IncomingHttpHeaders }>;
  close(): Promise<void>;
}

export async function startServer(handler: http.RequestListener): Promise<TestServer> {
  const requests: TestServer['requests'] = [];
  const server = http.createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A resolver over a fixed table; unknown names fail like DNS does (ENOTFOUND). */
export function tableLookup(table: Record<string, string[]>, calls: string[] = []): HostLookup {
  return async (hostname) => {
    calls.push(hostname);
    const list = table[hostname];
    if (list === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return list.map((address): ResolvedAddress => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

/** Awaits a rejection and returns the FingerError (fails the test when it resolves or throws another kind). */
export async function rejection(p: Promise<unknown>): Promise<{ code: string; message: string; details: any }> {
  try {
    await p;
  } catch (e) {
    if (isFingerError(e)) return { code: e.code, message: e.message, details: e.details as any };
    throw e;
  }
  throw new Error('expected a rejection, got a result');
}
