import type { FastifyInstance, FastifyRequest } from 'fastify';

import { FingerError, jsonErrorPosition, jsonLimitError } from '@finger/protocol';

/** Default largest request body (bytes): 4 MiB. */
export const DEFAULT_BODY_LIMIT = 4 * 1024 * 1024;

/**
 * Replaces fastify's JSON body parser with one that says why a body is refused, every refusal
 * an E_INVALID_ARGS naming the problem: empty, not JSON (with the position), nested deeper than
 * MAX_JSON_DEPTH (`details.limit`), or holding a `__proto__` key / a `constructor` key with a
 * `prototype` (`details.key`, `details.path`; refused as fastify's secure-json-parse refuses them,
 * which it reported only as "Body is not valid JSON"). V8's JSON.parse does not recurse, and the
 * check walks with an explicit stack, so no body depth reaches a recursive walk behind it.
 * Applies to every route: this is the one place JSON bodies enter over HTTP.
 */
export function installJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, text, done) => {
    const body = text as string;
    if (body.length === 0) {
      done(new FingerError('E_INVALID_ARGS', 'the body is empty but content-type is application/json'), undefined);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(body);
    } catch (e) {
      const position = jsonErrorPosition(body);
      done(
        new FingerError('E_INVALID_ARGS', `the body is not valid JSON (${(e as Error).message})`, {
          issues: [{ path: 'body', message: `is not valid JSON at position ${position}` }],
          position,
        }),
        undefined,
      );
      return;
    }
    done(jsonLimitError(value, 'body', { protoKeys: true }) ?? null, value);
  });
}

/**
 * The E_PAYLOAD_TOO_LARGE error for fastify's FST_ERR_CTP_BODY_TOO_LARGE (the body passed the
 * route's limit), naming the limit; undefined for any other error.
 */
export function bodyTooLarge(err: unknown, request: FastifyRequest): FingerError | undefined {
  if ((err as { code?: unknown } | null)?.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') return undefined;
  const limit = request.routeOptions.bodyLimit ?? DEFAULT_BODY_LIMIT;
  return new FingerError(
    'E_PAYLOAD_TOO_LARGE',
    `the request body is larger than the limit of ${limit} bytes (${(limit / 1048576).toFixed(1)} MiB)`,
    { limit_bytes: limit },
  );
}
