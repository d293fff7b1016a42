import { describe, expect, it } from 'vitest';

import type { Envelope } from '@finger/protocol';
import { envelopeIssues } from '@finger/protocol';

import {
  decodeReply,
  decodeRequest,
  encodeReply,
  encodeRequest,
  quickEnvelopeCheck,
  readReply,
  readRequest,
  validWireEnvelope,
} from '../../src/transport/nats-envelope.js';

const request: Envelope = {
  id: '01JD0000000000000000000001',
  kind: 'request',
  request_id: '01JD0000000000000000000002',
  correlation_id: '01JD0000000000000000000003',
  session_id: 's1',
  workflow_id: 'w1',
  source: { kind: 'agent', id: 'executor', roles: ['executor'] },
  target: 'echo.echo',
  blocking: true,
  timestamp: '2026-11-22T01:00:00.000Z',
  deadline: 1795309700000,
  execution_chain: ['supervisor'],
  nesting_depth: 1,
  lease: { id: 'l1', ttl_ms: 5000, expires_at: 1795309700000 },
  payload: { text: 'hi', n: [1, 2] },
};

describe('compact envelope wire form', () => {
  it('round-trips a request, with and without a lease, and is smaller than its JSON', () => {
    const bytes = Buffer.from(encodeRequest(request));
    expect(decodeRequest(bytes)).toEqual(request);
    expect(bytes.length).toBeLessThan(JSON.stringify(request).length * 0.75);
    const { lease: _lease, ...noLease } = request;
    expect(decodeRequest(Buffer.from(encodeRequest(noLease)))).toEqual(noLease);
    expect(envelopeIssues(decodeRequest(bytes))).toEqual([]);
  });

  it('writes ids equal to the id, and an expiry equal to the deadline, as placeholders', () => {
    const top: Envelope = {
      ...request,
      request_id: request.id,
      correlation_id: request.id,
      lease: { id: request.id, ttl_ms: 5000, expires_at: request.deadline },
    };
    const a = JSON.parse(encodeRequest(top)) as unknown[];
    expect([a[2], a[3], a[6], a[13]]).toEqual([0, 0, ['agent', 'executor', ['executor']], [0, 5000, null]]);
    expect(decodeRequest(Buffer.from(JSON.stringify(a)))).toEqual(top);
    // correlation equal to the request id (not the id) is a placeholder too
    const nested = { ...top, request_id: 'r1', correlation_id: 'r1' };
    const b = JSON.parse(encodeRequest(nested)) as unknown[];
    expect([b[2], b[3]]).toEqual(['r1', 0]);
    expect(decodeRequest(Buffer.from(JSON.stringify(b)))).toEqual(nested);
    // a malformed principal does not decode
    a[6] = { kind: 'agent', id: 'executor', roles: [] };
    expect(decodeRequest(Buffer.from(JSON.stringify(a)))).toBeUndefined();
  });

  it('sends a reply as id, source, timestamp, payload and error; the rest comes from the request', () => {
    const reply: Envelope = {
      ...request,
      id: '01JD0000000000000000000009',
      kind: 'reply',
      source: { kind: 'module', id: 'echo', roles: [] },
      timestamp: '2026-11-22T01:00:00.100Z',
      payload: { text: 'hi' },
    };
    delete reply.lease;
    const bytes = Buffer.from(encodeReply(reply));
    expect(JSON.parse(bytes.toString())).toEqual([
      2,
      reply.id,
      ['module', 'echo', []],
      reply.timestamp,
      { text: 'hi' },
      0,
    ]);
    expect(decodeReply(bytes, request)).toEqual(reply);
    const failed = { ...reply, payload: null, error: { code: 'E_TIMEOUT', message: 'late' } };
    expect(decodeReply(Buffer.from(encodeReply(failed)), request)).toEqual(failed);
  });

  it('fills a reply from the caller request, whatever ids the replier had in mind', () => {
    const other = { ...request, request_id: 'someone-else', correlation_id: 'x', kind: 'reply' as const };
    const decoded = decodeReply(Buffer.from(encodeReply(other)), request);
    expect(decoded).toMatchObject({ request_id: request.request_id, correlation_id: request.correlation_id });
  });

  it('answers undefined for anything but a version-2 array of the right length', () => {
    const bad = [
      '{"id":"x"}',
      '[2,"a"]',
      '[]',
      JSON.stringify([1, ...JSON.parse(encodeRequest(request)).slice(1)]),
      'not json',
    ];
    for (const b of bad) {
      expect(decodeRequest(Buffer.from(b))).toBeUndefined();
      expect(decodeReply(Buffer.from(b), request)).toBeUndefined();
    }
    const a = JSON.parse(encodeRequest(request)) as unknown[];
    a[13] = ['l1'];
    expect(decodeRequest(Buffer.from(JSON.stringify(a)))).toBeUndefined();
    a[13] = 'lease';
    expect(decodeRequest(Buffer.from(JSON.stringify(a)))).toBeUndefined();
  });

  it('leaves type checks to envelopeIssues: a wrongly typed field decodes and then fails validation', () => {
    const a = JSON.parse(encodeRequest(request)) as unknown[];
    a[10] = 'tomorrow';
    const env = decodeRequest(Buffer.from(JSON.stringify(a)));
    expect(env).toBeDefined();
    expect(envelopeIssues(env).map((i) => i.path)).toContain('$.deadline');
  });
});

describe('wire envelope validation', () => {
  const reply: Envelope = {
    ...request,
    id: '01JD0000000000000000000009',
    kind: 'reply',
    source: { kind: 'module', id: 'echo', roles: [] },
    payload: null,
    error: { code: 'E_TIMEOUT', message: 'late', details: { a: 1 } },
  };
  const long = (n: number) => 'x'.repeat(n);
  const astral = (n: number) => '😀'.repeat(n); // n code points, 2n UTF-16 units
  /** Variants of a valid envelope, valid and not, around every limit of the schema. */
  const variants: [string, unknown][] = [
    ['request', request],
    ['reply with error', reply],
    ['no lease', (({ lease: _l, ...r }) => r)(request)],
    ['id empty', { ...request, id: '' }],
    ['id 128', { ...request, id: long(128) }],
    ['id 129', { ...request, id: long(129) }],
    ['id 100 astral (200 units)', { ...request, id: astral(100) }],
    ['id 129 astral', { ...request, id: astral(129) }],
    ['session 129', { ...request, session_id: long(129) }],
    ['session 128 astral', { ...request, session_id: astral(128) }],
    ['target empty', { ...request, target: '' }],
    ['target 257', { ...request, target: long(257) }],
    ['target 200 astral', { ...request, target: astral(200) }],
    ['kind bad', { ...request, kind: 'other' }],
    ['blocking string', { ...request, blocking: 'yes' }],
    ['deadline float', { ...request, deadline: 1.5 }],
    ['deadline negative', { ...request, deadline: -1 }],
    ['deadline huge', { ...request, deadline: 1e300 }],
    ['deadline NaN', { ...request, deadline: NaN }],
    ['deadline Infinity', { ...request, deadline: Infinity }],
    ['depth 64', { ...request, nesting_depth: 64 }],
    ['depth 65', { ...request, nesting_depth: 65 }],
    ['chain 64', { ...request, execution_chain: Array.from({ length: 64 }, () => 'm') }],
    ['chain 65', { ...request, execution_chain: Array.from({ length: 65 }, () => 'm') }],
    ['chain item number', { ...request, execution_chain: [1] }],
    ['chain item 257', { ...request, execution_chain: [long(257)] }],
    ['chain item 256 astral', { ...request, execution_chain: [astral(256)] }],
    ['source extra key', { ...request, source: { ...request.source, admin: true } }],
    ['source kind bad', { ...request, source: { ...request.source, kind: 'root' } }],
    ['source array', { ...request, source: [] }],
    ['source null', { ...request, source: null }],
    ['source id empty', { ...request, source: { ...request.source, id: '' } }],
    ['roles 33', { ...request, source: { ...request.source, roles: Array.from({ length: 33 }, () => 'r') } }],
    ['role 65', { ...request, source: { ...request.source, roles: [long(65)] } }],
    ['role 64 astral', { ...request, source: { ...request.source, roles: [astral(64)] } }],
    ['lease ttl 0', { ...request, lease: { ...request.lease, ttl_ms: 0 } }],
    ['lease extra key', { ...request, lease: { ...request.lease, x: 1 } }],
    ['lease id empty', { ...request, lease: { ...request.lease, id: '' } }],
    ['lease expires float', { ...request, lease: { ...request.lease, expires_at: 0.5 } }],
    ['error array', { ...reply, error: [] }],
    ['error code number', { ...reply, error: { code: 1, message: 'm' } }],
    ['error no message', { ...reply, error: { code: 'E_X' } }],
    ['error extra key', { ...reply, error: { code: 'E_X', message: 'm', more: 1 } }],
    ['extra key', { ...request, admin: true }],
    ['no payload', (({ payload: _p, ...r }) => r)(request)],
    ['payload undefined', { ...request, payload: undefined }],
    ['lease undefined', { ...request, lease: undefined }],
    ['timestamp offset', { ...request, timestamp: '2026-11-22T02:00:00+01:00' }],
    ['timestamp no fraction', { ...request, timestamp: '2026-11-22T01:00:00Z' }],
    ['timestamp lower t', { ...request, timestamp: '2026-11-22t01:00:00.000z' }],
    ['timestamp Feb 29 2028', { ...request, timestamp: '2028-02-29T01:00:00.000Z' }],
    ['timestamp Feb 29 2100', { ...request, timestamp: '2100-02-29T01:00:00.000Z' }],
    ['timestamp Feb 29 2000', { ...request, timestamp: '2000-02-29T01:00:00.000Z' }],
    ['timestamp Apr 31', { ...request, timestamp: '2026-04-31T01:00:00.000Z' }],
    ['timestamp month 13', { ...request, timestamp: '2026-13-01T01:00:00.000Z' }],
    ['timestamp day 0', { ...request, timestamp: '2026-01-00T01:00:00.000Z' }],
    ['timestamp 24h', { ...request, timestamp: '2026-01-01T24:00:00.000Z' }],
    ['timestamp 60 min', { ...request, timestamp: '2026-01-01T23:60:00.000Z' }],
    ['timestamp leap second', { ...request, timestamp: '2026-12-31T23:59:60.000Z' }],
    ['timestamp letters', { ...request, timestamp: '2026-1a-01T01:00:00.000Z' }],
    ['timestamp space', { ...request, timestamp: '2026-01-01 01:00:00.000Z' }],
    ['timestamp number', { ...request, timestamp: 1795309700000 }],
  ];

  it('accepts quickly only what the schema accepts, and defers to the schema otherwise', () => {
    let quick = 0;
    for (const [name, v] of variants) {
      const schemaOk = envelopeIssues(v).length === 0;
      const fast = quickEnvelopeCheck(v as Envelope);
      if (fast) quick++;
      expect({ name, fast: fast && !schemaOk }).toEqual({ name, fast: false });
      expect({ name, valid: validWireEnvelope(v as Envelope) }).toEqual({ name, valid: schemaOk });
    }
    expect(quick).toBeGreaterThanOrEqual(8); // the usual shapes do take the quick path
    expect(quickEnvelopeCheck(request)).toBe(true);
    expect(quickEnvelopeCheck(reply)).toBe(true);
  });

  it('reads wire JSON to a checked envelope exactly when decoding and the full check would accept it', () => {
    let accepted = 0;
    for (const [name, v] of variants) {
      const e = v as Envelope;
      let json: string;
      try {
        json = e.kind === 'reply' ? encodeReply(e) : encodeRequest(e);
      } catch {
        continue; // shapes the encoder cannot even read (source null)
      }
      if (e.kind === 'reply') {
        const old = decodeReply(json, request);
        const want = old !== undefined && validWireEnvelope(old) ? old : undefined;
        expect({ name, env: readReply(json, request) }).toEqual({ name, env: want });
        if (want !== undefined) accepted++;
      } else {
        const old = decodeRequest(json);
        const want = old !== undefined && validWireEnvelope(old) ? old : undefined;
        expect({ name, env: readRequest(json) }).toEqual({ name, env: want });
        if (want !== undefined) accepted++;
        // the same values sent back as a reply's wire fields (id, source, timestamp)
        const r = { ...reply, id: e.id, source: e.source, timestamp: e.timestamp };
        let rjson: string;
        try {
          rjson = encodeReply(r);
        } catch {
          continue;
        }
        const rold = decodeReply(rjson, request);
        const rwant = rold !== undefined && validWireEnvelope(rold) ? rold : undefined;
        expect({ name, reply: readReply(rjson, request) }).toEqual({ name, reply: rwant });
      }
    }
    expect(accepted).toBeGreaterThanOrEqual(20);
    expect(readRequest('[1]')).toBeUndefined();
    expect(readReply('{}', request)).toBeUndefined();
  });

  it('validates what the decoders produce', () => {
    const env = decodeRequest(Buffer.from(encodeRequest(request)))!;
    expect(quickEnvelopeCheck(env)).toBe(true);
    const rep = decodeReply(Buffer.from(encodeReply(reply)), request)!;
    expect(quickEnvelopeCheck(rep)).toBe(true);
    const a = JSON.parse(encodeRequest(request)) as unknown[];
    a[6] = ['root', 'admin', ['admin']];
    expect(validWireEnvelope(decodeRequest(Buffer.from(JSON.stringify(a)))!)).toBe(false);
    a[6] = ['human', 'root', [1]];
    expect(validWireEnvelope(decodeRequest(Buffer.from(JSON.stringify(a)))!)).toBe(false);
  });
});
