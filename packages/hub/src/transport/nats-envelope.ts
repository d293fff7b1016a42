import type { Envelope, ErrorInfo, LeaseInfo, Principal } from '@finger/protocol';

import { decodeJson } from './nats-wire.js';

/**
 * The compact wire form of envelopes over NATS. Bytes on the socket cost CPU in both processes
 * and in the NATS server (a 600-byte message costs a raw nats.js caller half again its CPU), and
 * the JSON keys of an envelope are a third of its size, so the envelope travels as a JSON array
 * of its fields in a fixed order, led by a format version:
 *
 * - request: `[1, id, request_id, correlation_id, session_id, workflow_id, source, target,
 *   blocking, timestamp, deadline, execution_chain, nesting_depth, lease, payload]`, `lease`
 *   being `[id, ttl_ms, expires_at]` or 0;
 * - reply: `[1, id, source, timestamp, payload, error]` (`error` 0 when there is none). Every
 *   other field of a reply is the request's (request and correlation ids, session, workflow,
 *   target, deadline, chain): the caller fills them in from the request it sent, so a replier
 *   cannot answer for another call's ids.
 *
 * Decoders return the envelope object or undefined for a malformed array; the caller still
 * validates the result with `envelopeIssues` (what enters from the wire is always checked).
 */
const VERSION = 1;

/** Wire JSON of a request envelope. */
export function encodeRequest(e: Envelope): string {
  const lease = e.lease === undefined ? 0 : [e.lease.id, e.lease.ttl_ms, e.lease.expires_at];
  return JSON.stringify([
    VERSION,
    e.id,
    e.request_id,
    e.correlation_id,
    e.session_id,
    e.workflow_id,
    e.source,
    e.target,
    e.blocking,
    e.timestamp,
    e.deadline,
    e.execution_chain,
    e.nesting_depth,
    lease,
    e.payload === undefined ? null : e.payload,
  ]);
}

/** The request envelope of wire bytes, or undefined when they are not a version-1 request. */
export function decodeRequest(body: Uint8Array): Envelope | undefined {
  const a = decodeJson(body);
  if (!Array.isArray(a) || a.length !== 15 || a[0] !== VERSION) return undefined;
  const env: Envelope = {
    id: a[1] as string,
    kind: 'request',
    request_id: a[2] as string,
    correlation_id: a[3] as string,
    session_id: a[4] as string,
    workflow_id: a[5] as string,
    source: a[6] as Principal,
    target: a[7] as string,
    blocking: a[8] as boolean,
    timestamp: a[9] as string,
    deadline: a[10] as number,
    execution_chain: a[11] as string[],
    nesting_depth: a[12] as number,
    payload: a[14],
  };
  const lease = a[13] as unknown;
  if (Array.isArray(lease)) {
    if (lease.length !== 3) return undefined;
    env.lease = { id: lease[0], ttl_ms: lease[1], expires_at: lease[2] } as LeaseInfo;
  } else if (lease !== 0) return undefined;
  return env;
}

/** Wire JSON of a reply envelope (only what the caller does not know already). */
export function encodeReply(e: Envelope): string {
  return JSON.stringify([
    VERSION,
    e.id,
    e.source,
    e.timestamp,
    e.payload === undefined ? null : e.payload,
    e.error ?? 0,
  ]);
}

/**
 * The reply envelope of wire bytes answering `request`, or undefined when they are not a
 * version-1 reply.
 */
export function decodeReply(body: Uint8Array, request: Envelope): Envelope | undefined {
  const a = decodeJson(body);
  if (!Array.isArray(a) || a.length !== 6 || a[0] !== VERSION) return undefined;
  const env: Envelope = {
    id: a[1] as string,
    kind: 'reply',
    request_id: request.request_id,
    correlation_id: request.correlation_id,
    session_id: request.session_id,
    workflow_id: request.workflow_id,
    source: a[2] as Principal,
    target: request.target,
    blocking: request.blocking,
    timestamp: a[3] as string,
    deadline: request.deadline,
    execution_chain: request.execution_chain,
    nesting_depth: request.nesting_depth,
    payload: a[4],
  };
  if (a[5] !== 0) env.error = a[5] as ErrorInfo;
  return env;
}
