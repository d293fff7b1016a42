// An attacker holding a `module serve` host (the serve key and NATS credentials for its own
// module's subject) answers a call of ANOTHER module: it learns the calling daemon's reply inbox
// from a request to its own module, and the reply tokens were a sequence, so it could name the
// next call's token and the called module as the reply's source. A reply must only come from
// whoever received that request: the tokens are unguessable.
import { fileURLToPath } from 'node:url';

import type { Msg, NatsConnection } from 'nats';
import { afterEach, describe, expect, it } from 'vitest';

import type { WireAuth } from '@finger/hub/nats';
import type { Principal } from '@finger/protocol';
import { natsUrlForTests, testClusterName } from '@finger/testkit';

import { clusterMember, until } from './cluster-member-helpers.js';

const url = await natsUrlForTests();
const PROBE = fileURLToPath(new URL('../fixtures/modules/remote-probe/module.json', import.meta.url));
const WHOAMI = fileURLToPath(new URL('../fixtures/modules/whoami/module.json', import.meta.url));
const KEY = 'attack-reply-forgery-key-0123456789';
const human: Principal = { kind: 'human', id: 'alice', roles: ['admin'] };

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c().catch(() => undefined);
});

const member = (cluster: string, name: string, manifest: string | undefined, role: 'daemon' | 'serve') =>
  clusterMember({ url: url!, cluster, name, key: KEY, cleanup, role, ...(manifest ? { manifest } : {}) });

/** The reply tokens' alphabet (base 32: nats.ts TOKEN_CHARS) and length. */
const TOKEN_DIGITS = '0123456789abcdefghijklmnopqrstuv';

/**
 * The 64 tokens that would follow `token` if tokens were a sequence (base 32, its length kept):
 * the attacker's best guess at the next calls' tokens. Counted with BigInt — a 13-digit token is
 * past what a double counts exactly.
 */
function nextTokens(token: string, n = 64): string[] {
  let v = 0n;
  for (const c of token) v = v * 32n + BigInt(TOKEN_DIGITS.indexOf(c));
  return Array.from({ length: n }, (_, i) => {
    let x = v + BigInt(i + 1);
    let t = '';
    for (let k = 0; k < token.length; k++, x /= 32n) t = TOKEN_DIGITS[Number(x % 32n)]! + t;
    return t;
  });
}

/** A reply frame answering every token of `tokens`, claiming to come from module `module`. */
function forgeReplies(nc: NatsConnection, auth: WireAuth, inbox: string, tokens: string[], module: string): void {
  const lines = tokens.map((t, i) => {
    const env = [2, `forged-${i}`, ['module', module, []], new Date().toISOString(), { forged: true }, 0];
    return `${t} ${JSON.stringify(env)}`;
  });
  const subject = `${inbox}${tokens[0]}`;
  nc.publish(subject, auth.sealJson(subject, 'reply', lines.join('\n')));
}

describe.skipIf(!url)('a serve host answering calls of another module', () => {
  it("cannot answer a daemon's call of a module it does not serve", async () => {
    const cluster = testClusterName('atk-reply');
    // daemon B serves remote-probe; daemon A imports it
    await member(cluster, 'b', PROBE, 'daemon');
    const a = await member(cluster, 'a', undefined, 'daemon');
    // the attacker's serve host serves whoami (legitimately) and watches its own call subject
    const evil = await member(cluster, 'evil', WHOAMI, 'serve');
    const seen: Msg[] = [];
    const snoop = evil.nc.subscribe(`finger.${cluster}.call.whoami`, { callback: (_e, m) => seen.push(m) });
    cleanup.push(async () => snoop.unsubscribe());
    await evil.nc.flush();
    await until(() => a.hub.registry.get('remote-probe') && a.hub.registry.get('whoami'));

    // A calls whoami: the attacker learns A's reply inbox and the token of that call
    await a.hub.request({ target: 'whoami.whoami', payload: {}, source: human });
    const reply = (await until(() => seen[0]))!.reply!;
    const dot = reply.lastIndexOf('.');
    const inbox = reply.slice(0, dot + 1);
    const token = reply.slice(dot + 1);
    expect(token).toMatch(/^[0-9a-v]{13}$/);
    const guesses = nextTokens(token);
    expect(new Set(guesses).size).toBe(64);

    // A calls remote-probe (served by daemon B); once it runs, the attacker answers for it
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const call = a.hub.request({
      target: 'remote-probe.slow',
      payload: { ms: 1500 },
      source: human,
      timeout_ms: 10_000,
      onProgress: () => started(),
    });
    await running;
    forgeReplies(evil.nc, evil.auth, inbox, guesses, 'remote-probe');
    await evil.nc.flush();

    // the call ends with daemon B's answer, not the attacker's
    const result = (await call) as { forged?: boolean; done?: boolean };
    expect(result.forged).toBeUndefined();
    expect(result).toMatchObject({ done: true });
  });
});
