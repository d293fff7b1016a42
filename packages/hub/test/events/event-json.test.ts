import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { EVENT_TYPES, type FingerEvent } from '@finger/protocol';

import { encodeEvent, parseEvent, readEventHead } from '../../src/events/event-json.js';

const event = (over: Partial<FingerEvent> = {}): FingerEvent => ({
  id: '01KB0000000000000000000000',
  type: 'DISPATCH_RESULT',
  ts: '2026-11-26T08:00:00.000Z',
  request_id: 'r1',
  correlation_id: 'c1',
  session_id: '',
  workflow_id: '',
  target: 'echo.echo',
  data: { ok: true },
  ...over,
});

describe('encodeEvent', () => {
  it('writes what JSON.stringify writes, escapes included', () => {
    // quotes, backslashes, control characters, lone surrogates in any of the strings it checks
    const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('"', '\\', '\n', '\ud800', ''));
    fc.assert(
      fc.property(
        fc.constantFrom(...EVENT_TYPES),
        fc.tuple(text, text, text, text, text),
        fc.dictionary(fc.string(), fc.jsonValue()),
        (type, [request_id, correlation_id, session_id, workflow_id, target], data) => {
          const e = event({ type, request_id, correlation_id, session_id, workflow_id, target, data });
          expect(encodeEvent(e)).toBe(JSON.stringify(e));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('declines data that is not a JSON object', () => {
    expect(encodeEvent(event({ data: [1] as unknown as Record<string, unknown> }))).toBeUndefined();
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(encodeEvent(event({ data: circular }))).toBeUndefined();
  });
});

describe('readEventHead', () => {
  it('reads the id and type of every line encodeEvent writes', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[0-9A-Za-z_.:-]{1,128}$/),
        fc.constantFrom(...EVENT_TYPES),
        fc.dictionary(fc.string(), fc.jsonValue()),
        (id, type, data) => {
          const line = encodeEvent(event({ id, type, data }))!;
          expect(readEventHead(line)).toEqual({ id, type });
          expect(parseEvent(line, { id, type })).toEqual(JSON.parse(line));
        },
      ),
    );
  });

  it('leaves every other form to a full parse', () => {
    const line = JSON.stringify(event());
    const cases = [
      JSON.stringify({ type: 'DISPATCH_RESULT', id: 'x', data: {} }), // another key order
      JSON.stringify(event({ id: 'a"b' })), // an escape in the id
      JSON.stringify(event({ id: 'a\\b' })),
      JSON.stringify(event({ id: '' })),
      JSON.stringify(event({ id: 'x'.repeat(129) })),
      line.replace('DISPATCH_RESULT', 'NOT_A_TYPE'),
      line.replace('"DISPATCH_RESULT",', '"DISPATCH_RESULT" ,'),
      line.slice(0, 60), // cut short
      `${line} `,
      '{"id":"x"}',
      '',
    ];
    for (const c of cases) expect(readEventHead(c), c).toBeUndefined();
  });
});

describe('parseEvent', () => {
  it('refuses what is not an event, or an event other than its head says', () => {
    const line = JSON.stringify(event());
    expect(parseEvent(line)).toEqual(event());
    expect(parseEvent('{"id":"x","type":"HALTED","data":5}')).toBeUndefined();
    expect(parseEvent('{"id":1,"type":"HALTED","data":{}}')).toBeUndefined();
    expect(parseEvent('{"id":"x","type":"NOPE","data":{}}')).toBeUndefined();
    expect(parseEvent('null')).toBeUndefined();
    expect(parseEvent('{"id":')).toBeUndefined();
    expect(parseEvent(line, { id: 'other', type: 'DISPATCH_RESULT' })).toBeUndefined();
    expect(parseEvent(line, { id: event().id, type: 'HALTED' })).toBeUndefined();
  });
});
