import { readFile, realpath } from 'node:fs/promises';
import { basename } from 'node:path';

import { pino } from 'pino';

import { build, type BuildOptions, type FingerApp } from '@finger/daemon';

import { type DaemonLog, daemonLogPath, describeDaemonLogs, registerDaemonLog } from './daemon-logs.js';
import { tempDir } from './temp-home.js';
import { connectEvents, type EventsClient } from './ws-client.js';

/** A JSON HTTP answer. */
export interface HttpAnswer<T = any> {
  status: number;
  body: T;
}

/** A real daemon listening on loopback port 0 with its own FINGER_HOME. */
export interface TestDaemon extends AsyncDisposable {
  readonly app: FingerApp;
  readonly url: string;
  readonly home: string;
  /**
   * The daemon's workspace root (realpath'd): a temp directory beside the home, never inside it,
   * unless `config.workspace.roots` was given (then its first root).
   */
  readonly workspace: string;
  readonly adminToken: string;
  /** Mints a token with `role` and returns it. */
  token(role: string, name?: string): Promise<string>;
  /** Sends a JSON request over real HTTP; `token: null` sends none. */
  http<T = any>(method: string, path: string, body?: unknown, token?: string | null): Promise<HttpAnswer<T>>;
  /** Opens an authenticated WebSocket to /v1/events. */
  events(token?: string): Promise<EventsClient>;
  close(): Promise<void>;
}

let tokenSeq = 0;

/**
 * A pino logger at `level` writing synchronously (nothing is lost when the test process ends) to a
 * new file named for `name`, registered so a failing test shows its tail.
 */
function openDaemonLog(name: string, level: string): DaemonLog & { logger: pino.Logger } {
  const path = daemonLogPath(name);
  const dest = pino.destination({ dest: path, sync: true });
  let closed = false;
  const log = {
    path,
    logger: pino({ level, base: { pid: process.pid } }, dest),
    close() {
      if (closed) return;
      closed = true;
      dest.end();
    },
  };
  registerDaemonLog(log);
  return log;
}

/**
 * Builds and starts a daemon on a temp home with a temp workspace beside it (`workspace.roots`
 * unless `options.config.workspace` is given); `options.config` overrides config.json keys. With
 * `keepHome: true`, close() leaves the home in place (the test removes it) so its files can be
 * inspected with the daemon stopped; the workspace is removed either way (a daemon built again on
 * the home with `workspace.roots: [d.workspace]` makes it anew). `prepareHome` runs on the new home
 * before the build. Unless `options.logger` is given, the daemon logs to a file of its own (see
 * daemon-logs.ts), never to the test's stdout; a start that fails carries that log's tail.
 */
export async function startTestDaemon(
  options: Omit<BuildOptions, 'home' | 'env'> & {
    env?: Record<string, string>;
    keepHome?: boolean;
    /**
     * Runs on the fresh home before the daemon is built (write `config/admin-policy.json`, …);
     * `workspace` is the temp workspace root made beside it (used unless `config.workspace` is given).
     */
    prepareHome?: (home: string, workspace: string) => Promise<void>;
  } = {},
): Promise<TestDaemon> {
  const { keepHome = false, prepareHome, ...buildOptions } = options;
  const dir = await tempDir('finger-daemon-');
  const ws = await tempDir('finger-workspace-');
  const removeAll = () => Promise.all([dir.remove(), ws.remove()]);
  if (prepareHome) {
    try {
      await prepareHome(dir.path, ws.path);
    } catch (e) {
      await removeAll();
      throw e;
    }
  }
  const config = {
    ...options.config,
    server: { host: '127.0.0.1', port: 0, ...(options.config?.server ?? {}) },
    workspace: options.config?.workspace ?? { roots: [ws.path] },
  };
  const level = options.config?.log?.level ?? options.env?.FINGER_LOG_LEVEL ?? 'info';
  const log = options.logger || level === 'silent' ? undefined : openDaemonLog(basename(dir.path), level);
  const failed = (e: unknown) => {
    log?.close();
    if (log && e instanceof Error) e.message += `\n${describeDaemonLogs([log])}`;
    return e;
  };
  let app: FingerApp;
  try {
    app = await build({
      ...buildOptions,
      ...(log ? { logger: log.logger } : {}),
      home: dir.path,
      env: options.env ?? {},
      config,
    });
  } catch (e) {
    await removeAll();
    throw failed(e);
  }
  let url: string;
  try {
    url = (await app.listen()).url;
  } catch (e) {
    await app.close();
    await removeAll();
    throw failed(e);
  }
  const adminToken = (await readFile(app.tokenFile, 'utf8')).trim();
  const workspace = app.workspaceRoots[0] ?? (await realpath(ws.path));
  const http = async <T>(
    method: string,
    path: string,
    body?: unknown,
    token: string | null = adminToken,
  ): Promise<HttpAnswer<T>> => {
    const headers: Record<string, string> = {};
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(url + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON (metrics, docs)
    }
    return { status: res.status, body: parsed as T };
  };
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await app.close().finally(() => log?.close());
    await ws.remove();
    if (!keepHome) await dir.remove();
  };
  return {
    app,
    url,
    home: dir.path,
    workspace,
    adminToken,
    http,
    async token(role, name = `t${++tokenSeq}`) {
      const r = await http<{ token: string }>('POST', '/v1/tokens', { name, role });
      if (r.status !== 201) throw new Error(`token create failed: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.token;
    },
    events: (token = adminToken) => connectEvents(url, token),
    close,
    [Symbol.asyncDispose]: close,
  };
}
