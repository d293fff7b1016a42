import type { FastifyInstance, FastifyReply } from 'fastify';

import { FingerError, type Principal } from '@finger/protocol';

import { ACCESS } from '../../auth/auth-hook.js';
import type { DispatchResult, InputParams } from '../../gateway/input-gateway.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { ref } from '../schemas.js';

/** The principal of an authenticated request (the auth hook guarantees it on non-public routes). */
export function principalOf(request: { principal: Principal | undefined }): Principal {
  if (!request.principal) throw new FingerError('E_UNAUTHENTICATED', 'missing bearer token');
  return request.principal;
}

/**
 * A request-controlled value in a form that is always a valid HTTP header value: printable ASCII
 * (`!`..`~`) as is, every other UTF-8 byte — space, controls, CR/LF, anything beyond ASCII — and
 * `%` itself percent-encoded (`%0D`, `%C3%A9`), so `decodeURIComponent` gives the value back.
 */
export function headerSafe(value: string): string {
  if (/^[\x21-\x24\x26-\x7e]*$/.test(value)) return value;
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    out +=
      byte >= 0x21 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * Puts a request's ids in the response headers (set before the outcome is known, kept on errors),
 * header-safe: a caller's id with CR/LF or non-Latin-1 characters is percent-encoded, never a
 * response that cannot be sent.
 */
export function idHeaders(reply: FastifyReply) {
  return (ids: { request_id: string; correlation_id: string }): void => {
    reply.header('x-finger-request-id', headerSafe(ids.request_id));
    reply.header('x-finger-correlation-id', headerSafe(ids.correlation_id));
  };
}

/**
 * Answers a dispatch when it settles: its status and body, or the error (fastify's error handler
 * writes it). The route handler returns nothing (no async function, no promise of its own per
 * request: fastify waits for this `send`).
 */
export function sendDispatch(reply: FastifyReply, out: Promise<DispatchResult>): void {
  out.then(
    (r) => {
      try {
        reply.code(r.status).send(r.body);
      } catch (e) {
        sendError(reply, e);
      }
    },
    (e: unknown) => sendError(reply, e),
  );
}

/** Hands `e` to fastify's error handling (what a rejected async handler gets): an Error always, never a body. */
function sendError(reply: FastifyReply, e: unknown): void {
  reply.send(e instanceof Error ? e : new Error(String(e)));
}

/** `POST /v1/input`: text from a person or agent; `/hub …` dispatches directly. */
export function inputRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.post(
    '/v1/input',
    {
      config: { roles: ACCESS.dispatch },
      schema: {
        tags: ['dispatch'],
        summary: 'Text input: `/hub target=<id> [blocking=] [timeout=] {json}` dispatches directly',
        body: {
          type: 'object',
          required: ['text'],
          additionalProperties: false,
          properties: {
            text: { type: 'string', minLength: 1, maxLength: 1_000_000 },
            session_id: { type: 'string', minLength: 1, maxLength: 128 },
          },
        },
        response: {
          200: ref('DispatchResponse'),
          202: ref('DispatchResponse'),
          ...errorResponses(400, 404, 409, 429, 500, 502, 503, 504),
        },
      },
    },
    (request, reply) => {
      sendDispatch(reply, deps.gateway.input(principalOf(request), request.body as InputParams, idHeaders(reply)));
    },
  );
}
