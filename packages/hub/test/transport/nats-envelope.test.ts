import { describe, expect, it } from 'vitest';

import type { Envelope } from '@finger/protocol';
import { envelopeIssues } from '@finger/protocol';

import { decodeReply, decodeRequest, encodeReply, encodeRequest } from '../../src/transport/nats-envelope.js';

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
    expect(JSON.parse(bytes.toString())).toEqual([1, reply.id, reply.source, reply.timestamp, { text: 'hi' }, 0]);
    expect(decodeReply(bytes, request)).toEqual(reply);
    const failed = { ...reply, payload: null, error: { code: 'E_TIMEOUT', message: 'late' } };
    expect(decodeReply(Buffer.from(encodeReply(failed)), request)).toEqual(failed);
  });

  it('fills a reply from the caller request, whatever ids the replier had in mind', () => {
    const other = { ...request, request_id: 'someone-else', correlation_id: 'x', kind: 'reply' as const };
    const decoded = decodeReply(Buffer.from(encodeReply(other)), request);
    expect(decoded).toMatchObject({ request_id: request.request_id, correlation_id: request.correlation_id });
  });

  it('answers undefined for anything but a version-1 array of the right length', () => {
    const bad = [
      '{"id":"x"}',
      '[2,"a"]',
      '[]',
      JSON.stringify([2, ...JSON.parse(encodeRequest(request)).slice(1)]),
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
