// `/mcp`: the MCP gateway over streamable HTTP, both protocol eras (2026-07-28 per-request
// envelopes; 2025-era traffic through the SDK's stateless fallback). finger checks first, as for
// every route: the Host (DNS rebinding, host-check.ts), then the bearer token (401 with a
// `WWW-Authenticate: Bearer` challenge), then here the Origin of a browser-sent request. The
// tasks extension's tasks/get and tasks/cancel are served by hand (the SDK has no tasks runtime).
// 2026-era `subscriptions/listen` streams hear `notifications/tools/list_changed` (watchToolList).

import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';

import { createMcpHandler } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import { FingerError, type Principal } from '@finger/protocol';

import { ACCESS } from '../auth/auth-hook.js';
import { hostAllowed, hostnameOf, hostPolicy } from '../http/host-check.js';
import type { RouteDeps } from '../http/route-deps.js';
import { McpGateway } from './mcp-gateway.js';
import { authInfoOf, mcpServerFactory } from './mcp-server.js';

/** At most this many 2026-era `subscriptions/listen` streams are open at once (more: JSON-RPC -32603). */
export const MAX_LISTENERS = 256;

/**
 * Tells the 2026-era listeners (`subscriptions/listen`) that the tool list may have changed: a
 * module registered or unregistered, an MCP tool quarantined or trusted again (FIREWALL_VERDICT
 * of layer `mcp_pin`), a role's grants changed (`/v1/grants` answered 2xx to a change). Changes in
 * one turn of the event loop make one notification; it carries nothing but "list again", so every
 * listener gets it and re-lists as itself. Returns the unsubscribe.
 */
function watchToolList(app: FastifyInstance, deps: RouteDeps, notify: () => void): () => void {
  let queued = false;
  const changed = (): void => {
    if (queued) return;
    queued = true;
    setImmediate(() => {
      queued = false;
      notify();
    });
  };
  const unsubscribe = deps.hub.events.subscribe(
    { types: ['MODULE_REGISTERED', 'MODULE_UNREGISTERED', 'FIREWALL_VERDICT'] },
    (e) => {
      if (e.type === 'FIREWALL_VERDICT' && (e.data as { layer?: unknown } | undefined)?.layer !== 'mcp_pin') return;
      changed();
    },
  );
  // runs for every request: a callback-style hook, no promise per request
  app.addHook('onResponse', (request, reply, done) => {
    if (
      request.method !== 'GET' &&
      reply.statusCode < 300 &&
      request.routeOptions.url?.startsWith('/v1/grants') === true
    )
      changed();
    done();
  });
  return unsubscribe;
}

/** The gateway's path. */
export const MCP_PATH = '/mcp';
/** The challenge of a 401 on `/mcp` (RFC 6750). */
export const MCP_CHALLENGE = 'Bearer realm="finger", scope="mcp"';

interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: string | number;
  method: string;
  params?: Record<string, unknown>;
}

function isTaskRequest(body: unknown): body is JsonRpcRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const b = body as Partial<JsonRpcRequest>;
  return (
    (b.method === 'tasks/get' || b.method === 'tasks/cancel') && (typeof b.id === 'string' || typeof b.id === 'number')
  );
}

/** tasks/get and tasks/cancel of the tasks extension, answered from the gateway's held calls. */
async function answerTask(
  gateway: McpGateway,
  principal: Principal,
  req: JsonRpcRequest,
): Promise<Record<string, unknown>> {
  const taskId = req.params?.taskId;
  const unknown = {
    jsonrpc: '2.0',
    id: req.id,
    error: { code: -32602, message: `unknown task ${JSON.stringify(taskId ?? null)}` },
  };
  if (typeof taskId !== 'string') return unknown;
  if (req.method === 'tasks/get') {
    const task = gateway.getTask(principal, taskId);
    return task === undefined ? unknown : { jsonrpc: '2.0', id: req.id, result: task };
  }
  return (await gateway.cancelTask(principal, taskId))
    ? { jsonrpc: '2.0', id: req.id, result: { resultType: 'complete' } }
    : unknown;
}

/**
 * Refuses (403 E_FORBIDDEN, `origin_not_allowed`) a request whose `Origin` is not one of the
 * daemon's names (a page on another site driving a local MCP endpoint); none (a non-browser
 * client) passes.
 */
function checkOrigin(request: FastifyRequest, policy: ReturnType<typeof hostPolicy>): void {
  const origin = request.headers.origin;
  if (origin === undefined) return;
  let host: string | undefined;
  try {
    const u = new URL(origin);
    if (u.protocol === 'http:' || u.protocol === 'https:') host = u.hostname;
  } catch {
    host = undefined;
  }
  const own = request.headers.host === undefined ? undefined : hostnameOf(request.headers.host);
  if (host === undefined || !(host === own || hostAllowed(policy, host)))
    throw new FingerError('E_FORBIDDEN', `MCP request from origin ${JSON.stringify(origin)} refused`, {
      reason: 'origin_not_allowed',
      origin,
    });
}

/** The web Request the SDK handler serves (the body is passed parsed). */
function webRequestOf(request: FastifyRequest, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [k, v] of Object.entries(request.headers)) {
    if (v === undefined || k === 'content-length' || k === 'transfer-encoding') continue;
    headers.set(k, Array.isArray(v) ? v.join(', ') : v);
  }
  return new Request(`${request.protocol}://${request.host}${request.url}`, {
    method: request.method,
    headers,
    signal,
  });
}

/**
 * Hands the SDK's web Response to fastify. A JSON answer (every tools/call that sent nothing
 * before its result) is read whole and sent with its length in one write; piping it through a
 * Node stream made a chunked reply whose end reached the client a few loop turns later. Only an
 * event stream (progress before the result, `subscriptions/listen`) is streamed.
 */
async function send(reply: FastifyReply, res: Response): Promise<FastifyReply> {
  reply.code(res.status);
  res.headers.forEach((v, k) => {
    if (k !== 'content-length') reply.header(k, v);
  });
  if (res.body === null) return reply.send();
  if (!isEventStream(res.headers.get('content-type'))) return reply.send(Buffer.from(await res.arrayBuffer()));
  return reply.send(Readable.fromWeb(res.body as unknown as NodeReadableStream));
}

function isEventStream(contentType: string | null): boolean {
  return contentType !== null && contentType.toLowerCase().startsWith('text/event-stream');
}

/**
 * Registers `POST|GET|DELETE /mcp` for the dispatching roles (admin, operator, agent:*): each
 * request is served by a fresh MCP server instance as the token's principal. Returns the gateway
 * (closed with the app).
 */
export function mcpRoutes(app: FastifyInstance, deps: RouteDeps): McpGateway {
  const holdMs = deps.config.mcp.hold_ms;
  const gateway = new McpGateway({
    hub: deps.hub,
    grants: deps.grants,
    ...(deps.gate !== undefined ? { approvals: deps.gate } : {}),
    ...(holdMs !== undefined ? { hold_ms: holdMs } : {}),
  });
  const handler = createMcpHandler(mcpServerFactory(gateway, deps.version), {
    onerror: (e) => app.log.debug({ err: e.message }, 'mcp'),
    maxSubscriptions: MAX_LISTENERS,
  });
  const policy = hostPolicy(deps.config.server);
  const unwatch = watchToolList(app, deps, () => handler.notify.toolsChanged());
  app.addHook('onClose', async () => {
    unwatch();
    gateway.close();
    await handler.close();
  });

  const options = {
    config: { roles: [...ACCESS.dispatch] },
    schema: { tags: ['mcp'], summary: 'MCP gateway (streamable HTTP, 2025-11-25 and 2026-07-28)', hide: true },
    // a client without a (valid) token is told how to authenticate
    onSend: async (_request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      if (reply.statusCode === 401) reply.header('www-authenticate', MCP_CHALLENGE);
      return payload;
    },
  };
  const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    checkOrigin(request, policy);
    const principal = request.principal!;
    if (request.method === 'POST' && isTaskRequest(request.body))
      return reply.send(await answerTask(gateway, principal, request.body));
    const abort = new AbortController();
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    const res = await handler.fetch(webRequestOf(request, abort.signal), {
      authInfo: authInfoOf(principal, `${request.protocol}://${request.host}`),
      ...(request.method === 'POST' ? { parsedBody: request.body } : {}),
    });
    return send(reply, res);
  };
  app.post(MCP_PATH, options, serve);
  app.get(MCP_PATH, options, serve);
  app.delete(MCP_PATH, options, serve);
  return gateway;
}
