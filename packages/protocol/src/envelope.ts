import type { ErrorInfo } from './finger-error.js';

/** Who sent a message. Set by the hub from authentication, never trusted from input. */
export interface Principal {
  kind: 'human' | 'agent' | 'module' | 'system';
  id: string;
  roles: string[];
}

/** A lease granted by the hub for one call. */
export interface LeaseInfo {
  id: string;
  ttl_ms: number;
  expires_at: number;
}

export type EnvelopeKind = 'request' | 'reply' | 'event' | 'cancel';

/** Every message on the hub (§3.1). */
export interface Envelope<P = unknown> {
  id: string;
  kind: EnvelopeKind;
  request_id: string;
  correlation_id: string;
  session_id: string;
  workflow_id: string;
  source: Principal;
  target: string;
  blocking: boolean;
  timestamp: string;
  deadline: number;
  execution_chain: string[];
  nesting_depth: number;
  lease?: LeaseInfo;
  payload: P;
  error?: ErrorInfo;
}

const ID = { type: 'string', minLength: 1, maxLength: 128 } as const;

/** JSON Schema of the envelope, checked wherever an envelope enters from outside the process. */
export const envelopeSchema = {
  $id: 'https://finger.dev/schemas/envelope.json',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'kind',
    'request_id',
    'correlation_id',
    'session_id',
    'workflow_id',
    'source',
    'target',
    'blocking',
    'timestamp',
    'deadline',
    'execution_chain',
    'nesting_depth',
    'payload',
  ],
  properties: {
    id: ID,
    kind: { enum: ['request', 'reply', 'event', 'cancel'] },
    request_id: ID,
    correlation_id: ID,
    session_id: { type: 'string', maxLength: 128 },
    workflow_id: { type: 'string', maxLength: 128 },
    source: {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'id', 'roles'],
      properties: {
        kind: { enum: ['human', 'agent', 'module', 'system'] },
        id: ID,
        roles: { type: 'array', maxItems: 32, items: { type: 'string', maxLength: 64 } },
      },
    },
    target: { type: 'string', minLength: 1, maxLength: 256 },
    blocking: { type: 'boolean' },
    timestamp: { type: 'string', format: 'date-time' },
    deadline: { type: 'integer', minimum: 0 },
    execution_chain: { type: 'array', maxItems: 64, items: { type: 'string', maxLength: 256 } },
    nesting_depth: { type: 'integer', minimum: 0, maximum: 64 },
    lease: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'ttl_ms', 'expires_at'],
      properties: { id: ID, ttl_ms: { type: 'integer', minimum: 1 }, expires_at: { type: 'integer', minimum: 0 } },
    },
    payload: {},
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} },
    },
  },
} as const;
