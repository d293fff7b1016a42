import { describe, expect, it } from 'vitest';

import { parseModuleLine } from '../../src/runtime/stdio-protocol.js';

describe('parseModuleLine', () => {
  it('accepts every module → host shape', () => {
    expect(parseModuleLine('{"type":"result","id":"a","result":{"x":1}}')).toEqual({
      type: 'result',
      id: 'a',
      result: { x: 1 },
    });
    expect(parseModuleLine('{"type":"progress","id":"a","message":"m","fraction":0.5}')).toEqual({
      type: 'progress',
      id: 'a',
      message: 'm',
      fraction: 0.5,
    });
    expect(parseModuleLine('{"type":"progress","id":"a"}')).toEqual({ type: 'progress', id: 'a', message: '' });
    expect(parseModuleLine('{"type":"lease.extend","id":"a","ttl_ms":500}')).toEqual({
      type: 'lease.extend',
      id: 'a',
      ttl_ms: 500,
    });
    expect(parseModuleLine('{"type":"pong","id":"p"}')).toEqual({ type: 'pong', id: 'p' });
    expect(parseModuleLine('{"type":"event","name":"ready","data":{"n":1}}')).toEqual({
      type: 'event',
      name: 'ready',
      data: { n: 1 },
    });
    expect(parseModuleLine('   ')).toBeNull();
  });

  it('turns error lines into FingerErrors: registered codes pass, others are E_MODULE_ERROR', () => {
    const a = parseModuleLine('{"type":"error","id":"a","code":"E_INVALID_ARGS","message":"bad","details":{"f":1}}');
    expect(a?.type === 'error' && a.error.toJSON()).toEqual({
      code: 'E_INVALID_ARGS',
      message: 'bad',
      details: { f: 1 },
    });
    const b = parseModuleLine('{"type":"error","id":"a","code":"OOPS","message":"m"}');
    expect(b?.type === 'error' && b.error.toJSON()).toEqual({
      code: 'E_MODULE_ERROR',
      message: 'm',
      details: { module_code: 'OOPS' },
    });
    const c = parseModuleLine('{"type":"error","id":"a"}');
    expect(c?.type === 'error' && c.error.toJSON()).toEqual({
      code: 'E_MODULE_ERROR',
      message: 'module error',
      details: { module_code: null },
    });
  });

  it.each([
    ['not json', 'not JSON'],
    ['[1,2]', 'not a JSON object'],
    ['"str"', 'not a JSON object'],
    ['{"type":"call","id":"a"}', 'unknown line type'],
    ['{"id":"a"}', 'unknown line type'],
    ['{"type":"result","result":1}', 'result without a string id'],
    ['{"type":"pong","id":7}', 'pong without a string id'],
    ['{"type":"lease.extend","id":"a","ttl_ms":-1}', 'lease.extend without a positive ttl_ms'],
    ['{"type":"lease.extend","id":"a"}', 'lease.extend without a positive ttl_ms'],
    ['{"type":"event","data":{}}', 'event without a name'],
  ])('counts %s as garbage (%s)', (line, reason) => {
    expect(parseModuleLine(line)).toEqual({ type: 'garbage', reason });
  });
});

describe('parseModuleLine and the JSON nesting limit', () => {
  const deep = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;

  it('deep JSON: a result or error line nested past the limit answers its call with E_MODULE_ERROR naming it', () => {
    // the line wraps the result one level: 65 levels of result is a 66-level line, the wire limit
    expect(parseModuleLine(`{"type":"result","id":"a","result":${deep(65)}}`)).toMatchObject({ type: 'result' });
    for (const line of [
      `{"type":"result","id":"a","result":${deep(66)}}`,
      `{"type":"error","id":"a","code":"E_X","message":"m","details":${deep(3000)}}`,
    ]) {
      const parsed = parseModuleLine(line) as { type: string; id: string; error: { toJSON(): unknown } };
      expect({ type: parsed.type, id: parsed.id }).toEqual({ type: 'error', id: 'a' });
      expect(parsed.error.toJSON()).toMatchObject({
        code: 'E_MODULE_ERROR',
        details: { reason: 'json_depth', limit: 66 },
      });
    }
  });

  it('deep JSON: any other deep line is garbage that names the limit', () => {
    expect(parseModuleLine(`{"type":"event","name":"e","data":${deep(5000)}}`)).toEqual({
      type: 'garbage',
      reason: 'line nests deeper than the JSON nesting limit of 66 levels',
    });
  });
});
