import { describe, expect, it } from 'vitest';

import {
  clusterSubjects,
  decodeJson,
  encodeJson,
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
  const serve = new WireAuth({ role: 'serve', node: 's1', serve_key: serveKeyOf(KEY) });
  const body = encodeJson({ hello: 'world' });

  it('seals a frame line before the body and opens it to the same body', () => {
    const frame = daemon.seal('request', body);
    const [magic, kind, node, sig, ssig] = lineOf(frame);
    expect([magic, kind, node]).toEqual(['FW4', 'request', 'd1']);
    expect(sig).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(ssig).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const opened = other.open(frame);
    expect(opened).toMatchObject({ ok: true, role: 'daemon', node: 'd1', kind: 'request' });
    expect(opened.ok && decodeJson(opened.body)).toEqual({ hello: 'world' });
  });

  it('sealJson gives the same frame as seal over the UTF-8 bytes, with and without the serve signature', () => {
    const json = JSON.stringify({ t: 'héllo ✓', n: 1 });
    expect(daemon.sealJson('request', json)).toEqual(daemon.seal('request', Buffer.from(json)));
    expect(daemon.sealJson('reply', json, false)).toEqual(daemon.seal('reply', Buffer.from(json), false));
    expect(serve.sealJson('hb', json)).toEqual(serve.seal('hb', Buffer.from(json)));
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

  it('treats a serve signature as serve: a serve process can never pass as a daemon', () => {
    const frame = serve.seal('request', body);
    expect(lineOf(frame)[3]).toBe('-');
    expect(daemon.open(frame)).toMatchObject({ ok: true, role: 'serve', node: 's1', kind: 'request' });
    // a forged daemon signature next to a valid serve one still means serve
    const [, kind, node, , ssig] = lineOf(frame);
    const forged = withLine(frame, `FW4 ${kind} ${node} ${'A'.repeat(22)} ${ssig}`);
    expect(daemon.open(forged)).toMatchObject({ ok: true, role: 'serve', node: 's1' });
  });

  it('lets a serve process verify daemons with the serve key, unless the daemon left it out', () => {
    expect(serve.open(daemon.seal('request', body))).toMatchObject({ ok: true, role: 'daemon', node: 'd1' });
    const daemonOnly = daemon.seal('reply', body, false);
    expect(lineOf(daemonOnly)[4]).toBe('-');
    expect(serve.open(daemonOnly)).toMatchObject({ ok: false, reason: 'unsigned message' });
    expect(other.open(daemonOnly)).toMatchObject({ ok: true, role: 'daemon', node: 'd1', kind: 'reply' });
  });

  it('rejects a tampered body, a wrong key, a changed node or kind and unsigned messages', () => {
    const frame = daemon.seal('request', body);
    const tampered = Buffer.from(frame);
    tampered[tampered.length - 3] = 'X'.charCodeAt(0);
    expect(other.open(tampered)).toMatchObject({ ok: false, reason: 'bad signature' });
    const wrong = new WireAuth({ role: 'daemon', node: 'x', cluster_key: 'another-cluster-key-00000' });
    // the node the frame names comes back as a hint (not authenticated), for the operator
    expect(other.open(wrong.seal('request', body))).toEqual({ ok: false, reason: 'bad signature', claimed_node: 'x' });
    const [, , , sig = '', ssig = ''] = lineOf(frame);
    expect(other.open(withLine(frame, `FW4 request d9 ${sig} ${ssig}`))).toEqual({
      ok: false,
      reason: 'bad signature',
      claimed_node: 'd9',
    });
    expect(other.open(withLine(frame, `FW4 reply d1 ${sig} ${ssig}`))).toMatchObject({
      ok: false,
      reason: 'bad signature',
    });
    expect(other.open(withLine(frame, 'FW4 request d1 - -'))).toMatchObject({ ok: false, reason: 'unsigned message' });
    expect(other.open(withLine(frame, 'FW4 request d1'))).toMatchObject({ ok: false, reason: 'malformed frame line' });
    expect(other.open(body)).toMatchObject({ ok: false, reason: 'unsigned message (no frame)' });
    expect(other.open(new Uint8Array(0))).toMatchObject({ ok: false, reason: 'unsigned message (no frame)' });
    const longLine = Buffer.from(`FW4 request ${'n'.repeat(300)} - -\n{}`, 'latin1');
    expect(other.open(longLine)).toMatchObject({ ok: false, reason: 'unsigned message (no frame)' });
  });

  it('reads the frame line field by field: extra, empty or cut fields and other versions are refused', () => {
    const frame = daemon.seal('request', body);
    const [, , , sig = '', ssig = ''] = lineOf(frame);
    const open = (line: string) => other.open(withLine(frame, line));
    expect(open(`FW4 request d1 ${sig} ${ssig} x`)).toMatchObject({ ok: false, reason: 'malformed frame line' });
    expect(open(`FW4  d1 ${sig} ${ssig}`)).toMatchObject({ ok: false, reason: 'malformed frame line' });
    expect(open(`FW4 request  ${sig} ${ssig}`)).toMatchObject({ ok: false, reason: 'malformed frame line' });
    expect(open(`FW3 request d1 ${sig} ${ssig}`)).toMatchObject({ ok: false, reason: 'unsupported frame version' });
    expect(open(`FW4 request d1 ${sig} ${ssig.slice(1)}`)).toMatchObject({ ok: true, role: 'daemon' });
    // a cut daemon signature leaves the serve signature: a daemon then takes it for a serve process
    expect(open(`FW4 request d1 ${sig.slice(1)} ${ssig}`)).toMatchObject({ ok: true, role: 'serve' });
    expect(open(`FW4 request d1 ${sig.slice(1)} ${ssig.slice(1)}`)).toMatchObject({
      ok: false,
      reason: 'bad signature',
    });
    expect(open(`FW4 request d1 ${sig} -`)).toMatchObject({ ok: true, role: 'daemon' });
    expect(open(`FW4 request d1 ${sig.slice(1)} -`)).toMatchObject({ ok: false, reason: 'bad signature' });
    // large bodies take the other hashing path: the same checks hold
    const big = daemon.sealJson('events', JSON.stringify({ x: 'y'.repeat(5000) }), false);
    expect(other.open(big)).toMatchObject({ ok: true, role: 'daemon', kind: 'events' });
    const bigTampered = Buffer.from(big);
    bigTampered[bigTampered.length - 10] = 0x7a;
    expect(other.open(bigTampered)).toMatchObject({ ok: false, reason: 'bad signature' });
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
        const forged = withLine(p.seal(kind, encodeJson({ other: 1 })), `FW4 ${kind} ${p.node} ${sig} ${ssig}`);
        expect(other.open(forged)).toMatchObject({ ok: false, reason: 'bad signature' });
      }
    }
  });

  it('refuses to build without its key or with a node id that cannot go in a frame line', () => {
    expect(() => new WireAuth({ role: 'daemon', node: 'd' })).toThrow(/cluster key/);
    expect(() => new WireAuth({ role: 'serve', node: 's' })).toThrow(/serve key/);
    expect(() => new WireAuth({ role: 'daemon', node: 'a b', cluster_key: KEY })).toThrow(/invalid node id/);
    expect(() => new WireAuth({ role: 'daemon', node: '', cluster_key: KEY })).toThrow(/invalid node id/);
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
