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
const S = 'finger.t.call.fs';

/** Replaces the frame line of `frame` (keeping the body). */
function withLine(frame: Buffer, line: string): Buffer {
  const nl = frame.indexOf(10);
  return Buffer.concat([Buffer.from(`${line}\n`, 'latin1'), frame.subarray(nl + 1)]);
}

const lineOf = (frame: Buffer) => frame.toString('latin1', 0, frame.indexOf(10)).split(' ');
const MAC = /^[A-Za-z0-9_-]{43}$/;
const bad = (claimed_node: string) => ({ ok: false, code: 'E_UNAUTHENTICATED', reason: 'bad signature', claimed_node });

describe('WireAuth', () => {
  const daemon = new WireAuth({ role: 'daemon', node: 'd1', cluster_key: KEY });
  const other = new WireAuth({ role: 'daemon', node: 'd2', cluster_key: KEY });
  const serve = new WireAuth({ role: 'serve', node: 's1', serve_key: serveKeyOf(KEY, 'fs') });
  const gitHost = new WireAuth({ role: 'serve', node: 's2', serve_key: serveKeyOf(KEY, 'git') });
  const body = encodeJson({ hello: 'world' });

  it('seals a frame line before the body and opens it to the same body', () => {
    const frame = daemon.seal(S, 'request', body, 'fs');
    const [magic, kind, node, ts, sig = '', ssig = ''] = lineOf(frame);
    expect([magic, kind, node]).toEqual(['FW6', 'request', 'd1']);
    expect(Math.abs(Number(ts) - Date.now())).toBeLessThan(60_000);
    expect(ts).toMatch(/^\d{13}$/);
    // the whole HMAC-SHA256 tag after its key id: c (cluster key), m.<module> (a module's serve secret)
    expect(sig.slice(0, 2)).toBe('c:');
    expect(sig.slice(2)).toMatch(MAC);
    expect(ssig.slice(0, 5)).toBe('m.fs:');
    expect(ssig.slice(5)).toMatch(MAC);
    const opened = other.open(frame, S);
    expect(opened).toMatchObject({ ok: true, role: 'daemon', node: 'd1', kind: 'request' });
    expect(opened.ok && opened.scope).toBeUndefined();
    expect(opened.ok && decodeJson(opened.body)).toEqual({ hello: 'world' });
    // a registry message is signed for every serve host: the registry secret, key id r
    expect(lineOf(daemon.seal('finger.t.registry.hb', 'hb', body))[5]).toMatch(/^r:[A-Za-z0-9_-]{43}$/);
  });

  it('binds the subject: a frame replayed on another subject fails', () => {
    const frame = daemon.seal(S, 'request', body, 'fs');
    expect(other.open(frame, 'finger.t.call.git')).toEqual(bad('d1'));
    expect(serve.open(frame, 'finger.t.call.fs2')).toEqual(bad('d1'));
    expect(serve.open(frame, S)).toMatchObject({ ok: true, role: 'daemon' });
    const reply = serve.seal('_INBOX.abc.t1', 'reply', body);
    expect(daemon.open(reply, '_INBOX.abc.t2')).toEqual(bad('s1'));
    expect(daemon.open(reply, '_INBOX.abc.t1')).toMatchObject({ ok: true, role: 'serve', scope: 'fs' });
  });

  it('refuses a frame whose timestamp is outside the window (a replay, or clocks apart), with E_UNAUTHENTICATED', () => {
    let now = 1_764_000_000_000;
    const clocked = (node: string) => new WireAuth({ role: 'daemon', node, cluster_key: KEY, now: () => now });
    const a = clocked('a');
    const b = clocked('b');
    const frame = a.seal(S, 'cancel', body, 'fs');
    expect(lineOf(frame)[3]).toBe('1764000000000');
    // each frame carries the clock as it is when sealed (within a millisecond, then after it, or back)
    expect(lineOf(a.seal(S, 'cancel', body))[3]).toBe('1764000000000');
    now += 0.5;
    expect(lineOf(a.seal(S, 'cancel', body))[3]).toBe('1764000000000');
    now += 0.5;
    expect(lineOf(a.seal(S, 'cancel', body))[3]).toBe('1764000000001');
    now -= 2;
    expect(lineOf(a.seal(S, 'cancel', body))[3]).toBe('1763999999999');
    now = 1_764_000_000_000;
    now += 120_000;
    expect(b.open(frame, S)).toMatchObject({ ok: true, role: 'daemon', node: 'a' });
    now += 1;
    expect(b.open(frame, S)).toEqual({
      ok: false,
      code: 'E_UNAUTHENTICATED',
      reason: 'stale frame',
      claimed_node: 'a',
    });
    // from the future as well
    now = 1_764_000_000_000 - 120_001;
    expect(b.open(frame, S)).toMatchObject({ ok: false, code: 'E_UNAUTHENTICATED', reason: 'stale frame' });
    // a serve host holds frames to the same window
    now = 1_764_000_000_000 + 200_000;
    const host = new WireAuth({ role: 'serve', node: 'h', serve_key: serveKeyOf(KEY, 'fs'), now: () => now });
    expect(host.open(frame, S)).toMatchObject({ ok: false, code: 'E_UNAUTHENTICATED', reason: 'stale frame' });
    // the timestamp is signed: moving it into the window breaks the MAC
    const [, kind, node, , sig, ssig] = lineOf(frame);
    expect(b.open(withLine(frame, `FW6 ${kind} ${node} ${now} ${sig} ${ssig}`), S)).toEqual(bad('a'));
    const narrow = new WireAuth({ role: 'daemon', node: 'n', cluster_key: KEY, now: () => now, max_skew_ms: 10 });
    expect(narrow.open(a.seal(S, 'cancel', body), S)).toMatchObject({ ok: true });
    now += 11;
    expect(narrow.open(frame, S)).toMatchObject({ reason: 'stale frame' });
  });

  it('sealJson gives the same frame as seal over the UTF-8 bytes, with and without the serve signature', () => {
    const fixed = new WireAuth({ role: 'daemon', node: 'd1', cluster_key: KEY, now: () => 1_764_000_000_123 });
    const host = new WireAuth({
      role: 'serve',
      node: 's1',
      serve_key: serveKeyOf(KEY, 'fs'),
      now: () => 1_764_000_000_123,
    });
    const json = JSON.stringify({ t: 'héllo ✓', n: 1 });
    expect(fixed.sealJson(S, 'request', json, 'fs')).toEqual(fixed.seal(S, 'request', Buffer.from(json), 'fs'));
    expect(fixed.sealJson(S, 'reply', json, false)).toEqual(fixed.seal(S, 'reply', Buffer.from(json), false));
    expect(fixed.sealJson(S, 'hb', json)).toEqual(fixed.seal(S, 'hb', Buffer.from(json)));
    expect(host.sealJson(S, 'hb', json)).toEqual(host.seal(S, 'hb', Buffer.from(json)));
    for (const scope of [false, true, 'fs', 'mcp.every'] as const)
      expect(daemon.sealJson(S, 'cancel', json, scope).indexOf(10) + 1).toBe(daemon.lineLength('cancel', scope));
    expect(serve.sealJson(S, 'reply', json).indexOf(10) + 1).toBe(serve.lineLength('reply'));
    const big = JSON.stringify({ x: 'y'.repeat(20_000) });
    const opened = other.open(daemon.sealJson(S, 'events', big), S);
    expect(opened).toMatchObject({ ok: true, role: 'daemon', kind: 'events' });
    expect(opened.ok && opened.body.toString()).toBe(big);
  });

  it('opens a frame that is a view into a larger buffer (as nats.js hands it over)', () => {
    const frame = daemon.seal(S, 'reply', body, false);
    const big = new Uint8Array(frame.length + 20);
    big.set(frame, 7);
    const opened = other.open(big.subarray(7, 7 + frame.length), S);
    expect(opened).toMatchObject({ ok: true, role: 'daemon', node: 'd1', kind: 'reply' });
    expect(opened.ok && decodeJson(opened.body)).toEqual({ hello: 'world' });
  });

  it('treats a serve signature as serve of its module: a serve host can never pass as a daemon', () => {
    const frame = serve.seal(S, 'request', body);
    expect(lineOf(frame)[4]).toBe('-');
    expect(lineOf(frame)[5]).toMatch(/^m\.fs:/);
    expect(daemon.open(frame, S)).toMatchObject({ ok: true, role: 'serve', node: 's1', kind: 'request', scope: 'fs' });
    // whatever scope it is asked for, a serve host signs for its own module
    expect(lineOf(serve.seal(S, 'reply', body, 'git'))[5]).toMatch(/^m\.fs:/);
    // a forged daemon signature next to a valid serve one still means serve
    const [, kind, node, ts, , ssig] = lineOf(frame);
    const forged = withLine(frame, `FW6 ${kind} ${node} ${ts} c:${'A'.repeat(43)} ${ssig}`);
    expect(daemon.open(forged, S)).toMatchObject({ ok: true, role: 'serve', node: 's1', scope: 'fs' });
  });

  it('keeps a serve host to its module: another module named in its line, or the registry key id, fails', () => {
    const R = 'finger.t.registry.hb';
    const frame = gitHost.seal(R, 'hb', body);
    expect(daemon.open(frame, R)).toMatchObject({ ok: true, role: 'serve', scope: 'git' });
    const [, kind, node, ts, sig = '', ssig = ''] = lineOf(frame);
    const mac = ssig.slice(ssig.indexOf(':') + 1);
    const as = (line: string) => daemon.open(withLine(frame, line), R);
    // the same MAC claimed for fs: fs's key does not verify it
    expect(as(`FW6 ${kind} ${node} ${ts} ${sig} m.fs:${mac}`)).toEqual(bad('s2'));
    // no module (as a daemon's registry message for serve hosts), no key id, or a scope that is not a module id
    for (const s of [`r:${mac}`, mac, `m.:${mac}`, `m.Not_An_Id:${mac}`, `x.git:${mac}`, `c:${mac}`])
      expect(as(`FW6 ${kind} ${node} ${ts} ${sig} ${s}`), s).toEqual(bad('s2'));
    // a daemon's registry signature (the secret every serve host holds) never passes with a daemon
    const registry = daemon.seal(R, 'hb', body);
    const [, , , rts, , rsig] = lineOf(registry);
    expect(other.open(withLine(registry, `FW6 hb s2 ${rts} - ${rsig}`), R)).toEqual(bad('s2'));
  });

  it('lets a serve host verify what daemons send its module, and quietly skip what is not for it', () => {
    expect(serve.open(daemon.seal(S, 'request', body, 'fs'), S)).toMatchObject({
      ok: true,
      role: 'daemon',
      node: 'd1',
    });
    const C = 'finger.t.cancel';
    expect(serve.open(daemon.seal(C, 'cancel', body, 'git'), C)).toEqual({
      ok: false,
      code: 'E_UNAUTHENTICATED',
      reason: 'for module git',
      quiet: true,
    });
    const daemonOnly = daemon.seal(S, 'reply', body, false);
    expect(lineOf(daemonOnly)[5]).toBe('-');
    expect(serve.open(daemonOnly, S)).toEqual({
      ok: false,
      code: 'E_UNAUTHENTICATED',
      reason: 'for daemons',
      quiet: true,
    });
    expect(other.open(daemonOnly, S)).toMatchObject({ ok: true, role: 'daemon', node: 'd1', kind: 'reply' });
    // the daemons' registry messages, with the registry secret; another kind signed so is refused
    const H = 'finger.t.registry.hello';
    expect(serve.open(daemon.seal(H, 'hello', body), H)).toMatchObject({ ok: true, role: 'daemon', kind: 'hello' });
    expect(serve.open(daemon.seal(S, 'request', body, true), S)).toEqual(bad('d1'));
    // another module's host: quiet too (a serve host hears the other hosts' heartbeats)
    expect(serve.open(gitHost.seal(S, 'hb', body), S)).toMatchObject({ ok: false, quiet: true });
    // a frame signed by nobody is not quiet
    const ts = lineOf(daemonOnly)[3];
    expect(serve.open(withLine(daemonOnly, `FW6 reply x ${ts} - -`), S)).toEqual({
      ok: false,
      code: 'E_UNAUTHENTICATED',
      reason: 'unsigned message',
      claimed_node: 'x',
    });
  });

  it('rejects a tampered body, a wrong key, a changed node or kind and unsigned messages', () => {
    const frame = daemon.seal(S, 'request', body, 'fs');
    const tampered = Buffer.from(frame);
    tampered[tampered.length - 3] = 'X'.charCodeAt(0);
    expect(other.open(tampered, S)).toEqual(bad('d1'));
    const wrong = new WireAuth({ role: 'daemon', node: 'x', cluster_key: 'another-cluster-key-00000' });
    // the node the frame names comes back as a hint (not authenticated), for the operator
    expect(other.open(wrong.seal(S, 'request', body, 'fs'), S)).toEqual(bad('x'));
    const [, , , ts, sig = '', ssig = ''] = lineOf(frame);
    expect(other.open(withLine(frame, `FW6 request d9 ${ts} ${sig} ${ssig}`), S)).toEqual(bad('d9'));
    expect(other.open(withLine(frame, `FW6 reply d1 ${ts} ${sig} ${ssig}`), S)).toEqual(bad('d1'));
    expect(other.open(withLine(frame, `FW6 request d1 ${ts} - -`), S)).toMatchObject({
      code: 'E_UNAUTHENTICATED',
      reason: 'unsigned message',
    });
    const malformed = { ok: false, code: 'E_INVALID_ENVELOPE', reason: 'malformed frame line' };
    expect(other.open(withLine(frame, `FW6 request d1 ${ts}`), S)).toEqual(malformed);
    const noFrame = { ok: false, code: 'E_UNAUTHENTICATED', reason: 'unsigned message (no frame)' };
    expect(other.open(body, S)).toEqual(noFrame);
    expect(other.open(new Uint8Array(0), S)).toEqual(noFrame);
    expect(other.open(Buffer.from(`FW6 request ${'n'.repeat(500)} ${ts} - -\n{}`, 'latin1'), S)).toEqual(noFrame);
  });

  it('reads the frame line field by field: extra, empty or cut fields are refused', () => {
    const frame = daemon.seal(S, 'request', body, 'fs');
    const [, , , ts = '', sig = '', ssig = ''] = lineOf(frame);
    const open = (line: string) => other.open(withLine(frame, line), S);
    const malformed = { ok: false, code: 'E_INVALID_ENVELOPE', reason: 'malformed frame line' };
    expect(open(`FW6 request d1 ${ts} ${sig} ${ssig} x`)).toEqual(malformed);
    expect(open(`FW6  d1 ${ts} ${sig} ${ssig}`)).toEqual(malformed);
    expect(open(`FW6 request  ${ts} ${sig} ${ssig}`)).toEqual(malformed);
    expect(open(`FW6 nonsense d1 ${ts} ${sig} ${ssig}`)).toEqual(malformed);
    expect(open(`FW6 request d1 ${ts.slice(1)} ${sig} ${ssig}`)).toEqual(malformed);
    expect(open(`FW6 request d1 ${ts} ${sig} ${ssig.slice(0, -1)}`)).toMatchObject({ ok: true, role: 'daemon' });
    // a cut daemon signature leaves the serve signature: a daemon then takes it for a serve host
    expect(open(`FW6 request d1 ${ts} ${sig.slice(0, -1)} ${ssig}`)).toMatchObject({
      ok: true,
      role: 'serve',
      scope: 'fs',
    });
    expect(open(`FW6 request d1 ${ts} ${sig.slice(0, -1)} ${ssig.slice(0, -1)}`)).toEqual(bad('d1'));
    expect(open(`FW6 request d1 ${ts} ${sig} -`)).toMatchObject({ ok: true, role: 'daemon' });
    expect(open(`FW6 request d1 ${ts} ${sig.slice(0, -1)} -`)).toEqual(bad('d1'));
    // the key id is part of what is signed: the cluster MAC under another key id fails
    expect(open(`FW6 request d1 ${ts} r:${sig.slice(2)} -`)).toEqual(bad('d1'));
    const big = daemon.sealJson(S, 'events', JSON.stringify({ x: 'y'.repeat(5000) }), false);
    expect(other.open(big, S)).toMatchObject({ ok: true, role: 'daemon', kind: 'events' });
    const bigTampered = Buffer.from(big);
    bigTampered[bigTampered.length - 10] = 0x7a;
    expect(other.open(bigTampered, S)).toEqual(bad('d1'));
    expect(daemon.open(serve.sealJson(S, 'events', JSON.stringify({ x: 'y'.repeat(5000) })), S)).toMatchObject({
      ok: true,
      role: 'serve',
      scope: 'fs',
    });
  });

  it('refuses a frame of an earlier finger (FW1–FW5) with E_INVALID_ENVELOPE naming its version, without a crash', () => {
    // an FW5 frame as finger before 2026-11 wrote it: truncated 22-character MACs, no timestamp
    const fw5 = Buffer.from(`FW5 request d1 ${'A'.repeat(22)} ${'B'.repeat(22)}.fs\n1abc [2,"x"]`, 'latin1');
    const refusal = { ok: false, code: 'E_INVALID_ENVELOPE', reason: 'unsupported frame version', version: 'FW5' };
    expect(other.open(fw5, S)).toEqual(refusal);
    expect(serve.open(fw5, S)).toEqual(refusal);
    expect(other.open(Buffer.from('FW4 hb d1 x y\n{}'), S)).toMatchObject({ version: 'FW4' });
    expect(other.open(Buffer.from('FW9 hb'), S)).toMatchObject({ code: 'E_INVALID_ENVELOPE', version: 'FW9' });
    // not a frame at all
    expect(other.open(Buffer.from('FWx hb d1\n{}'), S)).toMatchObject({ code: 'E_UNAUTHENTICATED' });
  });

  it('refuses to build without its key or with a node id that cannot go in a frame line', () => {
    expect(() => new WireAuth({ role: 'daemon', node: 'd' })).toThrow(/cluster key/);
    expect(() => new WireAuth({ role: 'serve', node: 's' })).toThrow(/serve key/);
    expect(() => new WireAuth({ role: 'serve', node: 's', serve_key: 'f'.repeat(64) })).toThrow(/per module/);
    expect(() => new WireAuth({ role: 'daemon', node: 'a b', cluster_key: KEY })).toThrow(/invalid node id/);
    expect(() => new WireAuth({ role: 'daemon', node: '', cluster_key: KEY })).toThrow(/invalid node id/);
    expect(() => daemon.seal(S, 'cancel', body, 'Not An Id')).toThrow(/not a module id/);
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
    const daemon = new WireAuth({ role: 'daemon', node: 'd1', cluster_key: KEY, now: () => 1_764_000_000_000 });
    for (const json of ['{"a":"b"}', '{"a":"é"}', JSON.stringify({ x: 'y'.repeat(1500) })]) {
      expect(daemon.sealJson(S, 'reply', json, false)).toEqual(daemon.seal(S, 'reply', Buffer.from(json), false));
      expect(daemon.sealJson(S, 'reply', json, false, utf8Length(json))).toEqual(
        daemon.seal(S, 'reply', Buffer.from(json), false),
      );
      // with a head: the body is head + json, the same frame as sealing the joined text
      expect(daemon.sealJson(S, 'reply', json, false, utf8Length(json), '1z ')).toEqual(
        daemon.seal(S, 'reply', Buffer.from(`1z ${json}`), false),
      );
      expect(daemon.sealJson(S, 'request', json, true, undefined, 'ab ')).toEqual(
        daemon.seal(S, 'request', Buffer.from(`ab ${json}`)),
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
