import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import {
  FingerError,
  jsonLimitError,
  jsonLimitProblem,
  MAX_JSON_DEPTH,
  MAX_WIRE_JSON_DEPTH,
  parseHubCommand,
} from '../src/index.js';

/** `{"a":{"a":…1…}}` nested `depth` levels, as text (no recursion to build it). */
function nestedText(depth: number, open = '{"a":', close = '}'): string {
  return `${open.repeat(depth)}1${close.repeat(depth)}`;
}

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error('expected a throw');
}

describe('MAX_JSON_DEPTH', () => {
  it('is 64 levels, and a wire frame may add two', () => {
    expect(MAX_JSON_DEPTH).toBe(64);
    expect(MAX_WIRE_JSON_DEPTH).toBe(66);
  });

  it('accepts exactly the limit and refuses one level more, naming the limit and the path', () => {
    expect(jsonLimitError(JSON.parse(nestedText(MAX_JSON_DEPTH)), 'body')).toBeUndefined();
    const err = jsonLimitError(JSON.parse(nestedText(MAX_JSON_DEPTH + 1)), 'body');
    expect(err?.toJSON()).toEqual({
      code: 'E_INVALID_ARGS',
      message: 'body nests deeper than the JSON nesting limit of 64 levels',
      details: {
        limit: 64,
        path: `body${'.a'.repeat(16)}…`,
        issues: [{ path: `body${'.a'.repeat(16)}…`, message: 'nests deeper than the JSON nesting limit of 64 levels' }],
      },
    });
  });

  it('counts arrays and objects alike, and scalars not at all', () => {
    expect(jsonLimitProblem(JSON.parse(nestedText(3, '[', ']')), { maxDepth: 2 })).toEqual({
      kind: 'depth',
      path: [0, 0],
    });
    expect(jsonLimitProblem('x'.repeat(10), { maxDepth: 0 })).toBeUndefined();
    expect(jsonLimitProblem({ a: [{ b: 1 }] }, { maxDepth: 3 })).toBeUndefined();
    expect(jsonLimitProblem({ a: [{ b: 1 }] }, { maxDepth: 3, base: 2 })).toEqual({ kind: 'depth', path: ['a', 0] });
  });

  it('refuses __proto__ keys and constructor.prototype only when asked (request bodies)', () => {
    const proto = JSON.parse('{"x":[{"__proto__":{"admin":true}}]}');
    expect(jsonLimitProblem(proto)).toBeUndefined();
    expect(jsonLimitError(proto, 'body', { protoKeys: true })?.toJSON()).toEqual({
      code: 'E_INVALID_ARGS',
      message:
        'body: key __proto__ is not accepted (keys __proto__/constructor could change object prototypes) at body.x[0].__proto__',
      details: {
        key: '__proto__',
        path: 'body.x[0].__proto__',
        issues: [
          {
            path: 'body.x[0].__proto__',
            message: 'key __proto__ is not accepted (keys __proto__/constructor could change object prototypes)',
          },
        ],
      },
    });
    const ctor = JSON.parse('{"constructor":{"prototype":{"admin":true}}}');
    expect(jsonLimitProblem(ctor, { protoKeys: true })).toEqual({
      kind: 'key',
      path: ['constructor'],
      key: 'constructor',
    });
    // a constructor key that cannot reach a prototype is ordinary data, as in fastify's parser
    expect(jsonLimitProblem({ constructor: 'Person' }, { protoKeys: true })).toBeUndefined();
  });

  it('never recurses: depth 1..5000 (any shape) is inspected without a throw, deep ones refused with the limit', () => {
    const shape = fc.constantFrom<[string, string]>(
      ['{"a":', '}'],
      ['[', ']'],
      ['{"k":[', ']}'],
      ['[{"x":1,"y":', '}]'],
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), shape, (depth, [open, close]) => {
        const value: unknown = JSON.parse(nestedText(depth, open, close));
        const levels = depth * (open.split(/[[{]/).length - 1);
        const err = jsonLimitError(value, 'body');
        if (levels <= MAX_JSON_DEPTH) expect(err).toBeUndefined();
        else
          expect({ code: err?.code, limit: (err?.details as { limit: number }).limit }).toEqual({
            code: 'E_INVALID_ARGS',
            limit: 64,
          });
      }),
      { seed: 28, numRuns: 200 },
    );
    // far past any stack: still an answer, not a RangeError
    expect(jsonLimitError(JSON.parse(nestedText(1_000_000, '[', ']')), 'body')?.code).toBe('E_INVALID_ARGS');
  });
});

describe('parseHubCommand and the nesting limit', () => {
  it('deep JSON: a /hub payload nested past the limit is E_INVALID_ARGS naming it, never a RangeError', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 5000 }), (depth) => {
        const text = `/hub target=echo ${nestedText(depth)}`;
        // the payload counts as the `payload` member of a body: one level for the body itself
        if (depth + 1 <= MAX_JSON_DEPTH) {
          expect(parseHubCommand(text).target).toBe('echo');
          return;
        }
        const err = thrown(() => parseHubCommand(text)) as FingerError;
        expect(err).toBeInstanceOf(FingerError);
        expect({ code: err.code, limit: (err.details as { limit: number }).limit }).toEqual({
          code: 'E_INVALID_ARGS',
          limit: 64,
        });
        expect(err.message).toContain('limit of 64 levels');
      }),
      { seed: 28, numRuns: 100 },
    );
  });
});

describe('jsonLimitProblem walks', () => {
  it('a limit up to 256 (recursion) finds the same first problem, path and key as the explicit stack beyond (property)', () => {
    // the same relative limit held by the stack walker: the value counted 300 levels lower
    const odd = fc.oneof(
      fc.constant({ ['__proto__']: 1 }),
      fc.constant(JSON.parse('{"__proto__":{"x":1}}') as unknown),
      fc.constant({ constructor: { prototype: {} } }),
      fc.constant({ constructor: 'fine' }),
    );
    const value = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        fc.jsonValue({ maxDepth: 4 }),
        odd,
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(fc.string({ maxLength: 3 }), tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    fc.assert(
      fc.property(value, fc.integer({ min: 1, max: 6 }), fc.boolean(), (v, maxDepth, protoKeys) => {
        const recursive = jsonLimitProblem(v, { maxDepth, protoKeys });
        const stacked = jsonLimitProblem(v, { maxDepth: maxDepth + 300, base: 301, protoKeys });
        expect(recursive).toEqual(stacked);
      }),
      { seed: 27, numRuns: 2000 },
    );
  });
});
