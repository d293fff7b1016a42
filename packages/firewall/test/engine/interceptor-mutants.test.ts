// The firewall interceptor's decisions against a scripted engine and gate, one behaviour per test:
// what runs with which arguments, the exact error, what is audited and emitted, and how far the
// call's deadline moves (on a fake Date clock). Written against the survivors of a Stryker run
// (`npm run mutate`, issue 22).

import { afterEach, describe, expect, it, vi } from 'vitest';

import type { AuditRecord } from '../../src/audit/audit-entry.js';
import { digestOf } from '../../src/audit/canonical-json.js';
import { CACHED_ALLOW, type CachedAllow } from '../../src/engine/engine-evaluation.js';
import type { Evaluation } from '../../src/engine/evaluation.js';
import type { EvaluateOptions } from '../../src/engine/firewall-engine.js';
import {
  createFirewallInterceptor,
  type FirewallCall,
  type FirewallEvaluator,
  type FirewallGate,
  type FirewallGateDecision,
  type FirewallInterceptorOptions,
} from '../../src/engine/firewall-interceptor.js';
import { argsDigest } from '../../src/gate/binding.js';
import { diffPreview, evaluation, EventRecorder } from '../gate/gate-fixtures.js';
import { call, rejection } from './interceptor-fixtures.js';

const SHA_A = 'a'.repeat(64);
const SHA_B = 'b'.repeat(64);
const PUSH = { command: 'git push' };

/**
 * An engine that answers `verdicts` in order (the last one again once they run out) and records
 * the arguments and options of every full evaluation.
 */
function scriptedEngine(verdicts: Evaluation[], over: Partial<FirewallEvaluator> = {}) {
  const evaluated: { args: unknown; options: EvaluateOptions | undefined }[] = [];
  const engine: FirewallEvaluator = {
    evaluate: (facts, options) => {
      evaluated.push({ args: facts.args, options });
      const ev = verdicts.length > 1 ? verdicts.shift() : verdicts[0];
      if (ev === undefined) throw new Error('no verdict scripted');
      return ev;
    },
    fileSha256: () => {
      throw new Error('no file hash scripted');
    },
    ...over,
  };
  return { engine, evaluated };
}

/** A gate that gives `answers` in order and records what it was shown. */
function scriptedGate(...answers: FirewallGateDecision[]) {
  const shown: { ev: Evaluation; args: unknown }[] = [];
  const gate: FirewallGate = {
    hold: (ev, facts) => {
      shown.push({ ev, args: facts.args });
      const d = answers.shift();
      return d === undefined ? Promise.reject(new Error('no answer scripted')) : Promise.resolve(d);
    },
  };
  return { gate, shown };
}

/** The interceptor with an audit log and an event recorder (pass `audit: undefined` for none). */
function harness(engine: FirewallEvaluator, over: Partial<FirewallInterceptorOptions> = {}) {
  const ran: unknown[] = [];
  const audited: AuditRecord[] = [];
  const events = new EventRecorder();
  const intercept = createFirewallInterceptor({
    engine,
    events,
    audit: { append: (r) => (audited.push(r), Promise.resolve()) },
    ...over,
  });
  const run = (c: FirewallCall): Promise<unknown> =>
    intercept(c, () => {
      ran.push(c.envelope.payload);
      return Promise.resolve('ran');
    });
  return { intercept, run, ran, audited, events };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the arguments a call runs with', () => {
  it('runs and audits the arguments the argument filter left, not the caller’s', async () => {
    const filtered = { command: 'ls' };
    const { engine } = scriptedEngine([evaluation('AUTO', { args: filtered })]);
    const h = harness(engine);
    expect(await h.run(call('shell.exec', { command: 'ls', sneaky: true }))).toBe('ran');
    expect(h.ran).toEqual([filtered]);
    expect(h.audited.map((r) => r.args)).toEqual([filtered]);
  });

  it('runs and audits the caller’s arguments when the verdict carries none of its own', async () => {
    const { engine } = scriptedEngine([evaluation('NOTIFY')]);
    const h = harness(engine);
    expect(await h.run(call('shell.exec', PUSH))).toBe('ran');
    expect(h.ran).toEqual([PUSH]);
    expect(h.audited.map((r) => r.args)).toEqual([PUSH]);
  });

  it('runs a NOTIFY call without holding it, with and without an audit log', async () => {
    for (const audit of [{ append: () => Promise.resolve() }, undefined]) {
      const { engine } = scriptedEngine([evaluation('NOTIFY')]);
      const { gate, shown } = scriptedGate();
      const h = harness(engine, { audit, gate });
      expect(await h.run(call('shell.exec', PUSH))).toBe('ran');
      expect(h.ran).toEqual([PUSH]);
      expect(shown).toEqual([]);
    }
  });
});

describe('the FIREWALL_VERDICT event', () => {
  it('carries the call’s correlation and no waived key when no level was waived', async () => {
    const ev = evaluation('NOTIFY');
    const { engine } = scriptedEngine([ev]);
    const h = harness(engine);
    await h.run(call('shell.exec', PUSH));
    expect(h.events.all).toStrictEqual([
      {
        type: 'FIREWALL_VERDICT',
        correlation: {
          request_id: 'req-1',
          correlation_id: 'corr-1',
          session_id: 'sess-1',
          workflow_id: '',
          target: 'shell.exec',
        },
        data: {
          tool: 'shell.exec',
          decision_id: 'dec-NOTIFY',
          action: 'notify',
          level: 'NOTIFY',
          layer: 'permission',
          matched_rules: ['builtin:risk'],
          reasons: ['command is moderate'],
          principal: { kind: 'agent', id: 'executor-1' },
          direct: false,
        },
      },
    ]);
  });
});

describe('refusals', () => {
  it('a denial names only the DENY reasons, joined by "; ", and carries the evaluation', async () => {
    const ev = evaluation('DENY', {
      layer: 'behaviour',
      reasons: ['DENY: the same call 20 times', 'NOTIFY: a shell call', 'DENY: loop detected'],
    });
    const { engine } = scriptedEngine([ev]);
    const h = harness(engine);
    const err = await rejection(h.run(call('shell.exec', PUSH)));
    expect(err).toMatchObject({
      code: 'E_DENIED_BY_POLICY',
      message: 'denied by policy (behaviour): DENY: the same call 20 times; DENY: loop detected',
    });
    expect(err.details).toStrictEqual({ evaluation: ev });
    expect(h.ran).toEqual([]);
  });

  it('a denial with no DENY reason names all its reasons, joined by "; "', async () => {
    const ev = evaluation('DENY', { layer: 'metacognitive', reasons: ['confidence 0.1', 'three failures in a row'] });
    const { engine } = scriptedEngine([ev]);
    const err = await rejection(harness(engine).run(call('shell.exec', PUSH)));
    expect(err).toMatchObject({
      code: 'E_DENIED_BY_POLICY',
      message: 'denied by policy (metacognitive): confidence 0.1; three failures in a row',
    });
  });

  it('a hold without an approval channel is refused with the evaluation in its details', async () => {
    const ev = evaluation('CONFIRM');
    const { engine } = scriptedEngine([ev]);
    const h = harness(engine, { gate: undefined });
    const err = await rejection(h.run(call('shell.exec', PUSH)));
    expect({ code: err.code, message: err.message, details: err.details }).toStrictEqual({
      code: 'E_DENIED_BY_POLICY',
      message: 'held at CONFIRM but there is no approval channel: refused (fail safe)',
      details: { evaluation: ev },
    });
    expect(h.ran).toEqual([]);
  });

  it('a refusal without reason or approval id says "rejected" and details only the evaluation', async () => {
    const ev = evaluation('APPROVE');
    const { engine } = scriptedEngine([ev]);
    const { gate } = scriptedGate({ approved: false });
    const h = harness(engine, { gate });
    const err = await rejection(h.run(call('shell.exec', PUSH)));
    expect({ code: err.code, message: err.message, details: err.details }).toStrictEqual({
      code: 'E_REJECTED_BY_HUMAN',
      message: 'rejected',
      details: { evaluation: ev },
    });
    expect(h.ran).toEqual([]);
  });

  it('an approval whose edited arguments the engine denies is refused: nothing runs', async () => {
    const edited = { command: 'git push --force' };
    const denied = evaluation('DENY', { reasons: ['DENY: force push'], args: edited });
    const { engine } = scriptedEngine([evaluation('APPROVE')]);
    const { gate } = scriptedGate({ approved: true, args: edited, evaluation: denied });
    const h = harness(engine, { gate });
    const err = await rejection(h.run(call('shell.exec', PUSH)));
    expect({ code: err.code, message: err.message, details: err.details }).toStrictEqual({
      code: 'E_DENIED_BY_POLICY',
      message: 'denied by policy (permission): DENY: force push',
      details: { evaluation: denied },
    });
    expect(h.ran).toEqual([]);
  });

  it('a synchronous engine failure comes back as a rejected promise, not a throw', async () => {
    const engine: FirewallEvaluator = {
      evaluate: () => {
        throw new Error('policy store gone');
      },
      fileSha256: () => null,
    };
    const h = harness(engine);
    let p: Promise<unknown> | undefined;
    expect(() => (p = h.run(call('shell.exec', PUSH)))).not.toThrow();
    await expect(p).rejects.toThrow('policy store gone');
    expect(h.ran).toEqual([]);
  });
});

describe('holding again after an approval', () => {
  it('re-evaluates changed arguments without counting the call again, audits it, and refuses past max_holds with the last evaluation', async () => {
    const first = evaluation('APPROVE', { decision_id: 'dec-1' });
    const again = evaluation('APPROVE', { decision_id: 'dec-2' });
    const { engine, evaluated } = scriptedEngine([first, again]);
    // the answer binds other arguments than the ones about to run
    const { gate, shown } = scriptedGate({ approved: true, binding: { args_digest: digestOf({ command: 'ls' }) } });
    const h = harness(engine, { gate, max_holds: 1 });
    const err = await rejection(h.run(call('shell.exec', PUSH)));
    expect({ code: err.code, message: err.message, details: err.details }).toStrictEqual({
      code: 'E_REJECTED_BY_HUMAN',
      message: 'the call changed after approval 1 times: refused',
      details: { evaluation: again },
    });
    expect(evaluated).toStrictEqual([
      { args: PUSH, options: { lean: false } },
      { args: PUSH, options: { record: false } },
    ]);
    expect(shown.map((s) => s.ev)).toEqual([first]);
    expect(h.audited.map((r) => r.verdict)).toEqual([first, again]);
    expect(h.ran).toEqual([]);
  });

  it('arguments with no canonical digest are never run on an approval that binds arguments', async () => {
    const payload = { count: 1n };
    const { engine } = scriptedEngine([evaluation('APPROVE')]);
    const binding = { args_digest: argsDigest(payload) };
    const { gate, shown } = scriptedGate({ approved: true, binding }, { approved: true, binding });
    const h = harness(engine, { gate, max_holds: 2 });
    const err = await rejection(h.run(call('shell.exec', payload)));
    expect({ code: err.code, message: err.message }).toEqual({
      code: 'E_REJECTED_BY_HUMAN',
      message: 'the call changed after approval 2 times: refused',
    });
    expect(shown).toHaveLength(2);
    expect(h.ran).toEqual([]);
  });

  it('an approval of a call without arguments, bound to no arguments, runs it', async () => {
    const { engine } = scriptedEngine([evaluation('APPROVE')]);
    const { gate, shown } = scriptedGate({ approved: true, binding: { args_digest: argsDigest(undefined) } });
    const h = harness(engine, { gate });
    expect(await h.run(call('shell.exec', undefined))).toBe('ran');
    expect(h.ran).toEqual([undefined]);
    expect(shown).toHaveLength(1);
  });

  it('a file whose hash can no longer be read after the approval holds the call again', async () => {
    const args = { path: '/work/a.txt', content: 'new' };
    const { engine } = scriptedEngine([evaluation('APPROVE', { preview: diffPreview(SHA_A) })], {
      fileSha256: () => {
        throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
      },
    });
    const { gate, shown } = scriptedGate({ approved: true }, { approved: false, reason: 'changed my mind' });
    const h = harness(engine, { gate });
    const err = await rejection(h.run(call('fs.write', args)));
    expect({ code: err.code, message: err.message }).toEqual({
      code: 'E_REJECTED_BY_HUMAN',
      message: 'changed my mind',
    });
    expect(shown).toHaveLength(2);
    expect(h.ran).toEqual([]);
  });

  it('the file hash the approval bound wins over the preview’s: a file back at the preview’s hash is held again', async () => {
    const args = { path: '/work/a.txt', content: 'new' };
    const hashes: string[] = [];
    const { engine } = scriptedEngine([evaluation('APPROVE', { preview: diffPreview(SHA_A) })], {
      fileSha256: (p) => (hashes.push(p), SHA_A),
    });
    const { gate, shown } = scriptedGate(
      { approved: true, binding: { args_digest: digestOf(args), file_sha256: SHA_B } },
      { approved: false },
    );
    const h = harness(engine, { gate });
    expect((await rejection(h.run(call('fs.write', args)))).code).toBe('E_REJECTED_BY_HUMAN');
    expect(shown).toHaveLength(2);
    expect(hashes).toEqual(['/work/a.txt']);
    expect(h.ran).toEqual([]);
  });

  it('a file still at the hash the approval bound runs, whatever hash the preview had', async () => {
    const args = { path: '/work/a.txt', content: 'new' };
    const { engine } = scriptedEngine([evaluation('APPROVE', { preview: diffPreview(SHA_A) })], {
      fileSha256: () => SHA_B,
    });
    const { gate } = scriptedGate({ approved: true, binding: { args_digest: digestOf(args), file_sha256: SHA_B } });
    const h = harness(engine, { gate });
    expect(await h.run(call('fs.write', args))).toBe('ran');
    expect(h.ran).toEqual([args]);
  });

  it('an approved call whose verdict has no preview runs without a file recheck', async () => {
    const { engine } = scriptedEngine([evaluation('APPROVE')]);
    const { gate } = scriptedGate({ approved: true, binding: { args_digest: digestOf(PUSH) } });
    const h = harness(engine, { gate });
    expect(await h.run(call('shell.exec', PUSH))).toBe('ran');
    expect(h.ran).toEqual([PUSH]);
  });

  it('an approval that binds nothing does not hold (deny by default): held again, then refused; nothing runs', async () => {
    // the interceptor's former private check ran such an approval; production now runs the exported bindingHolds
    const { engine } = scriptedEngine([evaluation('APPROVE')]);
    const { gate, shown } = scriptedGate({ approved: true }, { approved: true }, { approved: true });
    const h = harness(engine, { gate });
    const err = await rejection(h.run(call('shell.exec', PUSH)));
    expect({ code: err.code, message: err.message }).toEqual({
      code: 'E_REJECTED_BY_HUMAN',
      message: 'the call changed after approval 3 times: refused',
    });
    expect(shown).toHaveLength(3);
    expect(h.ran).toEqual([]);
  });

  it('an approval without a file hash of a preview that showed one is checked against the preview’s hash', async () => {
    const args = { path: '/work/a.txt', content: 'new' };
    const { engine } = scriptedEngine([evaluation('APPROVE', { preview: diffPreview(SHA_A) })], {
      fileSha256: () => SHA_B,
    });
    const { gate, shown } = scriptedGate(
      { approved: true, binding: { args_digest: digestOf(args) } },
      { approved: false },
    );
    const h = harness(engine, { gate });
    expect((await rejection(h.run(call('fs.write', args)))).code).toBe('E_REJECTED_BY_HUMAN');
    expect(shown).toHaveLength(2);
    expect(h.ran).toEqual([]);
  });

  it('an approval that binds a file hash while the verdict names no file is held again: nothing says what to recheck', async () => {
    const { engine } = scriptedEngine([evaluation('APPROVE')]);
    const { gate, shown } = scriptedGate(
      { approved: true, binding: { args_digest: digestOf(PUSH), file_sha256: SHA_A } },
      { approved: false, reason: 'no' },
    );
    const h = harness(engine, { gate });
    expect((await rejection(h.run(call('shell.exec', PUSH)))).code).toBe('E_REJECTED_BY_HUMAN');
    expect(shown).toHaveLength(2);
    expect(h.ran).toEqual([]);
  });

  it('a preview that names a file but binds no hash of it runs without a file recheck', async () => {
    const hashes: string[] = [];
    const preview = { kind: 'args' as const, text: 'path: /work/notes.txt', path: '/work/notes.txt' };
    const { engine } = scriptedEngine([evaluation('APPROVE', { preview })], {
      fileSha256: (p) => (hashes.push(p), SHA_A),
    });
    const { gate, shown } = scriptedGate({
      approved: true,
      binding: { args_digest: digestOf({ path: '/work/notes.txt' }) },
    });
    const h = harness(engine, { gate });
    expect(await h.run(call('fs.read', { path: '/work/notes.txt' }))).toBe('ran');
    expect(shown).toHaveLength(1);
    expect(hashes).toEqual([]);
  });
});

describe('the call deadline while a person decides (fake Date clock)', () => {
  const T0 = 1_700_000_000_000;

  /** A call held at APPROVE; the gate's answer comes `heldMs` (of clock time) after the hold. */
  async function heldFor(heldMs: number, envelope: { deadline?: number; lease?: { expires_at: number } }) {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(T0);
    const { engine } = scriptedEngine([evaluation('APPROVE')]);
    const gate: FirewallGate = {
      hold: () => {
        vi.setSystemTime(Date.now() + heldMs);
        return Promise.resolve({ approved: true, binding: { args_digest: digestOf(PUSH) } });
      },
    };
    const c = call('shell.exec', PUSH);
    Object.assign(c.envelope, envelope);
    expect(await harness(engine, { gate }).run(c)).toBe('ran');
    return c.envelope;
  }

  it('moves the deadline and the lease expiry later by exactly the time the person took', async () => {
    const env = await heldFor(7_500, { deadline: T0 + 30_000, lease: { expires_at: T0 + 20_000 } });
    expect({ deadline: env.deadline, lease: env.lease }).toEqual({
      deadline: T0 + 37_500,
      lease: { expires_at: T0 + 27_500 },
    });
  });

  it('leaves the deadline and lease alone when the clock stepped back during the hold', async () => {
    const env = await heldFor(-5_000, { deadline: T0 + 30_000, lease: { expires_at: T0 + 20_000 } });
    expect({ deadline: env.deadline, lease: env.lease }).toEqual({
      deadline: T0 + 30_000,
      lease: { expires_at: T0 + 20_000 },
    });
  });

  it('gives a call without a deadline none', async () => {
    const env = await heldFor(7_500, { lease: { expires_at: T0 + 20_000 } });
    expect(env).not.toHaveProperty('deadline');
    expect(env.lease).toEqual({ expires_at: T0 + 27_500 });
  });
});

describe('the verdict cache path', () => {
  /** An engine whose cache answers per call object (`answers`), CACHED_ALLOW once they run out. */
  function cachingEngine(answers: Map<FirewallCall, (Evaluation | CachedAllow)[]>, verdict = evaluation('AUTO')) {
    const asked: { call: FirewallCall; confidence: number | undefined }[] = [];
    const { engine, evaluated } = scriptedEngine([verdict], {
      evaluateCached: (c, _tool, confidence) => {
        asked.push({ call: c, confidence });
        return answers.get(c)?.shift() ?? CACHED_ALLOW;
      },
    });
    return { engine, evaluated, asked };
  }

  it('with an audit log or auto_events every call is evaluated in full and recorded, never served from the cache', async () => {
    for (const over of [{}, { audit: undefined, auto_events: true }] as Partial<FirewallInterceptorOptions>[]) {
      const { engine, evaluated, asked } = cachingEngine(new Map());
      const h = harness(engine, over);
      expect(h.intercept.pass).toBeUndefined();
      expect(await h.run(call('shell.exec', PUSH))).toBe('ran');
      expect(asked).toEqual([]);
      expect(evaluated).toStrictEqual([{ args: PUSH, options: { lean: false } }]);
      expect(h.audited.length + h.events.all.length).toBe(1);
    }
  });

  it('without audit log or auto events a call the cache allows runs with its own arguments and no full evaluation', async () => {
    const { engine, evaluated, asked } = cachingEngine(new Map());
    const h = harness(engine, { audit: undefined, confidenceOf: () => 0.4 });
    const c = call('shell.exec', PUSH);
    expect(await h.run(c)).toBe('ran');
    expect(h.ran).toEqual([PUSH]);
    expect(asked).toEqual([{ call: c, confidence: 0.4 }]);
    expect(evaluated).toEqual([]);
  });

  it('a verdict pass() handed over is used once: the same call intercepted again asks the cache afresh', async () => {
    const c = call('shell.exec', PUSH);
    const { engine, asked } = cachingEngine(new Map([[c, [evaluation('APPROVE')]]]));
    const { gate, shown } = scriptedGate({ approved: false, reason: 'no' });
    const h = harness(engine, { audit: undefined, gate });
    expect(h.intercept.pass!(c)).toBe(false);
    expect((await rejection(h.run(c))).code).toBe('E_REJECTED_BY_HUMAN');
    expect(asked).toHaveLength(1);
    expect(await h.run(c)).toBe('ran');
    expect(asked).toHaveLength(2);
    expect(shown).toHaveLength(1);
  });

  it('a call in between does not use up the verdict pass() handed over for another call', async () => {
    const a = call('shell.exec', PUSH);
    const b = call('shell.exec', { command: 'ls' });
    const { engine, asked } = cachingEngine(new Map([[a, [evaluation('APPROVE')]]]));
    const { gate, shown } = scriptedGate({ approved: false, reason: 'no' });
    const h = harness(engine, { audit: undefined, gate });
    expect(h.intercept.pass!(a)).toBe(false);
    expect(await h.run(b)).toBe('ran');
    expect((await rejection(h.run(a))).code).toBe('E_REJECTED_BY_HUMAN');
    // a was asked about once, by pass(); b once, by the interceptor
    expect(asked.map((x) => x.call)).toEqual([a, b]);
    expect(shown.map((s) => s.args)).toEqual([PUSH]);
    expect(h.ran).toEqual([{ command: 'ls' }]);
  });
});
