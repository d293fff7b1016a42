import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import { MAX_JSON_DEPTH, MAX_WIRE_JSON_DEPTH, type Principal } from '@finger/protocol';
import { natsUrlForTests, testClusterName } from '@finger/testkit';

import { clusterMember, until } from './cluster-member-helpers.js';

// Issue 28 item 2 over a real NATS server: a request whose payload makes the frame nest past
// the JSON nesting limit is answered E_INVALID_ARGS naming the limit (it never reaches the module
// or a recursive walk); a reply nested past it answers the call with E_MODULE_ERROR.

const url = await natsUrlForTests();
const PROBE = fileURLToPath(new URL('../fixtures/modules/remote-probe/module.json', import.meta.url));
const KEY = 'test-cluster-key-deep-json-0123456789';
const human: Principal = { kind: 'human', id: 'alice', roles: ['admin'] };

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

/** `{"k":{"k":…{}…}}`: an object `depth` levels deep. */
function deep(depth: number): unknown {
  return JSON.parse(`${'{"k":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`);
}

async function outcome(p: Promise<unknown>): Promise<{ code?: string; details?: any; message?: string }> {
  return p.then(
    () => ({}),
    (e: { code: string; details?: unknown; message: string }) => ({
      code: e.code,
      details: e.details,
      message: e.message,
    }),
  );
}

describe.skipIf(!url)('deep JSON over NATS', () => {
  it('deep JSON: a deep request is E_INVALID_ARGS with the limit; a deep reply is E_MODULE_ERROR; shallow ones pass', async () => {
    const cluster = testClusterName('deep');
    const b = await clusterMember({ url: url!, cluster, name: 'b', key: KEY, cleanup, manifest: PROBE });
    const a = await clusterMember({ url: url!, cluster, name: 'a', key: KEY, cleanup });
    await until(() => a.hub.registry.get('remote-probe'));
    const call = (payload: unknown) => a.hub.request({ target: 'remote-probe.where', payload, source: human });

    // within the limit: the payload comes back (the reply wraps it in {echo}, the frame adds one)
    expect(await call(deep(MAX_JSON_DEPTH - 1))).toMatchObject({ echo: deep(MAX_JSON_DEPTH - 1) });

    for (const depth of [MAX_WIRE_JSON_DEPTH, 2500]) {
      const r = await outcome(call(deep(depth)));
      expect({ code: r.code, limit: r.details?.limit }).toEqual({ code: 'E_INVALID_ARGS', limit: MAX_WIRE_JSON_DEPTH });
      expect(r.message).toContain(`limit of ${MAX_WIRE_JSON_DEPTH} levels`);
    }
    await until(() => b.dropped.find((d) => d.reason === 'request payload nests too deep'));

    // a payload the request frame takes whose reply ({echo: payload}) nests one level too deep
    const r = await outcome(call(deep(MAX_WIRE_JSON_DEPTH - 1)));
    expect({ code: r.code, reason: r.details?.reason, limit: r.details?.limit }).toEqual({
      code: 'E_MODULE_ERROR',
      reason: 'json_depth',
      limit: MAX_WIRE_JSON_DEPTH,
    });
    // the node still serves
    expect(await call({ x: 1 })).toMatchObject({ echo: { x: 1 } });
  });
});
