/**
 * A stand-in for the finger daemon's HTTP/WS API (.briefs/http-api.md) on node:http, for the CLI
 * tests: real sockets on 127.0.0.1:0, fixed data, the protocol package's real `/hub` parser and
 * manifest validator. Not a daemon: just enough behaviour for the CLI to be exercised.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { type WebSocket, WebSocketServer } from 'ws';

import { assertManifest, type FingerEvent, isFingerError, parseHubCommand } from '@finger/protocol';

import { newToolState, toolRoute } from './fake-tools.js';

export const ADMIN_TOKEN = 'fgr_test_admin_token';

/** One request the fake saw. */
export interface SeenRequest {
  method: string;
  path: string;
  auth: string | undefined;
  body: unknown;
}

export interface FakeDaemon {
  url: string;
  home: string;
  seen: SeenRequest[];
  /** Event-stream clients currently connected (after auth). */
  sockets: Set<WebSocket>;
  /** Polls of GET /v1/requests/req-nb answered "running" before it succeeds. */
  runningPolls: number;
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

/** Events recorded for request `req-1`. */
export const REPLAY_EVENTS: FingerEvent[] = [
  ['INPUT_RECEIVED', { text_len: 38 }],
  ['MODE_PARSED', { mode: 'hub' }],
  ['DISPATCH_SENT', { direct: true }],
  ['DISPATCH_RESULT', { ok: true }],
].map(([type, data], i) => ({
  id: `ev-${i + 1}`,
  type: type as FingerEvent['type'],
  ts: `2026-01-02T03:04:0${i}.000Z`,
  request_id: 'req-1',
  correlation_id: 'corr-1',
  session_id: 'sess-1',
  workflow_id: '',
  target: 'echo.echo',
  data: data as Record<string, unknown>,
}));

const MODULES = [
  {
    id: 'echo',
    name: 'Echo',
    version: '0.1.0',
    kind: 'tool',
    runtime: 'inprocess',
    tools: [
      { name: 'echo', description: 'echo' },
      { name: 'say', description: 'say' },
    ],
    grants: [],
    status: 'ready',
    healthy: true,
    inflight: 2,
    concurrency: 64,
    registered_at: '2026-01-02T03:04:05.000Z',
    source: 'static',
    base_dir: '/x',
  },
  {
    id: 'shell',
    name: 'Shell',
    version: '1.2.3',
    kind: 'tool',
    runtime: 'stdio',
    tools: [{ name: 'run', description: 'run' }],
    grants: [],
    status: 'unhealthy',
    healthy: false,
    inflight: 0,
    concurrency: 4,
    registered_at: '2026-01-02T03:04:05.000Z',
    source: 'dynamic',
    base_dir: '/y',
  },
];

async function readBody(req: http.IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text ? (JSON.parse(text) as unknown) : undefined;
}

/** Starts the fake on 127.0.0.1:0 with a temp FINGER_HOME holding daemon.json and token. */
export async function startFakeDaemon(): Promise<FakeDaemon> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'finger-cli-test-'));
  const seen: SeenRequest[] = [];
  const tokens = new Map<string, { name: string; role: string; created_at: string; last_used_at?: string }>([
    [
      'admin',
      {
        name: 'admin',
        role: 'admin',
        created_at: '2026-01-01T00:00:00.000Z',
        last_used_at: '2026-01-02T00:00:00.000Z',
      },
    ],
  ]);
  const sockets = new Set<WebSocket>();
  const fake = { runningPolls: 2 } as FakeDaemon;
  const toolState = newToolState();
  let polls = 0;

  const route = async (
    method: string,
    p: string,
    body: unknown,
    auth: string | undefined,
    url = p,
  ): Promise<[number, unknown]> => {
    if (method === 'GET' && p === '/v1/health') {
      return [200, { status: 'ok', version: '0.1.0', uptime_s: 3725, pid: 4242, modules: MODULES.length, home }];
    }
    if (auth !== `Bearer ${ADMIN_TOKEN}`)
      throw new HttpError(401, 'E_UNAUTHENTICATED', 'missing or invalid bearer token');
    let m: RegExpMatchArray | null;
    if (method === 'POST' && p === '/v1/input') {
      const { text } = body as { text: string };
      if (!text.trimStart().startsWith('/hub')) throw new HttpError(503, 'E_ROUTE_FAILED', 'no router configured');
      const cmd = parseHubCommand(text);
      if (cmd.target === 'nowhere')
        throw new HttpError(404, 'E_NO_TARGET', 'no such target: nowhere', { tools: ['echo.echo', 'echo.say'] });
      if (!cmd.blocking)
        return [202, { request_id: 'req-nb', correlation_id: 'corr-nb', status: 'running', target: cmd.target }];
      const result = cmd.target === 'echo.say' ? (cmd.payload as { text: string }).text : cmd.payload;
      return [200, { request_id: 'req-1', correlation_id: 'corr-1', status: 'succeeded', target: cmd.target, result }];
    }
    if (method === 'GET' && (m = p.match(/^\/v1\/requests\/([^/]+)$/))) {
      const id = decodeURIComponent(m[1]!);
      const base = {
        request_id: id,
        correlation_id: `corr-${id}`,
        target: 'echo.echo',
        created_at: '2026-01-02T03:04:05.000Z',
      };
      if (id === 'req-nb') {
        if (polls++ < fake.runningPolls) return [200, { ...base, status: 'running' }];
        return [200, { ...base, status: 'succeeded', finished_at: '2026-01-02T03:04:06.000Z', result: { done: true } }];
      }
      if (id === 'req-failed') {
        return [
          200,
          { ...base, status: 'failed', error: { code: 'E_DENIED_BY_POLICY', message: 'rule r1 denies shell.run' } },
        ];
      }
      throw new HttpError(404, 'E_NOT_FOUND', `no request ${id}`);
    }
    if (method === 'GET' && (m = p.match(/^\/v1\/requests\/([^/]+)\/events$/))) {
      // req-remote: a call another daemon of the cluster made and recorded (its events carry `origin`)
      if (m[1] === 'req-remote')
        return [
          200,
          { events: REPLAY_EVENTS.map((e) => ({ ...e, request_id: 'req-remote', origin: 'daemon-b-1-ab' })) },
        ];
      return [200, { events: m[1] === 'req-1' ? REPLAY_EVENTS : [] }];
    }
    if (method === 'GET' && p === '/v1/modules') return [200, { modules: MODULES }];
    if (method === 'POST' && p === '/v1/modules') {
      const { manifest, base_dir } = body as { manifest: unknown; base_dir: string };
      try {
        const mf = assertManifest(manifest);
        return [
          201,
          {
            module: {
              ...MODULES[0],
              id: mf.id,
              version: mf.version,
              runtime: mf.runtime.type,
              tools: mf.tools,
              base_dir,
            },
          },
        ];
      } catch (e) {
        if (isFingerError(e)) throw new HttpError(400, e.code, e.message, e.details);
        throw e;
      }
    }
    if (method === 'GET' && (m = p.match(/^\/v1\/modules\/([^/]+)\/health$/))) {
      const mod = MODULES.find((x) => x.id === m![1]);
      if (!mod) throw new HttpError(404, 'E_NOT_FOUND', `no module ${m[1]}`);
      return [
        200,
        {
          id: mod.id,
          healthy: mod.healthy,
          checked_at: '2026-01-02T03:04:05.000Z',
          consecutive_failures: mod.healthy ? 0 : 3,
          ...(mod.healthy ? {} : { detail: 'no answer in 2000 ms' }),
        },
      ];
    }
    if (method === 'DELETE' && (m = p.match(/^\/v1\/modules\/([^/]+)$/))) {
      if (!MODULES.some((x) => x.id === m![1])) throw new HttpError(404, 'E_NOT_FOUND', `no module ${m[1]}`);
      return [200, { id: m[1], unregistered: true }];
    }
    if (method === 'GET' && p === '/v1/tokens') return [200, { tokens: [...tokens.values()] }];
    if (method === 'POST' && p === '/v1/tokens') {
      const { name, role } = body as { name: string; role: string };
      if (!['admin', 'operator', 'viewer'].includes(role) && !role.startsWith('agent:'))
        throw new HttpError(400, 'E_INVALID_ARGS', `unknown role ${role}`);
      if (tokens.has(name)) throw new HttpError(409, 'E_CONFLICT', `token ${name} already exists`);
      tokens.set(name, { name, role, created_at: '2026-01-03T00:00:00.000Z' });
      return [201, { name, role, token: `fgr_secret_${name}` }];
    }
    if (method === 'DELETE' && (m = p.match(/^\/v1\/tokens\/([^/]+)$/))) {
      const name = decodeURIComponent(m[1]!);
      if (!tokens.delete(name)) throw new HttpError(404, 'E_NOT_FOUND', `no token ${name}`);
      return [200, { name, revoked: true }];
    }
    const toolAnswer = toolRoute(toolState, method, url, body);
    if (toolAnswer) return toolAnswer;
    throw new HttpError(404, 'E_NOT_FOUND', `no route ${method} ${p}`);
  };

  const server = http.createServer((req, res) => {
    void (async () => {
      const p = (req.url ?? '/').split('?')[0]!;
      let status: number;
      let payload: unknown;
      try {
        const body = await readBody(req);
        seen.push({ method: req.method ?? 'GET', path: req.url ?? '/', auth: req.headers.authorization, body });
        [status, payload] = await route(req.method ?? 'GET', p, body, req.headers.authorization, req.url ?? p);
      } catch (e) {
        if (e instanceof HttpError)
          [status, payload] = [
            e.status,
            { error: { code: e.code, message: e.message, ...(e.details !== undefined ? { details: e.details } : {}) } },
          ];
        else if (isFingerError(e)) [status, payload] = [e.status, { error: e.toJSON() }];
        else [status, payload] = [500, { error: { code: 'E_INTERNAL', message: String(e) } }];
      }
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    })();
  });

  // WS /v1/events: header auth (or first-message auth), then subscribe → subscribed, two events
  // of the filter, a dropped notice, one more event.
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    if (req.url?.split('?')[0] !== '/v1/events') {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const send = (m: unknown): void => ws.send(JSON.stringify(m));
      const refuse = (): void => {
        send({ type: 'error', error: { code: 'E_UNAUTHENTICATED', message: 'missing or invalid bearer token' } });
        ws.close(4401);
      };
      let authed = req.headers.authorization === `Bearer ${ADMIN_TOKEN}`;
      if (authed) {
        sockets.add(ws);
        send({ type: 'ready' });
      } else if (req.headers.authorization !== undefined) {
        return refuse();
      } else {
        const timer = setTimeout(() => !authed && refuse(), 200);
        ws.on('close', () => clearTimeout(timer));
      }
      ws.on('message', (raw) => {
        const msg = JSON.parse(String(raw)) as { op: string; token?: string; types?: string[]; request_id?: string };
        if (!authed) {
          if (msg.op === 'auth' && msg.token === ADMIN_TOKEN) {
            authed = true;
            sockets.add(ws);
            return send({ type: 'ready' });
          }
          return refuse();
        }
        if (msg.op === 'subscribe') {
          const { op: _op, ...filter } = msg;
          send({ type: 'subscribed', filter });
          const types = msg.types ?? REPLAY_EVENTS.map((e) => e.type);
          const match = REPLAY_EVENTS.filter((e) => types.includes(e.type));
          for (const e of match.slice(0, 2)) send({ type: 'event', event: e });
          send({ type: 'dropped', count: 5 });
          for (const e of match.slice(2)) send({ type: 'event', event: e });
        }
      });
      ws.on('close', () => sockets.delete(ws));
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await writeFile(
    path.join(home, 'daemon.json'),
    JSON.stringify({ pid: process.pid, url, started_at: '2026-01-02T03:04:05.000Z', home, version: '0.1.0' }),
  );
  await writeFile(path.join(home, 'token'), `${ADMIN_TOKEN}\n`, { mode: 0o600 });
  return Object.assign(fake, {
    url,
    home,
    seen,
    sockets,
    async close() {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(home, { recursive: true, force: true });
    },
  });
}
