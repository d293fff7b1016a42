// One MCP server instance per HTTP request (createMcpHandler's factory): the low-level Server of
// @modelcontextprotocol/server with tools/list and tools/call answered by the McpGateway as the
// request's principal (passed through `authInfo.extra`, set by finger's own bearer-token check).

import {
  type AuthInfo,
  type CallToolResult,
  inputRequired,
  type McpRequestContext,
  PROTOCOL_VERSION_META_KEY,
  Server,
  type Tool,
} from '@modelcontextprotocol/server';

import type { Principal } from '@finger/protocol';

import { CLAIM_TOOL, type McpCallResult, type McpGateway } from './mcp-gateway.js';

/** The tasks extension of the 2026-07-28 revision. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';

/** What finger passes the factory in `authInfo.extra`. */
export interface McpAuthExtra {
  principal: Principal;
  /** The daemon's origin as the client reached it (approval links). */
  origin: string;
}

/** The AuthInfo finger hands the SDK for an authenticated request. */
export function authInfoOf(principal: Principal, origin: string): AuthInfo {
  const extra: McpAuthExtra = { principal, origin };
  return { token: '(finger)', clientId: principal.id, scopes: principal.roles, extra: { ...extra } };
}

/** The client capabilities a 2026-era request's `_meta` envelope declares. */
export function envelopeCapabilities(meta: unknown): Record<string, unknown> | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined;
  const caps = (meta as Record<string, unknown>)[CLIENT_CAPABILITIES];
  return typeof caps === 'object' && caps !== null ? (caps as Record<string, unknown>) : undefined;
}

/** True when a request's envelope declares the tasks extension. */
export function declaresTasks(caps: Record<string, unknown> | undefined): boolean {
  const ext = caps?.extensions;
  return typeof ext === 'object' && ext !== null && TASKS_EXTENSION in ext;
}

function declaresUrlElicitation(caps: Record<string, unknown> | undefined): boolean {
  const e = caps?.elicitation;
  return typeof e === 'object' && e !== null && typeof (e as Record<string, unknown>).url === 'object';
}

/** The factory createMcpHandler calls per request. */
export function mcpServerFactory(gateway: McpGateway, version: string) {
  return (ctx: McpRequestContext): Server => {
    const extra = ctx.authInfo?.extra as McpAuthExtra | undefined;
    const server = new Server(
      { name: 'finger', version },
      {
        // list changes reach 2026-era `subscriptions/listen` streams; the 2025 era is served
        // statelessly here (no session, no stream to carry a notification)
        capabilities: {
          tools: { listChanged: ctx.era === 'modern' },
          extensions: { [TASKS_EXTENSION]: {} },
        },
        instructions:
          'finger governs these tools: each call is judged by its firewall as your token’s principal. A call held for a person returns "held … as <id>"; call finger_claim {"id": "<id>"} later (or retry the same call) to get its result once they answered.',
      },
    );
    server.setRequestHandler('tools/list', async () => ({
      tools: extra === undefined ? [] : (gateway.listTools(extra.principal) as unknown as Tool[]),
    }));
    server.setRequestHandler('tools/call', async (request, c) => {
      if (extra === undefined) return { content: [{ type: 'text', text: 'E_UNAUTHENTICATED' }], isError: true };
      const params = request.params;
      const token = params._meta?.progressToken;
      const envelope = c.mcpReq.envelope as Record<string, unknown> | undefined;
      const caps = envelopeCapabilities(envelope);
      const modern = envelope?.[PROTOCOL_VERSION_META_KEY] !== undefined;
      const out = await gateway.call(extra.principal, params.name, params.arguments ?? {}, {
        origin: extra.origin,
        signal: c.mcpReq.signal,
        tasks: modern && declaresTasks(caps),
        ...(token !== undefined
          ? {
              progress: (message: string, progress: number) =>
                void c.mcpReq
                  .notify({ method: 'notifications/progress', params: { progressToken: token, progress, message } })
                  .catch(() => undefined),
            }
          : {}),
      });
      // (b) still held, and the 2026-era client opens URLs: send the person to the approval page
      // once; its retry (the same call) waits again and then answers "held" (rounds are capped).
      const held = (out as McpCallResult).structuredContent;
      if (
        modern &&
        held?.status === 'held' &&
        params.name !== CLAIM_TOOL &&
        declaresUrlElicitation(caps) &&
        c.mcpReq.inputResponses === undefined
      ) {
        return inputRequired({
          inputRequests: {
            approve: inputRequired.elicitUrl({
              message: `finger held this call for a person (${String(held.approval_id)}): open the page to approve or reject it`,
              url: String(held.approval_url),
            }),
          },
        });
      }
      // a task result passes the SDK's result check (it is a Result); its shape is the extension's
      return out as unknown as CallToolResult;
    });
    return server;
  };
}
