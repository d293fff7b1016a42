import path from 'node:path';
import type { Stream } from 'node:stream';

import type { Client } from '@modelcontextprotocol/client';

import type { RuntimeSpec } from '@finger/protocol';
import { FingerError, toErrorInfo } from '@finger/protocol';

import type { Logger } from '../logger.js';
import { childEnv } from './process-tree.js';
import type { RuntimeOptions } from './runtime.js';
import { sandboxCommand } from './sandbox-spawn.js';

/** The `runtime` of an MCP module manifest. */
export type McpSpec = Extract<RuntimeSpec, { type: 'mcp' }>;

/** One connection to an MCP server (a new one after each restart). */
export interface McpConnection {
  client: Client;
  /** Pid of the stdio server; null over HTTP. */
  pid: number | null;
  /** close() or an abandoned start: its errors are not crashes. */
  closedByUs: boolean;
  /** The transport closed without us asking: the server died. */
  dead: boolean;
  /** The stdio server runs in the daemon's sandbox (`pid` is bubblewrap's; kill through its PID namespace). */
  sandboxed: boolean;
}

/** What {@link connectMcp} needs. */
export interface McpConnectOptions {
  module_id: string;
  spec: McpSpec;
  /** Relative `cwd` resolves against this (the module's folder). */
  baseDir: string;
  /** Environment the minimal child environment is picked from (never passed whole). */
  baseEnv: Record<string, string | undefined>;
  /** Bound of the connect handshake (ms). */
  timeout_ms: number;
  logger: Logger;
  /** Called once when the connection closes (a crash unless `closedByUs`). */
  onClose(conn: McpConnection): void;
  /** Wraps a stdio server in the daemon's sandbox (see sandbox-spawn.ts). */
  sandbox?: Pick<RuntimeOptions, 'sandbox' | 'baseDir' | 'manifest'>;
}

const STDERR_MAX = 16 * 1024;

/**
 * Connects to an MCP server with the official client, imported here lazily: stdio (spawns
 * `command` with the minimal environment plus the manifest's `env`, stderr to the log, the
 * 2025-11-25 handshake) or streamable HTTP (`url`, protocol version negotiated). Rejects
 * E_MODULE_UNHEALTHY when the server cannot be spawned, reached or initialised; a spawned
 * server is stopped again then.
 */
export async function connectMcp(o: McpConnectOptions): Promise<McpConnection> {
  const { spec } = o;
  let transport: { close(): Promise<void>; readonly pid?: number | null } | undefined;
  let sandboxed = false;
  try {
    const sdk = await import('@modelcontextprotocol/client');
    const client = new sdk.Client(
      { name: 'finger', version: '0.1.0' },
      { capabilities: {}, versionNegotiation: { mode: spec.transport === 'http' ? 'auto' : 'legacy' } },
    );
    if (spec.transport === 'http') {
      transport = new sdk.StreamableHTTPClientTransport(new URL(spec.url));
    } else {
      const { StdioClientTransport } = await import('@modelcontextprotocol/client/stdio');
      const cwd = path.resolve(o.baseDir, spec.cwd ?? '.');
      const env = childEnv(o.baseEnv, spec.env);
      const run = o.sandbox
        ? sandboxCommand(o.sandbox, spec.command, cwd, env)
        : { command: spec.command, sandboxed: false };
      sandboxed = run.sandboxed;
      const [command, ...args] = run.command;
      const t = new StdioClientTransport({ command: command as string, args, cwd, env, stderr: 'pipe' });
      pipeStderr(t.stderr, o.logger);
      transport = t;
    }
    const conn: McpConnection = { client, pid: null, closedByUs: false, dead: false, sandboxed };
    client.onclose = () => o.onClose(conn);
    client.onerror = (e) => o.logger.debug({ err: e.message }, 'MCP client error');
    await client.connect(transport as Parameters<Client['connect']>[0], { timeout: o.timeout_ms });
    conn.pid = transport.pid ?? null;
    o.logger.debug({ pid: conn.pid, protocol: client.getNegotiatedProtocolVersion?.() }, 'MCP server connected');
    return conn;
  } catch (e) {
    await transport?.close().catch(() => undefined);
    const where = spec.transport === 'http' ? spec.url : JSON.stringify(spec.command);
    throw new FingerError(
      'E_MODULE_UNHEALTHY',
      `MCP server "${o.module_id}" (${where}) did not connect: ${toErrorInfo(e).message}`,
      { transport: spec.transport },
    );
  }
}

/** Logs a server's stderr line by line (bounded lines). */
function pipeStderr(stream: Stream | null, log: Logger): void {
  if (stream === null) return;
  let buf = '';
  stream.on('data', (chunk: Buffer | string) => {
    buf += String(chunk);
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (line.trim() !== '') log.info({ stream: 'stderr' }, line.slice(0, STDERR_MAX));
    }
    if (buf.length > STDERR_MAX) {
      log.warn({ stream: 'stderr', bytes: buf.length }, 'over-long stderr line dropped');
      buf = '';
    }
  });
}
