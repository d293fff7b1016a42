import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import {
  type Envelope,
  envelopeIssues,
  envelopeSchema,
  type HubCommand,
  isUlid,
  manifestIssues,
  parseHubCommand,
  rfc3339,
  ulid,
  type ValidationIssue,
} from '@finger/protocol';

// Property-based tests of the protocol package (DESIGN §4): ids, timestamps, the /hub parser,
// the envelope schema and the manifest validator.

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;
/** Latest epoch ms a ULID's 48-bit time part can hold. */
const ULID_MAX_MS = 2 ** 48 - 1;

function decodeTime(id: string): number {
  let t = 0;
  for (const ch of id.slice(0, 10)) t = t * 32 + CROCKFORD.indexOf(ch);
  return t;
}

describe('ulid (property)', () => {
  it('is 26 Crockford base32 chars whose time part is the given ms', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: ULID_MAX_MS }), (ms) => {
        const id = ulid(ms);
        expect(id).toHaveLength(26);
        expect(id).toMatch(ULID_RE);
        expect(isUlid(id)).toBe(true);
        expect(decodeTime(id)).toBe(ms);
      }),
    );
  });

  it('is strictly increasing across many calls within one millisecond', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.integer({ min: 2, max: 2000 }), (ms, n) => {
        const ids = Array.from({ length: n }, () => ulid(ms));
        // plain checks in the loop (expect() per id would dominate the run time)
        const bad = ids.findIndex(
          (id, i) => !ULID_RE.test(id) || decodeTime(id) !== ms || (i > 0 && !(id > ids[i - 1]!)),
        );
        expect(bad).toBe(-1);
      }),
      { numRuns: 40 },
    );
  });

  it('sorts by time across milliseconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: ULID_MAX_MS - 1 }), fc.integer({ min: 1, max: 1000 }), (ms, step) => {
        const later = Math.min(ms + step, ULID_MAX_MS);
        expect(ulid(ms) < ulid(later)).toBe(true);
      }),
    );
  });

  it('keeps ids unique when the clock is read for every call', () => {
    const ids = Array.from({ length: 20_000 }, () => ulid());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(ULID_RE);
  });
});

describe('rfc3339 (property)', () => {
  it('equals new Date(ms).toISOString() for any ms up to 2100-01-01', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (ms) => {
        expect(rfc3339(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 2000 },
    );
  });

  it('stays right when calls revisit the same second and millisecond (cache)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1_700_000_000_000, max: 1_700_000_002_000 }), { minLength: 1, maxLength: 50 }),
        (list) => {
          for (const ms of list) expect(rfc3339(ms)).toBe(new Date(ms).toISOString());
        },
      ),
    );
  });
});

/** Calls `fn` and returns what it threw (undefined when it returned). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

/** Pieces that steer random text into the parser's deeper branches. */
const HUB_PIECE = fc.oneof(
  fc.constantFrom(' ', '  ', '\t', '\n', 'target=', 'target=echo', 'blocking=', 'blocking=true', 'blocking=false'),
  fc.constantFrom('timeout=', 'timeout=100', 'timeout=0', 'timeout=-1', '{', '}', '[', ']', '"', ':', ',', '=', 'x'),
  fc.string({ maxLength: 8 }),
  fc.json({ maxDepth: 2 }),
);

describe('parseHubCommand (property)', () => {
  it('never throws anything but E_BAD_HUB_SYNTAX for text starting with /hub', () => {
    const text = fc.oneof(
      fc.string({ maxLength: 80 }).map((s) => `/hub${s}`),
      fc.array(HUB_PIECE, { maxLength: 12 }).map((parts) => `/hub ${parts.join('')}`),
      fc.array(HUB_PIECE, { maxLength: 12 }).map((parts) => `/hub ${parts.join(' ')}`),
    );
    fc.assert(
      fc.property(text, (input) => {
        const e = thrown(() => parseHubCommand(input)) as
          { code: string; details: { position: number; expected: string; found: string } } | undefined;
        if (e === undefined) return;
        expect(e.code).toBe('E_BAD_HUB_SYNTAX');
        expect(Number.isInteger(e.details.position)).toBe(true);
        expect(e.details.position).toBeGreaterThanOrEqual(0);
        expect(e.details.position).toBeLessThanOrEqual(input.length);
        expect(typeof e.details.expected).toBe('string');
        expect(typeof e.details.found).toBe('string');
      }),
      { numRuns: 3000 },
    );
  });

  it('round-trips generated valid commands (any option order, whitespace and JSON payload)', () => {
    const target = fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,40}$/);
    // Only objects, arrays and strings open a payload (`{`, `[`, `"`); anything else is wrapped.
    const payload = fc
      .jsonValue()
      .map((v) => ((v !== null && typeof v === 'object') || typeof v === 'string' ? v : [v]));
    const ws = fc.constantFrom(' ', '  ', '\t', '\n', ' \n ');
    const command = fc.record(
      {
        target,
        blocking: fc.boolean(),
        timeout_ms: fc.integer({ min: 1, max: 86_400_000 }),
        payload,
      },
      { requiredKeys: ['target'] },
    );
    fc.assert(
      fc.property(
        command,
        fc.array(ws, { minLength: 6, maxLength: 6 }),
        fc.nat(),
        fc.integer({ min: 0, max: 2 }),
        (c, gaps, order, indent) => {
          const words = [`target=${c.target}`];
          if (c.blocking !== undefined) words.push(`blocking=${c.blocking}`);
          if (c.timeout_ms !== undefined) words.push(`timeout=${c.timeout_ms}`);
          // rotate the options so every order of them is exercised
          const k = order % words.length;
          const options = [...words.slice(k), ...words.slice(0, k)];
          let text = `${gaps[0] === '\n' ? '' : gaps[0]}/hub`;
          options.forEach((w, i) => (text += gaps[i + 1] + w));
          if (c.payload !== undefined) text += gaps[5] + JSON.stringify(c.payload, null, indent);

          const expected: HubCommand = {
            target: c.target,
            blocking: c.blocking ?? true,
            payload: c.payload === undefined ? {} : JSON.parse(JSON.stringify(c.payload)),
          };
          if (c.timeout_ms !== undefined) expected.timeout_ms = c.timeout_ms;
          expect(parseHubCommand(text)).toEqual(expected);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

const REQUIRED = envelopeSchema.required as readonly string[];
const idString = fc.string({ minLength: 1, maxLength: 128 });

/** Envelopes that satisfy the schema: every field within its bounds, optional lease and error. */
const validEnvelope: fc.Arbitrary<Envelope> = fc
  .record({
    id: fc.oneof(idString, fc.constant(ulid())),
    kind: fc.constantFrom('request', 'reply', 'event', 'cancel'),
    request_id: idString,
    correlation_id: idString,
    session_id: fc.string({ maxLength: 128 }),
    workflow_id: fc.string({ maxLength: 128 }),
    source: fc.record({
      kind: fc.constantFrom('human', 'agent', 'module', 'system'),
      id: idString,
      roles: fc.array(fc.string({ maxLength: 64 }), { maxLength: 32 }),
    }),
    target: fc.string({ minLength: 1, maxLength: 256 }),
    blocking: fc.boolean(),
    ms: fc.integer({ min: 0, max: 4_102_444_800_000 }),
    deadline: fc.nat(),
    execution_chain: fc.array(fc.string({ maxLength: 256 }), { maxLength: 64 }),
    lease: fc.option(
      fc.record({ id: idString, ttl_ms: fc.integer({ min: 1, max: 86_400_000 }), expires_at: fc.nat() }),
      { nil: undefined },
    ),
    payload: fc.jsonValue(),
    error: fc.option(
      fc.record(
        { code: fc.string(), message: fc.string(), details: fc.jsonValue() },
        { requiredKeys: ['code', 'message'] },
      ),
      { nil: undefined },
    ),
  })
  .map(({ ms, lease, error, ...rest }) => {
    const env: Envelope = { ...rest, timestamp: rfc3339(ms), nesting_depth: rest.execution_chain.length };
    if (lease !== undefined) env.lease = lease;
    if (error !== undefined) env.error = error;
    return env;
  });

describe('envelopeIssues (property)', () => {
  it('accepts generated valid envelopes', () => {
    fc.assert(
      fc.property(validEnvelope, (env) => {
        expect(envelopeIssues(env)).toEqual([]);
        // and the same after crossing a wire
        expect(envelopeIssues(JSON.parse(JSON.stringify(env)))).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });

  it('rejects an envelope missing a required field with exactly `$.<field> is required`', () => {
    fc.assert(
      fc.property(validEnvelope, fc.constantFrom(...REQUIRED), (env, field) => {
        const broken: Record<string, unknown> = { ...env };
        delete broken[field];
        expect(envelopeIssues(broken)).toEqual([{ path: `$.${field}`, message: 'is required' }]);
      }),
      { numRuns: 500 },
    );
  });

  it('lists every missing required field at once', () => {
    fc.assert(
      fc.property(validEnvelope, fc.subarray([...REQUIRED], { minLength: 1 }), (env, fields) => {
        const broken: Record<string, unknown> = { ...env };
        for (const f of fields) delete broken[f];
        const issues = envelopeIssues(broken);
        expect(issues).toHaveLength(fields.length);
        expect(new Set(issues.map((i) => i.path))).toEqual(new Set(fields.map((f) => `$.${f}`)));
        for (const i of issues) expect(i.message).toBe('is required');
      }),
      { numRuns: 200 },
    );
  });
});

type Manifest = Record<string, any>;

function validManifest(): Manifest {
  return {
    id: 'mod',
    name: 'Mod',
    version: '1.0.0',
    kind: 'tool',
    runtime: { type: 'inprocess', entry: './x.js' },
    tools: [
      { name: 'a', description: 'A' },
      { name: 'b', description: 'B' },
    ],
  };
}

/** Independent defects (each touches its own field) and the one issue each must produce. */
const DEFECTS: { name: string; apply: (m: Manifest) => void; issue: ValidationIssue }[] = [
  {
    name: 'bad id',
    apply: (m) => (m.id = 'Bad Id'),
    issue: { path: '$.id', message: 'must match pattern "^[a-z0-9][a-z0-9_-]{0,63}$"' },
  },
  {
    name: 'bad version',
    apply: (m) => (m.version = 'one'),
    issue: { path: '$.version', message: 'must match pattern "^\\d+\\.\\d+\\.\\d+([-+][0-9A-Za-z.-]+)?$"' },
  },
  {
    name: 'bad kind',
    apply: (m) => (m.kind = 'robot'),
    issue: { path: '$.kind', message: 'must be one of "tool", "agent", "channel"' },
  },
  {
    name: 'unknown key',
    apply: (m) => (m.colour = 'red'),
    issue: { path: '$.colour', message: 'is not an allowed key' },
  },
  {
    name: 'empty name',
    apply: (m) => (m.name = ''),
    issue: { path: '$.name', message: 'must NOT have fewer than 1 characters' },
  },
  {
    name: 'zero concurrency',
    apply: (m) => (m.concurrency = 0),
    issue: { path: '$.concurrency', message: 'must be >= 1' },
  },
  {
    name: 'empty grant',
    apply: (m) => (m.grants = ['ok', '']),
    issue: { path: '$.grants[1]', message: 'must NOT have fewer than 1 characters' },
  },
  {
    name: 'fast health',
    apply: (m) => (m.health = { interval_ms: 1 }),
    issue: { path: '$.health.interval_ms', message: 'must be >= 100' },
  },
  {
    name: 'zero lease',
    apply: (m) => (m.lease = { ttl_ms: 0 }),
    issue: { path: '$.lease.ttl_ms', message: 'must be >= 1' },
  },
  {
    name: 'numeric description',
    apply: (m) => (m.description = 42),
    issue: { path: '$.description', message: 'must be string' },
  },
  {
    name: 'unknown runtime key',
    apply: (m) => (m.runtime.cmd = 'x'),
    issue: { path: '$.runtime.cmd', message: 'is not an allowed key' },
  },
  {
    name: 'bad risk',
    apply: (m) => (m.tools[0].risk_level = 'extreme'),
    issue: { path: '$.tools[0].risk_level', message: 'must be one of "low", "medium", "high", "critical"' },
  },
  {
    name: 'bad capability',
    apply: (m) => (m.tools[0].capability_level = 'L9'),
    issue: { path: '$.tools[0].capability_level', message: 'must be one of "L0", "L1", "L2"' },
  },
  {
    name: 'bad permission',
    apply: (m) => (m.tools[0].permission = 'MAYBE'),
    issue: { path: '$.tools[0].permission', message: 'must be one of "AUTO", "NOTIFY", "CONFIRM", "APPROVE"' },
  },
  {
    name: 'zero tool timeout',
    apply: (m) => (m.tools[0].timeout_ms = 0),
    issue: { path: '$.tools[0].timeout_ms', message: 'must be >= 1' },
  },
  {
    name: 'unknown tool key',
    apply: (m) => (m.tools[0].bogus = true),
    issue: { path: '$.tools[0].bogus', message: 'is not an allowed key' },
  },
  {
    name: 'duplicate tool',
    apply: (m) => (m.tools[1].name = 'a'),
    issue: { path: '$.tools[1].name', message: 'duplicates $.tools[0].name "a"' },
  },
];

const byPath = (a: ValidationIssue, b: ValidationIssue) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

describe('manifestIssues (property)', () => {
  it('accepts the base manifest', () => {
    expect(manifestIssues(validManifest())).toEqual([]);
  });

  it.each(DEFECTS)('reports $name alone as exactly one issue', ({ apply, issue }) => {
    const m = validManifest();
    apply(m);
    expect(manifestIssues(m)).toEqual([issue]);
  });

  it('lists each of N injected independent errors, and nothing else', () => {
    fc.assert(
      fc.property(fc.shuffledSubarray(DEFECTS, { minLength: 1 }), (defects) => {
        const m = validManifest();
        for (const d of defects) d.apply(m);
        const issues = manifestIssues(m);
        expect([...issues].sort(byPath)).toEqual(defects.map((d) => d.issue).sort(byPath));
      }),
      { numRuns: 300 },
    );
  });
});
