// The filtering forward proxy behind the workspace-write sandbox's registry access (config
// `sandbox.network.allow`): the daemon runs one, listening on a Unix socket under its state dir
// (never TCP), and the sandbox's bridge (sandbox-bridge.ts) forwards the sandboxed command's
// HTTP_PROXY connections to it. It lets through HTTP CONNECT tunnels and plain HTTP requests to
// the listed host:port pairs only, after resolving the name and refusing it when any address is
// loopback, link-local, private or a metadata endpoint (the firewall's classifier, injected: the
// hub never imports the firewall) — unless that exact IP literal and port is listed. Everything
// else gets 403 with a body saying why, and each refusal is reported. Bounded: connections,
// header size and time, connect time, idle time, bytes per connection.

import { chmodSync, lstatSync, mkdirSync, unlinkSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { dirname } from 'node:path';
import { pipeline, Transform } from 'node:stream';

import { expandAllow, normalHost, type ProxyAllowEntry } from './sandbox-proxy-allow.js';

/** The verdict on one resolved address (the firewall's `classifyAddress` has this shape). */
export type ProxyAddressVerdict = { allowed: true } | { allowed: false; reason: string };

/** One refused request, as reported to {@link SandboxProxyOptions.onRefusal}. */
export interface ProxyRefusal {
  method: string;
  /** `host:port` as the client asked for it (bounded to 300 characters). */
  target: string;
  reason: string;
}

/** The bounds of the proxy. */
export interface SandboxProxyLimits {
  /** Client connections at once (default 64); more are closed at once. */
  max_connections: number;
  /** A connection without traffic either way is closed after this (default 60 s). */
  idle_timeout_ms: number;
  /** Connecting upstream may take this long (default 10 s). */
  connect_timeout_ms: number;
  /** Bytes through one connection, both ways together (default 2 GiB). */
  max_bytes: number;
  /** A request's head must arrive within this (default 10 s). */
  header_timeout_ms: number;
  /** A request's head may be this large (default 16 KiB). */
  max_header_bytes: number;
}

export const SANDBOX_PROXY_DEFAULTS: Readonly<SandboxProxyLimits> = Object.freeze({
  max_connections: 64,
  idle_timeout_ms: 60_000,
  connect_timeout_ms: 10_000,
  max_bytes: 2 * 1024 ** 3,
  header_timeout_ms: 10_000,
  max_header_bytes: 16 * 1024,
});

/** How a {@link SandboxProxy} is built. */
export interface SandboxProxyOptions {
  /** The Unix socket to listen on (its directory is created 0700, the socket made 0600). */
  socketPath: string;
  /** Entries of config `sandbox.network.allow` (`registries`, `host`, `host:port`, `ip:port`). */
  allow: readonly string[];
  /** Judges each resolved address (the daemon: `classifyAddress` of `@finger/net-address`). */
  judgeAddress(address: string): ProxyAddressVerdict;
  /** Resolves a host name to its addresses (default: the system resolver, every address). */
  resolve?(host: string): Promise<string[]>;
  limits?: Partial<SandboxProxyLimits>;
  /** Told of every refusal (the daemon logs it). */
  onRefusal?(refusal: ProxyRefusal): void;
}

/** A refusal: the status and the body the client gets. */
class Refused extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

const RESOLVE_TIMEOUT_MS = 5000;

async function systemResolve(host: string): Promise<string[]> {
  const { lookup } = await import('node:dns/promises');
  const all = await lookup(host, { all: true, verbatim: true });
  return all.map((a) => a.address);
}

/** Counts bytes through a connection and fails it past the bound. */
function meter(budget: { left: number }): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      budget.left -= chunk.length;
      if (budget.left < 0) done(new Error('byte bound reached'));
      else done(null, chunk);
    },
  });
}

/**
 * The proxy (see the file's comment). `start()` listens, `close()` stops listening and ends
 * every connection; idempotent.
 */
export class SandboxProxy {
  readonly socketPath: string;
  readonly #allow: Map<string, ProxyAllowEntry>;
  readonly #judge: SandboxProxyOptions['judgeAddress'];
  readonly #resolve: (host: string) => Promise<string[]>;
  readonly #limits: SandboxProxyLimits;
  readonly #onRefusal: ((r: ProxyRefusal) => void) | undefined;
  readonly #server: http.Server;
  readonly #sockets = new Set<net.Socket>();
  #refused = 0;
  #allowed = 0;

  /** Throws a plain Error naming a bad `allow` entry. */
  constructor(o: SandboxProxyOptions) {
    this.socketPath = o.socketPath;
    this.#allow = expandAllow(o.allow);
    this.#judge = o.judgeAddress;
    this.#resolve = o.resolve ?? systemResolve;
    this.#limits = { ...SANDBOX_PROXY_DEFAULTS, ...o.limits };
    this.#onRefusal = o.onRefusal;
    const l = this.#limits;
    this.#server = http.createServer({ maxHeaderSize: l.max_header_bytes, requestTimeout: 0 }, (req, res) => {
      void this.#forward(req, res);
    });
    this.#server.headersTimeout = l.header_timeout_ms;
    this.#server.keepAliveTimeout = 5000;
    this.#server.maxConnections = l.max_connections;
    this.#server.timeout = l.idle_timeout_ms;
    this.#server.on('connection', (s: net.Socket) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
    this.#server.on('connect', (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      void this.#tunnel(req, socket, head);
    });
  }

  /** The host:port pairs let through (expanded). */
  get hosts(): string[] {
    return [...this.#allow.keys()];
  }

  /** Requests let through and refused so far. */
  stats(): { allowed: number; refused: number; connections: number } {
    return { allowed: this.#allowed, refused: this.#refused, connections: this.#sockets.size };
  }

  /** Listens on the socket (a stale socket file left by a crash is replaced; anything else there is an error). */
  async start(): Promise<void> {
    const dir = dirname(this.socketPath);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    try {
      if (lstatSync(this.socketPath).isSocket()) unlinkSync(this.socketPath);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.socketPath, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    chmodSync(this.socketPath, 0o600);
  }

  /** Stops listening, ends every connection and removes the socket file. */
  async close(): Promise<void> {
    if (!this.#server.listening) return;
    const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
    for (const s of this.#sockets) s.destroy();
    await closed;
    try {
      unlinkSync(this.socketPath);
    } catch {
      // already gone
    }
  }

  /** The address to connect to for `host:port`, or a {@link Refused}. */
  async #admit(host: string | null, port: number): Promise<string> {
    if (host === null || !Number.isInteger(port) || port < 1 || port > 65535)
      throw new Refused(400, 'not a host:port this proxy understands');
    const entry = this.#allow.get(`${host}:${port}`);
    if (entry === undefined)
      throw new Refused(403, `${host}:${port} is not in sandbox.network.allow (only the listed hosts are reachable)`);
    if (entry.literal) return host;
    if (net.isIP(host) !== 0) {
      const v = this.#judge(host);
      if (!v.allowed) throw new Refused(403, `${host} is a ${v.reason}`);
      return host;
    }
    let addresses: string[];
    try {
      addresses = await Promise.race([
        this.#resolve(host),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('timed out')), RESOLVE_TIMEOUT_MS).unref()),
      ]);
    } catch (e) {
      throw new Refused(502, `cannot resolve ${host}: ${(e as Error).message}`);
    }
    if (addresses.length === 0) throw new Refused(502, `${host} resolved to no address`);
    // one non-global address refuses the name: the sandbox must not reach the host's own network
    for (const a of addresses) {
      const v = this.#judge(a);
      if (!v.allowed) throw new Refused(403, `${host} resolves to ${a}, a ${v.reason}`);
    }
    return addresses[0]!;
  }

  #refuse(method: string, target: string, why: Refused | Error): Refused {
    const r = why instanceof Refused ? why : new Refused(502, why.message);
    this.#refused++;
    this.#onRefusal?.({ method, target: target.slice(0, 300), reason: r.message });
    return r;
  }

  #connectUpstream(address: string, port: number): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const up = net.connect({ host: address, port });
      const timer = setTimeout(() => up.destroy(new Error('connect timed out')), this.#limits.connect_timeout_ms);
      up.once('connect', () => {
        clearTimeout(timer);
        resolve(up);
      });
      up.once('error', (e) => {
        clearTimeout(timer);
        reject(new Refused(502, `cannot connect: ${e.message}`));
      });
    });
  }

  async #tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    const target = req.url ?? '';
    client.on('error', () => client.destroy());
    const m = /^(\[[^\]]+\]|[^:/]+):(\d{1,5})$/.exec(target);
    let up: net.Socket;
    try {
      const host = m !== null ? normalHost(m[1]!) : null;
      const port = m !== null ? Number(m[2]) : NaN;
      const address = await this.#admit(host, port);
      up = await this.#connectUpstream(address, port);
    } catch (e) {
      const r = this.#refuse('CONNECT', target, e as Error);
      const body = `finger sandbox proxy: CONNECT ${target.slice(0, 300)} refused: ${r.message}\n`;
      client.end(
        `HTTP/1.1 ${r.status} ${http.STATUS_CODES[r.status] ?? 'Refused'}\r\nContent-Type: text/plain; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    this.#allowed++;
    const idle = this.#limits.idle_timeout_ms;
    client.setTimeout(idle, () => client.destroy());
    up.setTimeout(idle, () => up.destroy());
    const budget = { left: this.#limits.max_bytes };
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) up.write(head);
    const done = (): void => {
      client.destroy();
      up.destroy();
    };
    pipeline(client, meter(budget), up, done);
    pipeline(up, meter(budget), client, done);
  }

  async #forward(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const raw = req.url ?? '';
    let url: URL | undefined;
    try {
      url = new URL(raw);
    } catch {
      url = undefined;
    }
    let address: string;
    try {
      if (url === undefined || url.protocol !== 'http:')
        throw new Refused(400, 'only absolute http:// requests and CONNECT tunnels go through this proxy');
      address = await this.#admit(normalHost(url.hostname), url.port === '' ? 80 : Number(url.port));
    } catch (e) {
      const r = this.#refuse(method, url?.host ?? raw, e as Error);
      res.writeHead(r.status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      res.end(`finger sandbox proxy: ${method} ${(url?.host ?? raw).slice(0, 300)} refused: ${r.message}\n`);
      req.resume();
      return;
    }
    this.#allowed++;
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) headers[k] = v;
    headers.host = url.host;
    const budget = { left: this.#limits.max_bytes };
    const up = http.request({
      host: address,
      port: url.port === '' ? 80 : Number(url.port),
      method,
      path: `${url.pathname}${url.search}`,
      headers,
      agent: false,
      timeout: this.#limits.idle_timeout_ms,
    });
    up.on('timeout', () => up.destroy(new Error('upstream idle')));
    up.on('error', (e) => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
        res.end(`finger sandbox proxy: ${method} ${url.host} failed: ${e.message}\n`);
      } else res.destroy();
    });
    up.on('response', (ur) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(ur.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) out[k] = v;
      res.writeHead(ur.statusCode ?? 502, out);
      pipeline(ur, meter(budget), res, () => undefined);
    });
    pipeline(req, meter(budget), up, () => undefined);
  }
}
