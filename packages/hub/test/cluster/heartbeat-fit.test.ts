import { connect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { ModuleManifest } from '@finger/protocol';
import {
  binaryForTests,
  natsServerBinary,
  type NatsServerChild,
  startConfiguredNats,
  testClusterName,
  waitUntil,
} from '@finger/testkit';

import { ClusterRegistry } from '../../src/cluster/cluster-registry.js';
import { fitHeartbeat } from '../../src/cluster/heartbeat-fit.js';
import type { Logger } from '../../src/logger.js';
import { WireAuth } from '../../src/transport/nats-wire.js';

const KEY = 'heartbeat-fit-test-key-0123456789';

/** A manifest whose JSON grows with `tools` tools described at length. */
const manifest = (id: string, tools: number, description = 'x'.repeat(200)): ModuleManifest => ({
  id,
  name: id,
  version: '1.0.0',
  kind: 'tool',
  runtime: { type: 'nats' },
  tools: Array.from({ length: tools }, (_, i) => ({ name: `t${i}`, description })),
});
const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('fitHeartbeat', () => {
  it('carries every manifest when they fit', () => {
    const modules = [manifest('a', 2), manifest('b', 3)];
    expect(fitHeartbeat('n1', modules, 1_000_000)).toEqual({
      json: JSON.stringify({ node: 'n1', modules }),
      leftOut: [],
    });
  });

  it('leaves out the largest manifests, keeps the order of the others and stays within the bytes', () => {
    const big = manifest('big', 40);
    const mid = manifest('mid', 12);
    const small = [manifest('s1', 1), manifest('s2', 2), manifest('s3', 1)];
    const modules = [small[0]!, big, small[1]!, mid, small[2]!];
    const max = bytes(JSON.stringify({ node: 'n1', modules: [...small, mid] })) + 10;
    const fit = fitHeartbeat('n1', modules, max);
    expect(bytes(fit.json)).toBeLessThanOrEqual(max);
    expect(JSON.parse(fit.json)).toEqual({ node: 'n1', modules: [small[0], small[1], mid, small[2]] });
    expect(fit.leftOut).toEqual([{ id: 'big', bytes: bytes(JSON.stringify(big)) }]);
    // a tighter limit leaves the next largest out too, largest first in the list
    const tight = fitHeartbeat('n1', modules, max - 100);
    expect(tight.leftOut.map((m) => m.id)).toEqual(['big', 'mid']);
    expect(bytes(tight.json)).toBeLessThanOrEqual(max - 100);
  });

  it('counts UTF-8 bytes, not characters', () => {
    const wide = manifest('wide', 4, 'ü'.repeat(200)); // 2 bytes a character
    const narrow = manifest('narrow', 4, 'u'.repeat(200));
    const max = bytes(JSON.stringify({ node: 'n', modules: [narrow] })) + 1 + JSON.stringify(wide).length;
    expect(fitHeartbeat('n', [narrow, wide], max).leftOut.map((m) => m.id)).toEqual(['wide']);
  });
});

// A nats-server whose max_payload is 16 KB: a node serving one module too large for it still
// announces the rest, and says in its log which module is not announced.
const bin = binaryForTests(
  natsServerBinary(),
  'heartbeat max_payload test',
  'no nats-server binary (set NATS_SERVER_BIN)',
);

describe.skipIf(bin === undefined)('ClusterRegistry heartbeats under a small max_payload', () => {
  let server: NatsServerChild | undefined;
  beforeAll(async () => {
    server = await startConfiguredNats(bin!, 'max_payload: 16384\n');
  });
  afterAll(() => server?.stop());

  it('announces the modules that fit and logs the one left out', async () => {
    const cluster = testClusterName('hbfit');
    const errors: { obj: unknown; msg: unknown }[] = [];
    const logger: Logger = {
      debug() {},
      info() {},
      warn() {},
      error: (obj: unknown, msg?: unknown) => void errors.push({ obj, msg }),
      child: () => logger,
    } as unknown as Logger;
    const ncA = await connect({ servers: server!.url });
    const ncB = await connect({ servers: server!.url });
    const local = [manifest('small', 2), manifest('huge', 100), manifest('other', 3)];
    const a = new ClusterRegistry({
      connection: ncA,
      cluster,
      auth: new WireAuth({ role: 'daemon', node: 'a', cluster_key: KEY }),
      local: () => local,
      logger,
      heartbeat_ms: 100,
    });
    const b = new ClusterRegistry({
      connection: ncB,
      cluster,
      auth: new WireAuth({ role: 'daemon', node: 'b', cluster_key: KEY }),
      local: () => [],
      heartbeat_ms: 100,
    });
    try {
      await b.start();
      await a.start();
      await waitUntil('b to list two of a’s modules', () => b.list().length >= 2, 5000, 20);
      expect(b.list().map((m) => m.manifest.id)).toEqual(['small', 'other']);
      expect(errors).toHaveLength(1); // once, not every heartbeat
      expect(errors[0]!.obj).toEqual({
        left_out: [{ id: 'huge', bytes: bytes(JSON.stringify(local[1])) }],
        max_payload: 16384,
      });
      expect(String(errors[0]!.msg)).toMatch(/^modules not announced/);
    } finally {
      await a.close();
      await b.close();
      await ncA.close();
      await ncB.close();
    }
  });
});
