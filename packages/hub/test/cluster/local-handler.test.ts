import { fileURLToPath } from 'node:url';

import { connect, createInbox, type NatsConnection } from 'nats';
import { afterEach, describe, expect, it } from 'vitest';

import type { Envelope } from '@finger/protocol';
import { natsUrlForTests, requestEnvelope, testClusterName, waitUntil } from '@finger/testkit';

import { ClusterNode } from '../../src/cluster/cluster-node.js';
import { MessageHub } from '../../src/message-hub.js';
import { parseBatch } from '../../src/transport/nats-batch.js';
import { encodeRequest, readReply } from '../../src/transport/nats-envelope.js';
import { WireAuth } from '../../src/transport/nats-wire.js';

const url = await natsUrlForTests();
const KEY = 'local-handler-test-key-0123456789';
const fixture = (name: string): string =>
  fileURLToPath(new URL(`../../../../test/fixtures/modules/${name}/module.json`, import.meta.url));

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

describe('ModuleRegistry.handlerOf', () => {
  it('gives a module handler while the module is served on the hub transport, none before or after', async () => {
    const hub = new MessageHub({});
    cleanup.push(() => hub.close(0));
    expect(hub.registry.handlerOf('whoami')).toBeUndefined();
    await hub.registry.loadFile(fixture('whoami'));
    expect(typeof hub.registry.handlerOf('whoami')).toBe('function');
    await hub.registry.unregister('whoami');
    expect(hub.registry.handlerOf('whoami')).toBeUndefined();
  });
});

describe.skipIf(!url)('a serving node over NATS', () => {
  /** A hub with the ping and whoami fixtures served by a ClusterNode, and a raw connection to call it. */
  async function setup() {
    const cluster = testClusterName('lh');
    const hub = new MessageHub({});
    await hub.registry.loadFile(fixture('ping'));
    await hub.registry.loadFile(fixture('whoami'));
    const nc = await connect({ servers: url!, noAsyncTraces: true });
    const node = new ClusterNode({
      hub,
      connection: nc,
      cluster,
      auth: new WireAuth({ role: 'daemon', node: 'srv', cluster_key: KEY }),
      importRemote: false,
      bridgeEvents: false,
    });
    await node.start();
    const caller: NatsConnection = await connect({ servers: url!, noAsyncTraces: true });
    const auth = new WireAuth({ role: 'daemon', node: 'cli', cluster_key: KEY });
    // the caller joins the cluster as a real one does (its hello proves the serving node's key,
    // which serves its modules only then) and waits until they are announced
    const peerHub = new MessageHub({});
    const peer = new ClusterNode({
      hub: peerHub,
      connection: caller,
      cluster,
      auth,
      importRemote: false,
      bridgeEvents: false,
    });
    await peer.start();
    cleanup.push(async () => {
      await peer.close();
      await node.close();
      await hub.close(0);
      await peerHub.close(0);
      await nc.drain();
      await caller.drain();
    });
    await waitUntil(
      'the serving node to announce its modules',
      () => peer.registry.get('ping') !== undefined && peer.registry.get('whoami') !== undefined,
      10_000,
      20,
    );
    /** Sends `req` on module `subjectModule`'s call subject and returns the reply envelope. */
    const call = async (subjectModule: string, req: Envelope): Promise<Envelope> => {
      const inbox = createInbox();
      const got = new Promise<Envelope>((resolve, reject) => {
        caller.subscribe(`${inbox}.*`, {
          max: 1,
          callback: (err, msg) => {
            if (err) return reject(err);
            const check = auth.open(msg.data, msg.subject);
            if (!check.ok) return reject(new Error(check.reason));
            const part = parseBatch(check.text())![0]!;
            resolve(readReply(part.json, req)!);
          },
        });
      });
      await caller.flush();
      const subject = `finger.${cluster}.call.${subjectModule}`;
      caller.publish(subject, auth.sealJson(subject, 'request', `t1 ${encodeRequest(req)}`), {
        reply: `${inbox}.t1`,
      });
      return got;
    };
    return { call };
  }

  it('runs the tool the envelope names even when it arrives on another module subject (routed by target)', async () => {
    const { call } = await setup();
    const human = { kind: 'human' as const, id: 'alice', roles: ['operator'] };
    const req = requestEnvelope('whoami.whoami', {}, { deadline: Date.now() + 5000, source: human });
    const viaOther = await call('ping', req);
    expect(viaOther.error).toBeUndefined();
    expect(viaOther.payload).toEqual({ source: human });
    const direct = await call('whoami', {
      ...req,
      id: `${req.id}x`,
      request_id: `${req.id}x`,
      correlation_id: `${req.id}x`,
    });
    expect(direct.error).toBeUndefined();
    expect(direct.payload).toEqual({ source: human });
  });

  it('answers E_NO_TARGET for a module this node does not have, whatever subject the call came on', async () => {
    const { call } = await setup();
    const reply = await call('ping', requestEnvelope('nope.x', {}, { deadline: Date.now() + 5000 }));
    expect(reply.error?.code).toBe('E_NO_TARGET');
  });
});
