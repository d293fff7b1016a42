import { readFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

import type { DaemonInfo, HealthResult } from './api-types.js';
import { ApiError, CliError, DaemonNotRunningError, type ErrorBody } from './errors.js';

/**
 * The daemon's answers wait as long as its calls do: a blocking call held for a person lasts up to
 * the approval timeout (5 min by default), a tool up to its own timeout. fetch's own limits (undici:
 * 300 s for the headers, 300 s between body chunks) cut such a call off and reported the daemon as
 * not running; this agent has no timeout (node:http sets none): the daemon bounds every call
 * itself, and a command's own `timeoutMs` or Ctrl-C still ends the wait. No keep-alive: a CLI
 * process makes few requests and must not be held open by an idle socket.
 */
export const DAEMON_AGENT = new http.Agent({ keepAlive: false });
let httpsAgent: Promise<http.Agent> | undefined;

/** The agent for `url`'s scheme; node:https is imported only for an https daemon. */
function agentFor(url: URL): Promise<http.Agent> | http.Agent {
  if (url.protocol === 'http:') return DAEMON_AGENT;
  return (httpsAgent ??= import('node:https').then((h) => new h.Agent({ keepAlive: false })));
}

/**
 * One request with node:http (not fetch: undici's import alone costs a CLI process hundreds of ms
 * on a loaded machine). No timeout of its own (see above); `signal` aborts it.
 */
async function send(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  signal: AbortSignal | undefined,
): Promise<{ status: number; text: string }> {
  const agent = await agentFor(url);
  const mod = url.protocol === 'http:' ? http : await import('node:https');
  if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
  return new Promise((resolve, reject) => {
    const req = mod.request(url, { method, headers, agent, ...(signal ? { signal } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Environment variables as the CLI sees them (injected, so tests need not touch process.env). */
export type Env = Record<string, string | undefined>;

/** Where the daemon listens when neither a flag, FINGER_URL nor daemon.json says otherwise. */
export const DEFAULT_URL = 'http://127.0.0.1:7770';

/** How long `health()` waits for an answer before calling the daemon unreachable. */
export const HEALTH_TIMEOUT_MS = 3_000;

/** Where the CLI found the daemon, and with what credentials. */
export interface DaemonLocation {
  /** FINGER_HOME in effect. */
  home: string;
  /** Base URL (no trailing slash). */
  url: string;
  /** Which setting gave the URL. */
  urlSource: 'flag' | 'env' | 'daemon.json' | 'default';
  /** Bearer token, when one was found. */
  token?: string;
  /** The admin token file the CLI read (or would read): see {@link tokenFilePath}. */
  tokenFile: string;
  /** The daemon.json contents, when the file exists and parses. */
  info?: DaemonInfo;
}

/**
 * FINGER_HOME in effect: `--home`, else FINGER_HOME, else `~/.finger`. Relative paths resolve
 * against the working directory.
 */
export function resolveHome(flag: string | undefined, env: Env): string {
  const raw = flag ?? env.FINGER_HOME ?? path.join(env.HOME ?? os.homedir(), '.finger');
  return path.resolve(raw);
}

/** Reads `<home>/daemon.json`; undefined when it is missing or not a `{pid, url}` object. */
export async function readDaemonInfo(home: string): Promise<DaemonInfo | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(home, 'daemon.json'), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const v = JSON.parse(text) as Partial<DaemonInfo>;
    if (typeof v !== 'object' || v === null || typeof v.url !== 'string' || typeof v.pid !== 'number') return undefined;
    return v as DaemonInfo;
  } catch {
    return undefined;
  }
}

/** `p` made absolute as the daemon does for `token_file`: `~/…` against HOME, relative against FINGER_HOME. */
function expandTokenFile(p: string, home: string, env: Env): string {
  const userHome = env.HOME || os.homedir();
  if (p === '~') return path.resolve(userHome);
  if (p.startsWith('~/')) return path.resolve(userHome, p.slice(2));
  return path.resolve(home, p);
}

/** `token_file` of `<home>/config/config.json`, when it names one. */
async function configuredTokenFile(home: string): Promise<string | undefined> {
  try {
    const cfg = JSON.parse(await readFile(path.join(home, 'config', 'config.json'), 'utf8')) as {
      token_file?: unknown;
    };
    return typeof cfg.token_file === 'string' && cfg.token_file !== '' ? cfg.token_file : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The admin token file: FINGER_TOKEN_FILE, else the `token_file` the running daemon wrote in
 * daemon.json, else config.json's `token_file`, else `<home>/token` — the daemon's own rule.
 */
export async function tokenFilePath(home: string, env: Env, info?: DaemonInfo): Promise<string> {
  if (env.FINGER_TOKEN_FILE) return expandTokenFile(env.FINGER_TOKEN_FILE, home, env);
  if (typeof info?.token_file === 'string' && path.isAbsolute(info.token_file)) return info.token_file;
  return expandTokenFile((await configuredTokenFile(home)) ?? 'token', home, env);
}

/**
 * The bearer token: FINGER_TOKEN, else the first line of the admin token file
 * ({@link tokenFilePath}); undefined when neither.
 */
export async function readToken(home: string, env: Env, info?: DaemonInfo): Promise<string | undefined> {
  if (env.FINGER_TOKEN) return env.FINGER_TOKEN.trim();
  try {
    const text = (await readFile(await tokenFilePath(home, env, info), 'utf8')).trim();
    return text ? text.split(/\r?\n/)[0] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Finds the daemon: URL from `--url`, else FINGER_URL, else `<home>/daemon.json`, else
 * {@link DEFAULT_URL}; token from FINGER_TOKEN, else the admin token file ({@link tokenFilePath}).
 */
export async function locateDaemon(opts: { home?: string; url?: string }, env: Env): Promise<DaemonLocation> {
  const home = resolveHome(opts.home, env);
  const info = await readDaemonInfo(home);
  let url: string;
  let urlSource: DaemonLocation['urlSource'];
  if (opts.url) [url, urlSource] = [opts.url, 'flag'];
  else if (env.FINGER_URL) [url, urlSource] = [env.FINGER_URL, 'env'];
  else if (info) [url, urlSource] = [info.url, 'daemon.json'];
  else [url, urlSource] = [(await configuredUrl(home, env)) ?? DEFAULT_URL, 'default'];
  const tokenFile = await tokenFilePath(home, env, info);
  const loc: DaemonLocation = { home, url: url.replace(/\/+$/, ''), urlSource, tokenFile };
  const token = await readToken(home, env, info);
  if (token) loc.token = token;
  if (info) loc.info = info;
  return loc;
}

/**
 * Where a daemon of `home` would listen by its config (`server.host`/`server.port` of
 * `config/config.json`, `FINGER_HOST`/`FINGER_PORT`), when it names a port: what to try when no
 * daemon.json says where one runs. Undefined when it names none or cannot be read (the daemon
 * reports a bad config itself).
 */
async function configuredUrl(home: string, env: Env): Promise<string | undefined> {
  let server: { host?: unknown; port?: unknown } = {};
  try {
    const cfg = JSON.parse(await readFile(path.join(home, 'config', 'config.json'), 'utf8')) as {
      server?: typeof server;
    };
    if (cfg.server !== null && typeof cfg.server === 'object') server = cfg.server;
  } catch {
    // no config file (or not JSON): defaults
  }
  const port = env.FINGER_PORT ?? server.port;
  const host = env.FINGER_HOST ?? server.host ?? '127.0.0.1';
  if (port === undefined || !/^\d{1,5}$/.test(String(port)) || Number(port) === 0 || typeof host !== 'string')
    return undefined;
  const h = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${Number(port)}`;
}

/** Options of one HTTP call. */
export interface CallOptions {
  /** Give up after this long (the daemon then counts as unreachable). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

function isErrorBody(v: unknown): v is { error: ErrorBody } {
  const e = (v as { error?: unknown } | null)?.error as Partial<ErrorBody> | undefined;
  return typeof e === 'object' && e !== null && typeof e.code === 'string' && typeof e.message === 'string';
}

const CODE_BY_STATUS: Record<number, string> = { 401: 'E_UNAUTHENTICATED', 403: 'E_FORBIDDEN', 404: 'E_NOT_FOUND' };

/**
 * A thin JSON-over-HTTP client of the daemon. Every non-2xx answer rejects with {@link ApiError}
 * (its `code` from the body); a connection that cannot be made rejects with
 * {@link DaemonNotRunningError}.
 */
export class DaemonClient {
  readonly url: string;
  readonly token: string | undefined;

  constructor(opts: { url: string; token?: string | undefined }) {
    try {
      const u = new URL(opts.url);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http');
    } catch {
      throw new CliError('E_USAGE', `not an http(s) URL: ${opts.url}`);
    }
    this.url = opts.url.replace(/\/+$/, '');
    this.token = opts.token;
  }

  /** The WebSocket URL of a daemon path (`http` → `ws`, `https` → `wss`). */
  wsUrl(p: string): string {
    return this.url.replace(/^http/, 'ws') + p;
  }

  /** Sends one request; resolves with the HTTP status and parsed JSON body of a 2xx answer. */
  async call<T>(
    method: string,
    p: string,
    body?: unknown,
    opts: CallOptions = {},
  ): Promise<{ status: number; body: T }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const signals = [
      opts.signal,
      opts.timeoutMs !== undefined ? AbortSignal.timeout(opts.timeoutMs) : undefined,
    ].filter((s): s is AbortSignal => s !== undefined);
    let res: { status: number; text: string };
    try {
      res = await send(
        new URL(this.url + p),
        method,
        headers,
        body === undefined ? undefined : JSON.stringify(body),
        signals.length ? AbortSignal.any(signals) : undefined,
      );
    } catch (e) {
      if (opts.signal?.aborted) throw e;
      throw new DaemonNotRunningError(this.url);
    }
    const text = res.text;
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (res.status < 200 || res.status > 299) {
      if (isErrorBody(parsed)) throw new ApiError(res.status, parsed.error);
      const code = CODE_BY_STATUS[res.status] ?? 'E_INTERNAL';
      throw new ApiError(res.status, {
        code,
        message: `HTTP ${res.status} from ${method} ${p}: ${text.slice(0, 200)}`,
      });
    }
    if (parsed === undefined && text) {
      throw new CliError(
        'E_INTERNAL',
        `the daemon answered ${method} ${p} with something that is not JSON: ${text.slice(0, 200)}`,
      );
    }
    return { status: res.status, body: parsed as T };
  }

  /** GET, resolving with the body. */
  async get<T>(p: string, opts?: CallOptions): Promise<T> {
    return (await this.call<T>('GET', p, undefined, opts)).body;
  }

  /** POST a JSON body, resolving with status and body (callers branch on 200 vs 202). */
  post<T>(p: string, body: unknown, opts?: CallOptions): Promise<{ status: number; body: T }> {
    return this.call<T>('POST', p, body, opts);
  }

  /** DELETE, resolving with the body. */
  async delete<T>(p: string, opts?: CallOptions): Promise<T> {
    return (await this.call<T>('DELETE', p, undefined, opts)).body;
  }

  /** `GET /v1/health` (no auth needed); rejects with DaemonNotRunningError after `timeoutMs`. */
  health(timeoutMs = HEALTH_TIMEOUT_MS): Promise<HealthResult> {
    return this.get<HealthResult>('/v1/health', { timeoutMs });
  }
}

/** URL-encodes one path segment. */
export function seg(s: string): string {
  return encodeURIComponent(s);
}
