import type { Envelope, ErrorInfo, LeaseInfo, Principal } from '@finger/protocol';
import {
  envelopeIssues,
  envelopeSchema,
  type FingerError,
  jsonLimitError,
  MAX_WIRE_JSON_DEPTH,
} from '@finger/protocol';

import { decodeJson } from './nats-wire.js';

/**
 * The compact wire form of envelopes over NATS. Bytes on the socket cost CPU in both processes
 * and in the NATS server (a 600-byte message costs a raw nats.js caller half again its CPU), and
 * the JSON keys of an envelope are a third of its size, so the envelope travels as a JSON array
 * of its fields in a fixed order, led by a format version (2 since wire FW3):
 *
 * - request: `[2, id, request_id, correlation_id, session_id, workflow_id, source, target,
 *   blocking, timestamp, deadline, execution_chain, nesting_depth, lease, payload]`;
 *   `request_id` is 0 when it equals `id` and `correlation_id` 0 when it equals `request_id`
 *   (a top-level hub call has one id for all three); `source` is `[kind, id, roles]`; `lease`
 *   is 0 (none) or `[id, ttl_ms, expires_at]` with `id` 0 when it is the envelope's id and
 *   `expires_at` null when it is the deadline;
 * - reply: `[2, id, source, timestamp, payload, error]` (`source` as above, `error` 0 when there
 *   is none). Every other field of a reply is the request's (request and correlation ids,
 *   session, workflow, target, deadline, chain): the caller fills them in from the request it
 *   sent, so a replier cannot answer for another call's ids.
 *
 * Decoders return the envelope object or undefined for a malformed array; the caller still
 * validates the result ({@link validWireEnvelope}: what enters from the wire is always checked).
 */
const VERSION = 2;

function encodePrincipal(p: Principal): unknown {
  return [p.kind, p.id, p.roles];
}

/** The principal of a wire `[kind, id, roles]`, or undefined (types are left to validation). */
function decodePrincipal(v: unknown): Principal | undefined {
  if (!Array.isArray(v) || v.length !== 3) return undefined;
  return { kind: v[0] as Principal['kind'], id: v[1] as string, roles: v[2] as string[] };
}

/** Wire JSON of a request envelope. */
export function encodeRequest(e: Envelope): string {
  const l = e.lease;
  const lease =
    l === undefined ? 0 : [l.id === e.id ? 0 : l.id, l.ttl_ms, l.expires_at === e.deadline ? null : l.expires_at];
  return JSON.stringify([
    VERSION,
    e.id,
    e.request_id === e.id ? 0 : e.request_id,
    e.correlation_id === e.request_id ? 0 : e.correlation_id,
    e.session_id,
    e.workflow_id,
    encodePrincipal(e.source),
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

/** The request envelope of wire JSON (text or UTF-8 bytes), or undefined when they are not a version-2 request. */
export function decodeRequest(body: string | Uint8Array): Envelope | undefined {
  const a = decodeJson(body);
  if (!Array.isArray(a) || a.length !== 15 || a[0] !== VERSION) return undefined;
  const source = decodePrincipal(a[6]);
  if (source === undefined) return undefined;
  const id = a[1] as string;
  const request_id = a[2] === 0 ? id : (a[2] as string);
  const env: Envelope = {
    id,
    kind: 'request',
    request_id,
    correlation_id: a[3] === 0 ? request_id : (a[3] as string),
    session_id: a[4] as string,
    workflow_id: a[5] as string,
    source,
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
    env.lease = {
      id: lease[0] === 0 ? id : lease[0],
      ttl_ms: lease[1],
      expires_at: lease[2] === null ? env.deadline : lease[2],
    } as LeaseInfo;
  } else if (lease !== 0) return undefined;
  return env;
}

/** Wire JSON of a reply envelope (only what the caller does not know already). */
export function encodeReply(e: Envelope): string {
  return JSON.stringify([
    VERSION,
    e.id,
    encodePrincipal(e.source),
    e.timestamp,
    e.payload === undefined ? null : e.payload,
    e.error ?? 0,
  ]);
}

/**
 * The reply envelope of wire bytes answering `request`, or undefined when they are not a
 * version-2 reply.
 */
export function decodeReply(body: string | Uint8Array, request: Envelope): Envelope | undefined {
  const a = decodeJson(body);
  if (!Array.isArray(a) || a.length !== 6 || a[0] !== VERSION) return undefined;
  const source = decodePrincipal(a[2]);
  if (source === undefined) return undefined;
  const env: Envelope = {
    id: a[1] as string,
    kind: 'reply',
    request_id: request.request_id,
    correlation_id: request.correlation_id,
    session_id: request.session_id,
    workflow_id: request.workflow_id,
    source,
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

/**
 * Whether an envelope decoded from the wire satisfies the envelope schema (`envelopeIssues`
 * empty). A hand-written check of the usual shapes answers first — it accepts only envelopes
 * the schema accepts (a unit test holds it to that); anything it is not sure of (a string
 * whose UTF-16 length passes a limit, a timestamp not in the `2026-11-22T01:00:00.000Z` form,
 * unknown keys, wrong types) gets the schema's own verdict. The generic ajv check costs about
 * a microsecond per envelope, twice per call.
 */
export function validWireEnvelope(env: Envelope): boolean {
  return quickEnvelopeCheck(env) || envelopeIssues(env).length === 0;
}

/**
 * The request envelope of wire JSON, checked: undefined when it is not a version-2 request or the
 * envelope schema refuses it, an E_INVALID_ARGS FingerError (`details.limit`) when its payload
 * nests past the JSON nesting limit (the sender gets that answer). The decoder builds the object, so its keys are right by
 * construction; only the values that came from the wire are checked — the checks of
 * {@link quickEnvelopeCheck} without its walk over the keys (less code on the path of a lone call,
 * which runs cold), the schema deciding anything they are unsure of.
 */
export function readRequest(json: string): Envelope | FingerError | undefined {
  const env = decodeRequest(json);
  if (env === undefined) return undefined;
  const tooDeep = payloadTooDeep(env.payload);
  if (tooDeep) return tooDeep;
  return requestValuesOk(env) || envelopeIssues(env).length === 0 ? env : undefined;
}

/**
 * E_INVALID_ARGS naming the limit when a payload carried in a frame (`[…, payload, …]`, one
 * level down) makes it nest past MAX_WIRE_JSON_DEPTH; an error's details sit one level deeper.
 */
function payloadTooDeep(value: unknown, base = 2): FingerError | undefined {
  return jsonLimitError(value, 'payload', { maxDepth: MAX_WIRE_JSON_DEPTH, base });
}

/**
 * The reply envelope of wire JSON answering `request`, checked like {@link readRequest}. Only
 * the id, source, timestamp, payload and error come from the wire; every other field is the
 * request's, which this process made. A reply whose payload or error details nest past the JSON
 * nesting limit is kept as an E_MODULE_ERROR reply (`details: {reason: "json_depth", limit,
 * path}`) without its payload, so the call is answered.
 */
export function readReply(json: string, request: Envelope): Envelope | undefined {
  const env = decodeReply(json, request);
  if (env === undefined) return undefined;
  const tooDeep =
    payloadTooDeep(env.payload) ??
    (env.error !== null && typeof env.error === 'object' ? payloadTooDeep(env.error.details, 3) : undefined);
  if (tooDeep) {
    // the call is answered (its caller is waiting) with a module error naming the limit
    const { limit, path } = tooDeep.details as { limit: number; path: string };
    env.payload = null;
    env.error = {
      code: 'E_MODULE_ERROR',
      message: `the reply nests deeper than the JSON nesting limit of ${limit} levels`,
      details: { reason: 'json_depth', limit, path },
    };
  }
  return replyValuesOk(env) || envelopeIssues(env).length === 0 ? env : undefined;
}

function requestValuesOk(e: Envelope): boolean {
  if (!str(e.id, 1, 128) || !str(e.request_id, 1, 128) || !str(e.correlation_id, 1, 128)) return false;
  if (!str(e.session_id, 0, 128) || !str(e.workflow_id, 0, 128) || !str(e.target, 1, 256)) return false;
  if (typeof e.blocking !== 'boolean' || !canonicalTimestamp(e.timestamp)) return false;
  if (!int(e.deadline, 0) || !int(e.nesting_depth, 0, 64) || !stringArray(e.execution_chain, 64, 256)) return false;
  if (!principalOk(e.source)) return false;
  const l = e.lease;
  return l === undefined || (str(l.id, 1, 128) && int(l.ttl_ms, 1) && int(l.expires_at, 0));
}

function replyValuesOk(e: Envelope): boolean {
  if (!str(e.id, 1, 128) || !canonicalTimestamp(e.timestamp) || !principalOk(e.source)) return false;
  const err = e.error as unknown;
  return err === undefined || (plainObject(err) && typeof err.code === 'string' && typeof err.message === 'string');
}

/** A principal as {@link decodePrincipal} builds it (three keys by construction). */
function principalOk(s: Principal): boolean {
  return PRINCIPAL_KINDS.has(s.kind) && str(s.id, 1, 128) && stringArray(s.roles, 32, 64);
}

const PRINCIPAL_KINDS = new Set(['human', 'agent', 'module', 'system']);
const ENVELOPE_KINDS = new Set(['request', 'reply', 'event', 'cancel']);
/** Keys an envelope may have (the schema's additionalProperties: false): its own property list. */
const ENVELOPE_KEYS: ReadonlySet<string> = new Set(Object.keys(envelopeSchema.properties));
const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** A string of at most `max` UTF-16 units (so at most `max` code points), at least `min`. */
function str(v: unknown, min: number, max: number): boolean {
  return typeof v === 'string' && v.length >= min && v.length <= max;
}

function plainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function stringArray(v: unknown, maxItems: number, maxLength: number): boolean {
  if (!Array.isArray(v) || v.length > maxItems) return false;
  for (let i = 0; i < v.length; i++) if (!str(v[i], 0, maxLength)) return false;
  return true;
}

function digits(s: string, from: number, n: number): number {
  let out = 0;
  for (let i = from; i < from + n; i++) {
    const c = s.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    out = out * 10 + c;
  }
  return out;
}

/** `YYYY-MM-DDTHH:MM:SS.sssZ` naming a real day and time (what `rfc3339()` writes). */
function canonicalTimestamp(v: unknown): boolean {
  if (typeof v !== 'string' || v.length !== 24) return false;
  if (v[4] !== '-' || v[7] !== '-' || v[10] !== 'T' || v[13] !== ':' || v[16] !== ':' || v[19] !== '.' || v[23] !== 'Z')
    return false;
  const year = digits(v, 0, 4);
  const month = digits(v, 5, 2);
  const day = digits(v, 8, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || digits(v, 20, 3) < 0) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  if (day > (month === 2 && leap ? 29 : DAYS[month]!)) return false;
  const hr = digits(v, 11, 2);
  const min = digits(v, 14, 2);
  const sec = digits(v, 17, 2);
  return hr >= 0 && hr <= 23 && min >= 0 && min <= 59 && sec >= 0 && sec <= 59;
}

function int(v: unknown, min: number, max = Infinity): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

/** True only for envelopes the schema accepts; false means "ask the schema". */
export function quickEnvelopeCheck(env: Envelope): boolean {
  const e = env as unknown as Record<string, unknown>;
  let keys = 0;
  for (const k in e) {
    if (!ENVELOPE_KEYS.has(k) || !Object.prototype.hasOwnProperty.call(e, k)) return false;
    keys++;
  }
  if (keys !== 14 + (e.lease !== undefined ? 1 : 0) + (e.error !== undefined ? 1 : 0)) return false;
  if (!str(e.id, 1, 128) || !str(e.request_id, 1, 128) || !str(e.correlation_id, 1, 128)) return false;
  if (!ENVELOPE_KINDS.has(e.kind as string)) return false;
  if (!str(e.session_id, 0, 128) || !str(e.workflow_id, 0, 128) || !str(e.target, 1, 256)) return false;
  if (typeof e.blocking !== 'boolean' || !canonicalTimestamp(e.timestamp)) return false;
  if (!int(e.deadline, 0) || !int(e.nesting_depth, 0, 64) || !stringArray(e.execution_chain, 64, 256)) return false;
  const s = e.source;
  if (!plainObject(s) || !PRINCIPAL_KINDS.has(s.kind as string) || !str(s.id, 1, 128)) return false;
  if (!stringArray(s.roles, 32, 64) || Object.keys(s).length !== 3) return false;
  if (!('payload' in e) || e.payload === undefined) return false;
  const l = e.lease;
  if (l !== undefined) {
    if (!plainObject(l) || Object.keys(l).length !== 3 || !str(l.id, 1, 128)) return false;
    if (!int(l.ttl_ms, 1) || !int(l.expires_at, 0)) return false;
  }
  const err = e.error;
  if (err !== undefined && (!plainObject(err) || typeof err.code !== 'string' || typeof err.message !== 'string'))
    return false;
  return true;
}
