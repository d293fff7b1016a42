// `myfinger mcp`: a stdio MCP server for clients that only spawn stdio servers. It relays each
// newline-delimited JSON-RPC message from stdin to the daemon's `/mcp` gateway (streamable HTTP,
// stateless: every message is one POST) and writes every message of the answer — a JSON body, or
// each event of an SSE stream (progress first, then the result) — to stdout, one per line. The
// gateway judges each call; the relay holds no state and trusts nothing it reads.

import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

/** The reserved `_meta` key naming a 2026-era request's protocol revision. */
const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
/** Largest stdin line accepted (bounded, like the gateway's body limit). */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;
/** Messages relayed at once (a client pipelining more waits). */
const MAX_IN_FLIGHT = 16;

/** Options of {@link relayStdio}. */
export interface RelayOptions {
  /** The gateway, `<daemon>/mcp`. */
  url: string;
  token: string | undefined;
  stdin: Readable;
  stdout: Writable;
  /** Where the relay reports its own troubles (never stdout: that is the protocol). */
  log: (line: string) => void;
  signal?: AbortSignal;
}

interface Message {
  jsonrpc?: unknown;
  id?: unknown;
  method?: unknown;
  params?: Record<string, unknown>;
}

/** The headers a 2026-era message needs on HTTP (the SDK checks they agree with its body). */
export function headersOf(msg: Message, token: string | undefined): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  if (token !== undefined) h.authorization = `Bearer ${token}`;
  const meta = msg.params?._meta as Record<string, unknown> | undefined;
  const version = meta?.[PROTOCOL_VERSION_KEY];
  if (typeof version === 'string') {
    h['mcp-protocol-version'] = version;
    if (typeof msg.method === 'string') h['mcp-method'] = msg.method;
    const p = msg.params ?? {};
    const name = p.name ?? p.uri ?? p.taskId;
    if (typeof name === 'string') h['mcp-name'] = name;
  }
  return h;
}

function errorLine(id: unknown, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id: id ?? null, error: { code: -32603, message } });
}

/** Writes each JSON-RPC message of an SSE body as it arrives. */
async function relaySse(body: ReadableStream<Uint8Array>, write: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buf = '';
  let data: string[] = [];
  const reader = body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    if (buf.length > MAX_LINE_BYTES) throw new Error('SSE event too large');
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '');
      buf = buf.slice(nl + 1);
      if (line === '') {
        if (data.length > 0) write(data.join('\n'));
        data = [];
      } else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
  }
  if (data.length > 0) write(data.join('\n'));
}

/** Relays one message; answers a JSON-RPC error for a request the daemon could not answer. */
async function relayOne(raw: string, o: RelayOptions, write: (line: string) => void): Promise<void> {
  let msg: Message;
  try {
    msg = JSON.parse(raw) as Message;
  } catch {
    write(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } }));
    return;
  }
  const isRequest = typeof msg === 'object' && msg !== null && msg.id !== undefined && msg.method !== undefined;
  try {
    const res = await fetch(o.url, {
      method: 'POST',
      headers: headersOf(msg, o.token),
      body: raw,
      ...(o.signal ? { signal: o.signal } : {}),
    });
    const type = res.headers.get('content-type') ?? '';
    if (res.body !== null && type.startsWith('text/event-stream')) return await relaySse(res.body, write);
    const text = await res.text();
    if (text.trim() === '') return; // 202: a notification
    if (type.startsWith('application/json')) {
      const parsed = JSON.parse(text) as Record<string, unknown>;
      // finger's own refusals (401, 403 …) are `{error: {code: "E_…"}}`, not JSON-RPC
      if (parsed.jsonrpc === undefined && typeof parsed.error === 'object' && parsed.error !== null) {
        const e = parsed.error as { code?: unknown; message?: unknown };
        if (isRequest) write(errorLine(msg.id, `${String(e.code)}: ${String(e.message)}`));
        o.log(`myfinger mcp: the daemon refused (${res.status} ${String(e.code)}): ${String(e.message)}`);
        return;
      }
      write(JSON.stringify(parsed));
      return;
    }
    if (isRequest) write(errorLine(msg.id, `the daemon answered ${res.status}`));
  } catch (e) {
    o.log(`myfinger mcp: ${(e as Error).message}`);
    if (isRequest) write(errorLine(msg.id, `E_DAEMON_NOT_RUNNING: ${(e as Error).message}`));
  }
}

/** Runs the relay until stdin ends (or `signal` aborts); resolves once every answer was written. */
export async function relayStdio(o: RelayOptions): Promise<void> {
  const write = (line: string): void => void o.stdout.write(`${line}\n`);
  const rl = createInterface({ input: o.stdin, crlfDelay: Infinity });
  const inFlight = new Set<Promise<void>>();
  for await (const line of rl) {
    if (o.signal?.aborted === true) break;
    if (line.trim() === '') continue;
    if (Buffer.byteLength(line) > MAX_LINE_BYTES) {
      write(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'message too large' } }));
      continue;
    }
    while (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
    const p: Promise<void> = relayOne(line, o, write).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
}
