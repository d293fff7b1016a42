import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MAX_JSON_DEPTH } from '@finger/protocol';
import { type EventsClient, startTestDaemon, type TestDaemon } from '@finger/testkit';

// Issue 28 items 2 and 5, over real HTTP and a real WebSocket on loopback: a body nested past
// the JSON nesting limit is 400 E_INVALID_ARGS naming the limit at every JSON entry point (it was
// 500 E_INTERNAL from a RangeError in the hub's canonical JSON); a body past the size limit is 413
// E_PAYLOAD_TOO_LARGE (was 400); a __proto__ key says why it is refused (was "not valid JSON").

let d: TestDaemon;
let ws: EventsClient;

beforeAll(async () => {
  d = await startTestDaemon({ config: { log: { level: 'silent' } } });
  ws = await d.events();
});

afterAll(async () => {
  await ws?.close();
  await d?.close();
});

/** `{"a":{"a":…{"x":1}…}}`: `depth` levels of objects (arrays when `arrays`), built as text. */
function nested(depth: number, arrays = false): string {
  return arrays
    ? `${'['.repeat(depth)}1${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth - 1)}{"x":1}${'}'.repeat(depth - 1)}`;
}

async function post(path: string, body: string): Promise<{ status: number; body: any }> {
  const res = await fetch(d.url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${d.adminToken}`, 'content-type': 'application/json' },
    body,
  });
  return { status: res.status, body: await res.json() };
}

/** Every JSON entry point, given a value nested `depth` levels as text: how deep the whole message nests. */
const ENTRY_POINTS: Record<
  string,
  { send(inner: string): Promise<{ code?: string; message?: string; details?: any; ok: boolean }>; wrap: number }
> = {
  'POST /v1/messages': {
    wrap: 1,
    async send(inner) {
      const r = await post('/v1/messages', `{"target":"echo.echo","payload":${inner}}`);
      if (r.status >= 500) throw new Error(`500 from /v1/messages: ${JSON.stringify(r.body)}`);
      return r.status === 400 ? { ...r.body.error, ok: false } : { ok: true };
    },
  },
  'POST /v1/input (/hub)': {
    wrap: 1, // the payload counts as a body's payload member
    async send(inner) {
      const r = await post('/v1/input', JSON.stringify({ text: `/hub target=echo.echo ${inner}` }));
      if (r.status >= 500) throw new Error(`500 from /v1/input: ${JSON.stringify(r.body)}`);
      return r.status === 400 ? { ...r.body.error, ok: false } : { ok: true };
    },
  },
  'fs.write arguments': {
    wrap: 1,
    async send(inner) {
      const r = await post(
        '/v1/messages',
        `{"target":"fs.write","payload":{"path":"x.json","content":"x","meta":${inner}}}`,
      );
      if (r.status >= 500) throw new Error(`500 from fs.write: ${JSON.stringify(r.body)}`);
      return r.status === 400 && r.body.error.details?.limit ? { ...r.body.error, ok: false } : { ok: true };
    },
  },
  'WebSocket message': {
    wrap: 1,
    async send(inner) {
      const before = ws.messages.length;
      ws.socket.send(`{"op":"subscribe","x":${inner}}`);
      await ws.waitFor((m) => m.length > before, 'an answer');
      const m = ws.messages[before]!;
      return m.type === 'error' ? { ...m.error, ok: false } : { ok: true };
    },
  },
};

describe('deep JSON at every HTTP and WebSocket entry point', () => {
  it('deep JSON → 500: depth 1..5000 is never a 500; past the limit it is E_INVALID_ARGS naming the limit', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(ENTRY_POINTS)),
        fc.integer({ min: 1, max: 5000 }),
        fc.boolean(),
        async (name, depth, arrays) => {
          const entry = ENTRY_POINTS[name]!;
          // fs.write's payload adds one more level (meta sits in the payload object)
          const levels = depth + entry.wrap + (name === 'fs.write arguments' ? 1 : 0);
          const answer = await entry.send(nested(depth, arrays));
          if (levels <= MAX_JSON_DEPTH) {
            expect(answer.details?.limit).toBeUndefined();
            return;
          }
          expect({ name, code: answer.code, limit: answer.details?.limit }).toEqual({
            name,
            code: 'E_INVALID_ARGS',
            limit: MAX_JSON_DEPTH,
          });
          expect(answer.message).toContain(`limit of ${MAX_JSON_DEPTH} levels`);
        },
      ),
      { seed: 28, numRuns: 60 },
    );
  });

  it('deep JSON → 500: the reported 2,500-level payload to /v1/messages is 400 E_INVALID_ARGS', async () => {
    const r = await post('/v1/messages', `{"target":"echo.echo","payload":${nested(2500)}}`);
    expect(r).toEqual({
      status: 400,
      body: {
        error: {
          code: 'E_INVALID_ARGS',
          message: 'body nests deeper than the JSON nesting limit of 64 levels',
          details: {
            limit: 64,
            path: `body.payload${'.a'.repeat(15)}…`,
            issues: [
              {
                path: `body.payload${'.a'.repeat(15)}…`,
                message: 'nests deeper than the JSON nesting limit of 64 levels',
              },
            ],
          },
        },
      },
    });
    // the daemon still answers
    expect((await d.http('GET', '/v1/health')).status).toBe(200);
  });
});

describe('request bodies refused for what they are', () => {
  it('a 10 MB body → 413 E_PAYLOAD_TOO_LARGE naming the limit (was 400)', async () => {
    const r = await post(
      '/v1/messages',
      JSON.stringify({ target: 'echo.echo', payload: { text: 'x'.repeat(10_000_000) } }),
    );
    expect(r).toEqual({
      status: 413,
      body: {
        error: {
          code: 'E_PAYLOAD_TOO_LARGE',
          message: 'the request body is larger than the limit of 4194304 bytes (4.0 MiB)',
          details: { limit_bytes: 4194304 },
        },
      },
    });
  });

  it('a __proto__ key → E_INVALID_ARGS saying why, with the key path (was "Body is not valid JSON")', async () => {
    const r = await post('/v1/messages', '{"target":"echo.echo","payload":{"a":[{"__proto__":{"admin":true}}]}}');
    const message = 'key __proto__ is not accepted (keys __proto__/constructor could change object prototypes)';
    expect(r).toEqual({
      status: 400,
      body: {
        error: {
          code: 'E_INVALID_ARGS',
          message: `body: ${message} at body.payload.a[0].__proto__`,
          details: {
            key: '__proto__',
            path: 'body.payload.a[0].__proto__',
            issues: [{ path: 'body.payload.a[0].__proto__', message }],
          },
        },
      },
    });
  });

  it('a constructor.prototype key is refused the same way', async () => {
    const r = await post('/v1/messages', '{"target":"echo.echo","payload":{"constructor":{"prototype":{"x":1}}}}');
    expect({ status: r.status, code: r.body.error.code, key: r.body.error.details.key }).toEqual({
      status: 400,
      code: 'E_INVALID_ARGS',
      key: 'constructor',
    });
  });

  it('the same parser answers for application/json with a charset', async () => {
    const res = await fetch(`${d.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.adminToken}`, 'content-type': 'application/json; charset=utf-8' },
      body: `{"target":"echo.echo","payload":${nested(100)}}`,
    });
    const body = (await res.json()) as { error: { code: string; details: { limit: number } } };
    expect({ status: res.status, code: body.error.code, limit: body.error.details.limit }).toEqual({
      status: 400,
      code: 'E_INVALID_ARGS',
      limit: 64,
    });
  });

  it('a body that is not JSON still says so, with the position', async () => {
    const r = await post('/v1/messages', '{"target": ');
    expect({ status: r.status, code: r.body.error.code, issues: r.body.error.details.issues }).toEqual({
      status: 400,
      code: 'E_INVALID_ARGS',
      issues: [{ path: 'body', message: 'is not valid JSON at position 11' }],
    });
  });
});
