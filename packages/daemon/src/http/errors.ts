import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

import {
  type ErrorInfo,
  FingerError,
  formatAjvErrors,
  httpStatusFor,
  isErrorCode,
  isFingerError,
  type ValidationIssue,
} from '@finger/protocol';

import { bodyTooLarge } from './json-body.js';

/** JSON Schema of every error body: `{error: {code, message, details?}}`. */
export const errorBodySchema = {
  $id: 'ErrorBody',
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
    },
  },
} as const;

/** Response schemas of the error statuses a route may answer with (for OpenAPI). */
export function errorResponses(...statuses: number[]): Record<number, { $ref: string }> {
  const out: Record<number, { $ref: string }> = {};
  for (const s of [401, 403, ...statuses]) out[s] = { $ref: 'ErrorBody#' };
  return out;
}

/** Renders an error as the wire body and status. Never includes a stack. */
export function errorReply(info: ErrorInfo): { status: number; body: { error: ErrorInfo } } {
  const error: ErrorInfo = { code: info.code, message: info.message };
  if (info.details !== undefined) error.details = info.details;
  return { status: httpStatusFor(info.code), body: { error } };
}

function validationIssues(err: FastifyError): ValidationIssue[] {
  const where = err.validationContext ?? 'body';
  return formatAjvErrors(err.validation as Parameters<typeof formatAjvErrors>[0]).map((i) => ({
    path: `${where}${i.path.slice(1)}`,
    message: i.message,
  }));
}

/** Maps anything thrown by a route or hook to `{code, message, details}`; unknown errors are E_INTERNAL. */
export function toWireError(err: unknown): { info: ErrorInfo; internal: boolean } {
  if (isFingerError(err)) return { info: err.toJSON(), internal: false };
  const fe = err as FastifyError & { details?: unknown };
  if (fe && Array.isArray(fe.validation)) {
    const issues = validationIssues(fe);
    const summary = issues.map((i) => `${i.path} ${i.message}`).join('; ');
    return {
      info: { code: 'E_INVALID_ARGS', message: `invalid request: ${summary}`, details: { issues } },
      internal: false,
    };
  }
  if (fe && isErrorCode(fe.code)) {
    const info: ErrorInfo = { code: fe.code, message: String(fe.message) };
    if (fe.details !== undefined) info.details = fe.details;
    return { info, internal: false };
  }
  const status = typeof fe?.statusCode === 'number' ? fe.statusCode : 500;
  if (status >= 400 && status < 500) {
    const code =
      status === 401
        ? 'E_UNAUTHENTICATED'
        : status === 403
          ? 'E_FORBIDDEN'
          : status === 404
            ? 'E_NOT_FOUND'
            : 'E_INVALID_ARGS';
    return {
      info: { code, message: String(fe.message), details: fe.code ? { reason: fe.code } : undefined },
      internal: false,
    };
  }
  return { info: { code: 'E_INTERNAL', message: 'internal error (see the daemon log)' }, internal: true };
}

/**
 * Installs the one error handler (FingerError → status of its code; a body past the limit → 413
 * E_PAYLOAD_TOO_LARGE; fastify validation → 400
 * E_INVALID_ARGS listing every issue `{path, message}`; anything else → 500 E_INTERNAL, logged,
 * no stack in the body) and the 404 handler (E_NOT_FOUND).
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.addSchema(errorBodySchema);
  app.setErrorHandler((err: unknown, request: FastifyRequest, reply: FastifyReply) => {
    const { info, internal } = toWireError(bodyTooLarge(err, request) ?? err);
    if (internal) request.log.error({ err, url: request.url, method: request.method }, 'unhandled error');
    else request.log.debug({ code: info.code, url: request.url }, info.message);
    const { status, body } = errorReply(info);
    if (body.error.details === undefined) delete body.error.details;
    return reply.code(status).type('application/json').send(body);
  });
  app.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const err = new FingerError('E_NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`);
    const { status, body } = errorReply(err.toJSON());
    return reply.code(status).send(body);
  });
}
