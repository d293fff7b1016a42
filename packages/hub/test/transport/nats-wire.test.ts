import { describe, expect, it } from 'vitest';

import {
  clusterSubjects,
  decodeJson,
  encodeJson,
  parseServeKey,
  serveKeyOf,
  utf8Length,
  WireAuth,
} from '../../src/transport/nats-wire.js';

const KEY = 'cluster-key-for-unit-tests-0001';

/** Replaces the frame line of `frame` (keeping the body). */
function withLine(frame: Buffer, line: string): Buffer {
  const nl = frame.indexOf(10);
  return Buffer.concat([Buffer.from(`${line}\n`, 'latin1'), frame.subarray(nl + 1)]);
}

const lineOf = (frame: Buffer) => frame.toString('latin1', 0, frame.indexOf(10)).split(' ');

describe('WireAuth', () => {
  const daemon = new WireAuth({ role: 'daemon', node: 'd1', cluster_key: KEY });
  const other = new WireAuth({ role: 'daemon', node: 'd2', cluster_key: KEY });
  const serve = new WireAuth({ role: 'serve', node: 's1', serve_key: serveKeyOf(KEY, 'fs') });
  const gitHost = new WireAuth({ role: 'serve', node: 's2', serve_key: serveKeyOf(KEY, 'git') });
  const body = encodeJson({ hello: 'world' });

  it('seals a frame line before the body and opens it to the same body', () => {
    const frame = daemon.seal('request', body, 'fs');
    const [magic, kind, node, sig, ssig] = lineOf(frame);
    expect([magic, kind, node]).toEqual(['FW5', 'request', 'd1']);
    expect(sig).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(ssig).toMatch(/^[A-Za-z0-9_-]{22}\.fs$/);
    const opened = other.open(frame);
    expect(opened).toMatchObject({ ok: true, role: 'daemon', node: 'd1', kind: 'request' });
    expect(opened.ok && opened.scope).toBeUndefined();
    expect(opened.ok && decodeJson(opened.body)).toEqual({ hello: 'world' });
    // a registry message is signed for every serve host: a bare signature, no module
    expect(lineOf(daemon.seal('hb', body))[4]).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('sealJson gives the same frame as seal over the UTF-8 bytes, with and without the serve signature', () => {
    const json = JSON.stringify({ t: 'héllo ✓', n: 1 });
    expect(daemon.sealJson('request', json, 'fs')).toEqual(daemon.seal('request', Buffer.from(json), 'fs'));
    expect(daemon.sealJson('reply', json, false)).toEqual(daemon.seal('reply', Buffer.from(json), false));
    expect(daemon.sealJson('hb', json)).toEqual(daemon.seal('hb', Buffer.from(json)));
    expect(serve.sealJson('hb', json)).toEqual(serve.seal('hb', Buffer.from(json)));
    for (const scope of [false, true, 'fs', 'mcp.every'] as const)
      expect(daemon.sealJson('cancel', json, scope).indexOf(10) + 1).toBe(daemon.lineLength('cancel', scope));
    const big = JSON.stringify({ x: 'y'.repeat(20_000) });
    const opened = other.open(daemon.sealJson('events', big));
    expect(opened).toMatchObject({ ok: true, role: 'daemon', kind: 'events' });
    expect(opened.ok && opened.body.toString()).toBe(big);
  });

  it('opens a frame that is a view into a larger buffer (as nats.js hands it over)', () => {
    const frame = daemon.seal('reply', body, false);
    const big = new Uint8Array(frame.length + 20);
    big.set(frame, 7);
    const opened = other.open(big.subarray(7, 7 + frame.length));
    expect(opened).toMatchObject({ ok: true, role: 'daemon', node: 'd1', kind: 'reply' });
    expect(opened.ok && decodeJson(opened.body)).toEqual({ hello: 'world' });
  });

  it('treats a serve signature as serve of its module: a serve host can never pass as a daemon', () => {
    const frame = serve.seal('request', body);
    expect(lineOf(frame)[3]).toBe('-');
    expect(lineOf(frame)[4]).toMatch(/\.fs$/);
    expect(daemon.open(frame)).toMatchObject({ ok: true, role: 'serve', node: 's1', kind: 'request', scope: 'fs' });
    // whatever scope it is asked for, a serve host signs for its own module
    expect(serve.seal('reply', body, 'git')).toEqual(serve.seal('reply', body));
    // a forged daemon signature next to a valid serve one still means serve
    const [, kind, node, , ssig] = lineOf(frame);
    const forged = withLine(frame, `FW5 ${kind} ${node} ${'A'.repeat(22)} ${ssig}`);
    expect(daemon.open(forged)).toMatchObject({ ok: true, role: 'serve', node: 's1', scope: 'fs' });
  });

  it('keeps a serve host to its module: another module named in its line, or a bare signature, fails', () => {
    const frame = gitHost.seal('hb', body);
    expect(daemon.open(frame)).toMatchObject({ ok: true, role: 'serve', scope: 'git' });
    const [, kind, node, sig = '', ssig = ''] = lineOf(frame);
    const mac = ssig.slice(0, 22);
    const as = (line: string) => daemon.open(withLine(frame, line));
    // the same MAC claimed for fs: fs's key does not verify it
    expect(as(`FW5 ${kind} ${node} ${sig} ${mac}.fs`)).toEqual({
      ok: false,
      reason: 'bad signature',
      claimed_node: 's2',
    });
    // no module (as a daemon's registry message for serve hosts) or a scope that is not a module id
    expect(as(`FW5 ${kind} ${node} ${sig} ${mac}`)).toMatchObject({ ok: false, reason: 'bad signature' });
    expect(as(`FW5 ${kind} ${node} ${sig} ${mac}.`)).toMatchObject({ ok: false, reason: 'bad signature' });
    expect(as(`FW5 ${kind} ${node} ${sig} ${mac}.Not_An_Id`)).toMatchObject({ ok: false, reason: 'bad signature' });
    expect(as(`FW5 ${kind} ${node} ${sig} ${mac}xgit`)).toMatchObject({ ok: false, reason: 'bad signature' });
    // a daemon's registry signature (the secret every serve host holds) never passes with a daemon
    const registry = daemon.seal('hb', body);
    const [, , , , rsig] = lineOf(registry);
    expect(other.open(withLine(registry, `FW5 hb s2 - ${rsig}`))).toMatchObject({ ok: false, reason: 'bad signature' });
  });

  it('lets a serve host verify what daemons send its module, and quietly skip what is not for it', () => {
    expect(serve.open(daemon.seal('request', body, 'fs'))).toMatchObject({ ok: true, role: 'daemon', node: 'd1' });
    expect(serve.open(daemon.seal('cancel', body, 'git'))).toEqual({
      ok: false,
      reason: 'for module git',
      quiet: true,
    });
    const daemonOnly = daemon.seal('reply', body, false);
    expect(lineOf(daemonOnly)[4]).toBe('-');
    expect(serve.open(daemonOnly)).toEqual({ ok: false, reason: 'for daemons', quiet: true });
    expect(other.open(daemonOnly)).toMatchObject({ ok: true, role: 'daemon', node: 'd1', kind: 'reply' });
    // the daemons' registry messages, with the registry secret; another kind signed so is refused
    expect(serve.open(daemon.seal('hello', body))).toMatchObject({ ok: true, role: 'daemon', kind: 'hello' });
    expect(serve.open(daemon.seal('request', body, true))).toMatchObject({ ok: false, reason: 'bad signature' });
    // another module's host: quiet too (a serve host hears the other hosts' heartbeats)
    expect(serve.open(gitHost.seal('hb', body))).toMatchObject({ ok: false, quiet: true });
    // a frame signed by nobody is not quiet
    expect(serve.open(withLine(daemonOnly, 'FW5 reply x - -'))).toMatchObject({
      ok: false,
      reason: 'unsigned message',
    });
  });

  it('rejects a tampered body, a wrong key, a changed node or kind and unsigned messages', () => {
    const frame = daemon.seal('request', body, 'fs');
    const tampered = Buffer.from(frame);
    tampered[tampered.length - 3] = 'X'.charCodeAt(0);
    expect(other.open(tampered)).toMatchObject({ ok: false, reason: 'bad signature' });
    const wrong = new WireAuth({ role: 'daemon', node: 'x', cluster_key: 'another-cluster-key-00000' });
    // the node the frame names comes back as a hint (not authenticated), for the operator
    expect(other.open(wrong.seal('request', body, 'fs'))).toEqual({
      ok: false,
      reason: 'bad signature',
      claimed_node: 'x',
    });
    const [, , , sig = '', ssig = ''] = lineOf(frame);
    expect(other.open(withLine(frame, `FW5 request d9 ${sig} ${ssig}`))).toEqual({
      ok: false,
      reason: 'bad signature',
      claimed_node: 'd9',
    });
    expect(other.open(withLine(frame, `FW5 reply d1 ${sig} ${ssig}`))).toMatchObject({
      ok: false,
      reason: 'bad signature',
    });
    expect(other.open(withLine(frame, 'FW5 request d1 - -'))).toMatchObject({ ok: false, reason: 'unsigned message' });
    expect(other.open(withLine(frame, 'FW5 request d1'))).toMatchObject({ ok: false, reason: 'malformed frame line' });
    expect(other.open(body)).toMatchObject({ ok: false, reason: 'unsigned message (no frame)' });
    expect(other.open(new Uint8Array(0))).toMatchObject({ ok: false, reason: 'unsigned message (no frame)' });
    const longLine = Buffer.from(`FW5 request ${'n'.repeat(400)} - -\n{}`, 'latin1');
    expect(other.open(longLine)).toMatchObject({ ok: false, reason: 'unsigned message (no frame)' });
  });

  it('reads the frame line field by field: extra, empty or cut fields and other versions are refused', () => {
    const frame = daemon.seal('request', body, 'fs');
    const [, , , sig = '', ssig = ''] = lineOf(frame);
    const open = (line: string) => other.open(withLine(frame, line));
    expect(open(`FW5 request d1 ${sig} ${ssig} x`)).toMatchObject({ ok: false, reason: 'malformed frame line' });
    expect(open(`FW5  d1 ${sig} ${ssig}`)).toMatchObject({ ok: false, reason: 'malformed frame line' });
    expect(open(`FW5 request  ${sig} ${ssig}`)).toMatchObject({ ok: false, reason: 'malformed frame line' });
    expect(open(`FW4 request d1 ${sig} ${ssig}`)).toMatchObject({ ok: false, reason: 'unsupported frame version' });
    expect(open(`FW5 request d1 ${sig} ${ssig.slice(1)}`)).toMatchObject({ ok: true, role: 'daemon' });
    // a cut daemon signature leaves the serve signature: a daemon then takes it for a serve host
    expect(open(`FW5 request d1 ${sig.slice(1)} ${ssig}`)).toMatchObject({ ok: true, role: 'serve', scope: 'fs' });
    expect(open(`FW5 request d1 ${sig.slice(1)} ${ssig.slice(1)}`)).toMatchObject({
      ok: false,
      reason: 'bad signature',
    });
    expect(open(`FW5 request d1 ${sig} -`)).toMatchObject({ ok: true, role: 'daemon' });
    expect(open(`FW5 request d1 ${sig.slice(1)} -`)).toMatchObject({ ok: false, reason: 'bad signature' });
    // large bodies take the other hashing path: the same checks hold
    const big = daemon.sealJson('events', JSON.stringify({ x: 'y'.repeat(5000) }), false);
    expect(other.open(big)).toMatchObject({ ok: true, role: 'daemon', kind: 'events' });
    const bigTampered = Buffer.from(big);
    bigTampered[bigTampered.length - 10] = 0x7a;
    expect(other.open(bigTampered)).toMatchObject({ ok: false, reason: 'bad signature' });
    const bigServe = serve.sealJson('events', JSON.stringify({ x: 'y'.repeat(5000) }));
    expect(daemon.open(bigServe)).toMatchObject({ ok: true, role: 'serve', scope: 'fs' });
  });

  it('names the right kind and node when frames of many peers and kinds alternate (remembered frame lines)', () => {
    const peers = ['a1', 'a2', 'a3', 'a4', 'a5', 'a6'].map(
      (node) => new WireAuth({ role: 'daemon', node, cluster_key: KEY }),
    );
    const kinds = ['request', 'reply', 'hb', 'events', 'cancel'] as const;
    for (let round = 0; round < 3; round++) {
      for (const [i, p] of peers.entries()) {
        const kind = kinds[(i + round) % kinds.length]!;
        const opened = other.open(p.seal(kind, body));
        expect(opened).toMatchObject({ ok: true, role: 'daemon', node: p.node, kind });
        // a remembered line head does not make a wrong signature pass
        const [, , , sig, ssig] = lineOf(p.seal(kind, body));
        const forged = withLine(p.seal(kind, encodeJson({ other: 1 })), `FW5 ${kind} ${p.node} ${sig} ${ssig}`);
        expect(other.open(forged)).toMatchObject({ ok: false, reason: 'bad signature' });
      }
    }
  });

  it('refuses to build without its key or with a node id that cannot go in a frame line', () => {
    expect(() => new WireAuth({ role: 'daemon', node: 'd' })).toThrow(/cluster key/);
    expect(() => new WireAuth({ role: 'serve', node: 's' })).toThrow(/serve key/);
    expect(() => new WireAuth({ role: 'serve', node: 's', serve_key: 'f'.repeat(64) })).toThrow(/per module/);
    expect(() => new WireAuth({ role: 'daemon', node: 'a b', cluster_key: KEY })).toThrow(/invalid node id/);
    expect(() => new WireAuth({ role: 'daemon', node: '', cluster_key: KEY })).toThrow(/invalid node id/);
    expect(() => daemon.seal('cancel', body, 'Not An Id')).toThrow(/not a module id/);
  });
});

describe('serveKeyOf / parseServeKey', () => {
  it("derives one key per module, naming it; the registry part is the cluster's", () => {
    const fs = serveKeyOf(KEY, 'fs');
    expect(fs).toMatch(/^fsk2\.fs\.[0-9a-f]{64}\.[0-9a-f]{64}$/);
    const mcp = parseServeKey(serveKeyOf(KEY, 'mcp.every'));
    const f = parseServeKey(fs);
    expect(typeof f === 'object' && typeof mcp === 'object').toBe(true);
    if (typeof f !== 'object' || typeof mcp !== 'object') return;
    expect(mcp.module).toBe('mcp.every');
    expect(f.module).toBe('fs');
    expect(mcp.module_secret).not.toBe(f.module_secret);
    expect(mcp.registry_secret).toBe(f.registry_secret);
    expect(parseServeKey(serveKeyOf('another-key-another-key', 'fs'))).not.toEqual(f);
    expect(parseServeKey(` ${fs}\n`)).toEqual(f);
  });

  it('says what is wrong with a key that is not one, without echoing it', () => {
    expect(parseServeKey('a'.repeat(64))).toMatch(
      /the cluster key itself \(never give it to a serve host\), or a cluster-wide serve key of an earlier finger — serve keys are per module now/,
    );
    const bad = parseServeKey('fsk2.fs.secret-secret');
    expect(bad).toMatch(/^not a serve key/);
    expect(bad).not.toMatch(/secret/);
    expect(parseServeKey(`fsk2.Bad_Id.${'a'.repeat(64)}.${'b'.repeat(64)}`)).toMatch(/^not a serve key/);
    expect(() => serveKeyOf(KEY, 'a b')).toThrow(/invalid module id/);
  });
});

describe('utf8Length', () => {
  it('counts UTF-8 bytes like Buffer.byteLength, short or long, ASCII or not', () => {
    const texts = [
      '',
      'a',
      '1 [2,"x"]',
      'héllo',
      '✓',
      '😀',
      'x'.repeat(1024),
      'x'.repeat(1025),
      `${'x'.repeat(1023)}é`,
    ];
    for (const t of texts) expect(utf8Length(t)).toBe(Buffer.byteLength(t, 'utf8'));
  });

  it('lets sealJson copy short ASCII text itself: the frame is the same as sealing the UTF-8 bytes', () => {
    const daemon = new WireAuth({ role: 'daemon', node: 'd1', cluster_key: KEY });
    for (const json of ['{"a":"b"}', '{"a":"é"}', JSON.stringify({ x: 'y'.repeat(1500) })]) {
      expect(daemon.sealJson('reply', json, false)).toEqual(daemon.seal('reply', Buffer.from(json), false));
      expect(daemon.sealJson('reply', json, false, utf8Length(json))).toEqual(
        daemon.seal('reply', Buffer.from(json), false),
      );
      // with a head: the body is head + json, the same frame as sealing the joined text
      expect(daemon.sealJson('reply', json, false, utf8Length(json), '1z ')).toEqual(
        daemon.seal('reply', Buffer.from(`1z ${json}`), false),
      );
      expect(daemon.sealJson('request', json, true, undefined, 'ab ')).toEqual(
        daemon.seal('request', Buffer.from(`ab ${json}`)),
      );
    }
  });
});

describe('decodeJson', () => {
  it('parses UTF-8 JSON and answers undefined for anything else', () => {
    expect(decodeJson(encodeJson({ t: 'héllo ✓' }))).toEqual({ t: 'héllo ✓' });
    expect(decodeJson(Buffer.from('{nope'))).toBeUndefined();
  });
});

describe('clusterSubjects', () => {
  it('names the subjects of a cluster and refuses bad names', () => {
    const s = clusterSubjects('prod');
    expect([s.call('fs'), s.queue('fs'), s.cancel, s.event('DEGRADED'), s.registry('hb')]).toEqual([
      'finger.prod.call.fs',
      'q.fs',
      'finger.prod.cancel',
      'finger.prod.events.DEGRADED',
      'finger.prod.registry.hb',
    ]);
    expect(() => clusterSubjects('a.b')).toThrow(/invalid cluster/);
  });
});
