// An attacker holding the `module serve` host of one module (its serve key; NATS credentials that,
// through a gap in the server's permissions, let it listen on another module's call subject)
// tries to act for ANOTHER module's host: answer its calls, make the daemons forget its host,
// announce the module itself, or publish events about it. Serve keys are per module: whatever it
// signs speaks for its own module only, and the daemons drop the rest.
import { fileURLToPath } from 'node:url';

import type { Msg } from 'nats';
import { afterEach, describe, expect, it } from 'vitest';

import { serveKeyOf, WireAuth } from '@finger/hub/nats';
import type { Principal } from '@finger/protocol';
import { natsUrlForTests, testClusterName } from '@finger/testkit';

import { clusterMember, until } from './cluster-member-helpers.js';

const url = await natsUrlForTests();
const PROBE = fileURLToPath(new URL('../fixtures/modules/remote-probe/module.json', import.meta.url));
const WHOAMI = fileURLToPath(new URL('../fixtures/modules/whoami/module.json', import.meta.url));
const KEY = 'attack-module-scope-key-0123456789';
const human: Principal = { kind: 'human', id: 'alice', roles: ['admin'] };

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

/** Daemon `a` (imports), the remote-probe host `host-b` and the attacker's whoami host `evil`. */
async function cluster() {
  const name = testClusterName('atk-scope');
  const m = (node: string, manifest: string | undefined, role: 'daemon' | 'serve') =>
    clusterMember({ url: url!, cluster: name, name: node, key: KEY, cleanup, role, ...(manifest ? { manifest } : {}) });
  const hostB = await m('host-b', PROBE, 'serve');
  const evil = await m('evil', WHOAMI, 'serve');
  const a = await m('a', undefined, 'daemon');
  await until(() => a.hub.registry.get('remote-probe') && a.hub.registry.get('whoami'));
  /** Publishes an unsigned message on `subject` and waits for A to drop it: A has read all before it. */
  const settled = async (subject: string) => {
    const before = a.dropped.filter((d) => d.reason === 'unsigned message (no frame)').length;
    evil.nc.publish(subject, Buffer.from('not a frame'));
    await evil.nc.flush();
    await until(() => a.dropped.filter((d) => d.reason === 'unsigned message (no frame)').length > before);
  };
  return { name, a, hostB, evil, settled };
}

describe.skipIf(!url)("a serve host acting for another module's host", () => {
  it('cannot answer, or report progress on, a call of another module it overhears', async () => {
    const { name, a, evil } = await cluster();
    // the attacker hears remote-probe's calls and answers each at once, in remote-probe's name
    const heard = evil.nc.subscribe(`finger.${name}.call.remote-probe`, {
      callback: (_e: unknown, msg: Msg) => {
        const opened = evil.auth.open(msg.data, msg.subject); // quiet: signed for remote-probe's hosts, not its own
        expect(opened).toMatchObject({ ok: false, quiet: true });
        const line = Buffer.from(msg.data).toString('utf8');
        const token = msg.reply!.slice(msg.reply!.lastIndexOf('.') + 1);
        const id = JSON.parse(line.slice(line.indexOf(' ', line.indexOf('\n')) + 1))[1] as string;
        evil.nc.publish(msg.reply!, evil.auth.sealJson(msg.reply!, 'progress', JSON.stringify({ message: 'forged' })));
        const env = [2, `forged-${id}`, ['module', 'remote-probe', []], new Date().toISOString(), { forged: true }, 0];
        evil.nc.publish(msg.reply!, evil.auth.sealJson(msg.reply!, 'reply', `${token} ${JSON.stringify(env)}`));
      },
    });
    cleanup.push(async () => heard.unsubscribe());
    await evil.nc.flush();

    const progress: string[] = [];
    const result = (await a.hub.request({
      target: 'remote-probe.slow',
      payload: { ms: 400 },
      source: human,
      timeout_ms: 10_000,
      onProgress: (message) => progress.push(message),
    })) as { forged?: boolean; done?: boolean };
    // the call ends with host-b's answer; the attacker's reply and progress were dropped
    expect(result.forged).toBeUndefined();
    expect(result).toMatchObject({ done: true });
    expect(progress.length).toBeGreaterThan(0); // host-b's own
    expect(progress).not.toContain('forged');
    expect(a.dropped).toContainEqual(
      expect.objectContaining({
        reason: 'reply signed for module whoami to a call of "remote-probe.slow"',
        node: 'evil',
      }),
    );
    expect(a.dropped).toContainEqual(
      expect.objectContaining({ reason: 'progress signed for module whoami to a call of "remote-probe.slow"' }),
    );
  });

  it("cannot make the daemons forget another module's host, nor announce that module", async () => {
    const { name, a, evil, settled } = await cluster();
    const probe = a.node.registry.get('remote-probe')!;
    // the attacker signs with its whoami key, naming host-b's node id, or its own
    const as = (node: string) => new WireAuth({ role: 'serve', node, serve_key: serveKeyOf(KEY, 'whoami') });
    let seq = Date.now() + 60_000; // ahead of host-b's own clock
    const registry = (node: string, kind: 'hb' | 'bye', body: object) =>
      evil.nc.publish(
        `finger.${name}.registry.${kind}`,
        as(node).sealJson(`finger.${name}.registry.${kind}`, kind, JSON.stringify({ node, ...body, seq: seq++ })),
      );
    registry('host-b', 'bye', { drain_ms: 0 });
    registry('host-b', 'hb', { hb_ms: 200, modules: [] });
    registry('evil', 'hb', { hb_ms: 200, modules: [{ ...probe.manifest, description: 'evil twin' }] });
    await evil.nc.flush();
    await settled(`finger.${name}.registry.hb`);
    const after = Date.now();

    expect(a.node.placement('remote-probe').nodes.map((n) => n.node)).toEqual(['host-b']);
    expect(a.node.registry.get('remote-probe')!.manifest.description).not.toBe('evil twin');
    expect(a.dropped).toContainEqual(
      expect.objectContaining({ reason: 'a serve host of whoami announces another module', node: 'evil' }),
    );
    // host-b's own heartbeats still count (the attacker's sequence number is not host-b's)
    await until(() => a.node.placement('remote-probe').nodes.find((n) => n.last_seen > after && n.healthy));
    expect((await a.hub.request({ target: 'remote-probe.where', payload: {}, source: human })) as object).toBeDefined();
  });

  it('cannot publish module events about another module', async () => {
    const { name, a, evil, settled } = await cluster();
    const seen: string[] = [];
    a.hub.events.subscribe({ types: ['MODULE_HEALTH'] }, (e) => {
      if (e.origin === 'evil') seen.push(e.target);
    });
    const event = (target: string, id = target) =>
      JSON.stringify({
        id: `ev-${target}-${id}`,
        type: 'MODULE_HEALTH',
        ts: new Date().toISOString(),
        request_id: '',
        correlation_id: '',
        session_id: '',
        workflow_id: '',
        target,
        data: { id, healthy: false },
      });
    const subject = `finger.${name}.events.MODULE_HEALTH`;
    evil.nc.publish(
      subject,
      evil.auth.sealJson(
        subject,
        'events',
        [event('remote-probe'), event('whoami', 'remote-probe'), event('whoami')].join('\n'),
      ),
    );
    await evil.nc.flush();
    await settled(subject);
    expect(seen).toEqual(['whoami']);
    expect(a.dropped).toContainEqual(
      expect.objectContaining({
        reason: 'event MODULE_HEALTH about "remote-probe" from a serve host of whoami',
        node: 'evil',
      }),
    );
    // the one naming whoami as its target but remote-probe as its module: dropped as well
    expect(a.dropped.filter((d) => d.reason.startsWith('event MODULE_HEALTH about'))).toHaveLength(2);
  });
});
