// createFirewall: the one facade over engine, gate and interceptor — a read-only caller's hold is
// refused (E_FORBIDDEN) without entering the queue, the adaptation loop runs on APPROVAL_RESOLVED,
// the kill switch refuses pending holds, and close() unsubscribes and is idempotent.

import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import type { EventType, Principal } from '@finger/protocol';
import type { RiskAssessor } from '@finger/shell-risk';

import type { AuditRecord } from '../src/audit/audit-entry.js';
import { createFirewall, type FirewallEvents } from '../src/create-firewall.js';
import type { FirewallCall } from '../src/engine/call-facts.js';
import { PolicyStore } from '../src/policy/policy-store.js';
import { PathSandbox } from '../src/sandbox/path-sandbox.js';
import { cleanupsAfterEach, sharedAssessor, tempDir } from './engine/helpers.js';
import { call, rejection } from './engine/interceptor-fixtures.js';

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await sharedAssessor();
});
const cleanups = cleanupsAfterEach();

const VIEWER_READER: Principal = { kind: 'system', id: 'daemon:backups', roles: [] };
const OPERATOR = { id: 'alice', roles: ['operator'] };
const PUSH = { command: 'git push origin main' };

/** An event bus that delivers each emitted event to the subscribers of its type, and records it. */
class Bus implements FirewallEvents {
  readonly emitted: { type: EventType; data: Record<string, unknown> | undefined }[] = [];
  readonly #subs = new Map<EventType, Set<() => void>>();

  emit(type: EventType, _correlation: object, data?: Record<string, unknown>): void {
    this.emitted.push({ type, data });
    for (const l of this.#subs.get(type) ?? []) l();
  }

  subscribeJson(filter: { types: readonly EventType[] }, listener: () => void): () => void {
    for (const t of filter.types) {
      let set = this.#subs.get(t);
      if (set === undefined) this.#subs.set(t, (set = new Set()));
      set.add(listener);
    }
    return () => {
      for (const t of filter.types) this.#subs.get(t)?.delete(listener);
    };
  }

  subscribers(): number {
    let n = 0;
    for (const s of this.#subs.values()) n += s.size;
    return n;
  }
}

const silent = { info: () => undefined, warn: () => undefined };

function setup() {
  const { dir, cleanup } = tempDir('create-firewall');
  cleanups.push(cleanup);
  const homeDir = path.join(dir, 'home');
  // user policy changes (the adaptation's) are audited: kept here
  const audited: AuditRecord[] = [];
  const audit = { append: (r: AuditRecord) => (audited.push(r), Promise.resolve()) };
  const policy = PolicyStore.load({ home: path.join(dir, 'finger'), homeDir, assessor, audit });
  const bus = new Bus();
  const fw = createFirewall({
    policy,
    engine: { risk: assessor, sandbox: new PathSandbox({ workspaceRoots: [dir], homeDir }) },
    events: bus,
    audit,
    readOnly: (p) => p.kind === VIEWER_READER.kind && p.id === VIEWER_READER.id,
    logger: silent,
  });
  cleanups.push(() => fw.close());
  const ran: unknown[] = [];
  const run = (c: FirewallCall) => fw.interceptor(c, () => (ran.push(c.envelope.payload), Promise.resolve('ran')));
  return { fw, bus, policy, run, ran, audited };
}

/** Waits until the gate holds `n` calls (the interceptor awaits nothing else before the hold). */
async function pending(fw: ReturnType<typeof setup>['fw'], n: number) {
  for (let i = 0; i < 100 && fw.gate.list().length < n; i++) await new Promise((r) => setImmediate(r));
  expect(fw.gate.list()).toHaveLength(n);
  return fw.gate.list();
}

describe('createFirewall', () => {
  it('holds an agent call for a person and runs it once approved', async () => {
    const s = setup();
    const result = s.run(call('shell.exec', PUSH));
    const [ap] = await pending(s.fw, 1);
    expect(ap).toMatchObject({ tool_id: 'shell.exec', level: 'CONFIRM' });
    await s.fw.gate.answer(ap!.id, { decision: 'approve', by: OPERATOR });
    expect(await result).toBe('ran');
    expect(s.ran).toEqual([PUSH]);
  });

  it('refuses a read-only caller’s call that would be held with E_FORBIDDEN; nothing enters the queue', async () => {
    const s = setup();
    const c = call('shell.exec', PUSH);
    (c.envelope as { source: Principal }).source = VIEWER_READER;
    const err = await rejection(s.run(c));
    expect(err.code).toBe('E_FORBIDDEN');
    expect(err.message).toMatch(/never held/);
    expect(s.fw.gate.list()).toEqual([]);
    expect(s.ran).toEqual([]);
  });

  it('runs the adaptation loop on APPROVAL_RESOLVED: three rejections of a call shape escalate it', async () => {
    const s = setup();
    for (let i = 0; i < 3; i++) {
      const result = s.run(call('shell.exec', PUSH));
      const [ap] = await pending(s.fw, 1);
      await s.fw.gate.answer(ap!.id, { decision: 'reject', by: OPERATOR });
      expect((await rejection(result)).code).toBe('E_REJECTED_BY_HUMAN');
    }
    await s.fw.settled();
    expect(s.policy.escalatedTools()).toHaveLength(1);
    expect(s.policy.escalatedTools()[0]).toMatch(/^shell\.exec/);
  });

  it('refuses pending holds with E_HALTED when the kill switch is thrown', async () => {
    const s = setup();
    const result = s.run(call('shell.exec', PUSH));
    await pending(s.fw, 1);
    s.bus.emit('HALTED', {});
    expect((await rejection(result)).code).toBe('E_HALTED');
    expect(s.fw.gate.list()).toEqual([]);
  });

  it('close() unsubscribes, refuses later holds, and is idempotent', async () => {
    const s = setup();
    expect(s.bus.subscribers()).toBe(2);
    const first = s.fw.close();
    expect(s.fw.close()).toBe(first);
    await first;
    expect(s.bus.subscribers()).toBe(0);
    expect((await rejection(s.run(call('shell.exec', PUSH)))).code).toBe('E_PROVIDER_CLOSED');
  });
});
