import type { Msg } from 'nats';
import { describe, expect, it } from 'vitest';

import { clusterSubjects, encodeJson, serveKeyOf, WireAuth } from '../../src/transport/nats-wire.js';

const KEY = 'cluster-key-for-unit-tests-0001';

function msg(auth: WireAuth, body: Uint8Array, kind: 'request' | 'reply' = 'request'): Msg {
  return { subject: 's', sid: 1, data: body, headers: auth.headers(kind, body) } as unknown as Msg;
}

describe('WireAuth', () => {
  const daemon = new WireAuth({ role: 'daemon', node: 'd1', cluster_key: KEY });
  const other = new WireAuth({ role: 'daemon', node: 'd2', cluster_key: KEY });
  const serve = new WireAuth({ role: 'serve', node: 's1', serve_key: serveKeyOf(KEY) });
  const body = encodeJson({ hello: 'world' });

  it('accepts a daemon signature as daemon', () => {
    expect(other.verify(msg(daemon, body))).toEqual({ ok: true, role: 'daemon', node: 'd1', kind: 'request' });
  });

  it('treats a serve signature as serve, even when it claims to be a daemon', () => {
    const m = msg(serve, body);
    m.headers!.set('F-Role', 'daemon');
    expect(daemon.verify(m)).toEqual({ ok: true, role: 'serve', node: 's1', kind: 'request' });
  });

  it('lets a serve process verify daemons with the serve key, unless the daemon left it out', () => {
    expect(serve.verify(msg(daemon, body))).toMatchObject({ ok: true, node: 'd1' });
    const daemonOnly = { subject: 's', sid: 1, data: body, headers: daemon.headers('reply', body, undefined, false) };
    expect(serve.verify(daemonOnly as unknown as Msg)).toEqual({ ok: false, reason: 'unsigned message' });
    expect(other.verify(daemonOnly as unknown as Msg)).toEqual({ ok: true, role: 'daemon', node: 'd1', kind: 'reply' });
  });

  it('rejects a tampered body, a wrong key, a changed node and unsigned messages', () => {
    const tampered = msg(daemon, body);
    (tampered as { data: Uint8Array }).data = encodeJson({ hello: 'mallory' });
    expect(other.verify(tampered)).toEqual({ ok: false, reason: 'bad signature' });
    const wrong = new WireAuth({ role: 'daemon', node: 'x', cluster_key: 'another-cluster-key-00000' });
    expect(other.verify(msg(wrong, body))).toEqual({ ok: false, reason: 'bad signature' });
    const renamed = msg(daemon, body);
    renamed.headers!.set('F-Node', 'd9');
    expect(other.verify(renamed)).toEqual({ ok: false, reason: 'bad signature' });
    expect(other.verify({ subject: 's', data: body } as unknown as Msg)).toEqual({
      ok: false,
      reason: 'unsigned message (no headers)',
    });
  });

  it('refuses to build without its key', () => {
    expect(() => new WireAuth({ role: 'daemon', node: 'd' })).toThrow(/cluster key/);
    expect(() => new WireAuth({ role: 'serve', node: 's' })).toThrow(/serve key/);
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
