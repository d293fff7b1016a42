import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { AuditRecord } from '@finger/firewall';
import { createGrantInterceptor, ToolGrantProfile } from '@finger/firewall';
import { MessageHub } from '@finger/hub';
import { FingerError, type FingerEvent, type Principal } from '@finger/protocol';

import { registerAgent, runGuardrail } from '../../src/index.js';
import { IngressSupervisorAgent } from '../../src/router/ingress-supervisor-agent.js';
import { RouterEngine } from '../../src/router/router-engine.js';
import { ScriptedModel, stubGuardrail } from './stubs.js';

const ECHO = fileURLToPath(new URL('../../../../modules/echo/module.json', import.meta.url));
const ADMIN: Principal = { kind: 'human', id: 'admin', roles: ['admin'] };

describe('IngressSupervisorAgent', () => {
  let hub: MessageHub;
  let events: FingerEvent[];
  let audit: AuditRecord[];

  async function supervisor(answers: string[], max_retries = 2): Promise<ScriptedModel> {
    const model = new ScriptedModel(answers);
    const engine = new RouterEngine({ model, guardrail: stubGuardrail, max_retries });
    const agent = new IngressSupervisorAgent({
      engine,
      grants: new ToolGrantProfile(),
      audit: { append: (r) => Promise.resolve(audit.push(r)) },
    });
    await registerAgent(hub, agent);
    return model;
  }

  const send = (text: string) =>
    hub.request({ target: 'supervisor', payload: { text }, source: ADMIN, correlation_id: 'corr', request_id: 'req' });

  beforeEach(async () => {
    events = [];
    audit = [];
    hub = new MessageHub();
    hub.use(createGrantInterceptor(new ToolGrantProfile()));
    await hub.registry.loadFile(ECHO, 'static');
    hub.events.subscribe({}, (e) => events.push(e));
  });
  afterEach(() => hub.close(0));

  it('dispatches to echo as the supervisor and answers with its reply; events in order under one correlation id', async () => {
    await supervisor([
      '{"decision":"dispatch_module","target":"echo","confidence":0.9,"reason":"echo asked","payload":{"text":"hi"},"repaired":true}',
    ]);
    const out = await send('say hi to echo');
    expect(out).toEqual({
      decision: 'dispatch_module',
      target: 'echo.echo',
      reply: { text: 'hi' },
      confidence: 0.9,
      reason: 'echo asked',
      requires_human: false,
      attempts: 1,
    });
    const routing = events.filter((e) => e.correlation_id === 'corr');
    expect(routing.map((e) => e.type)).toEqual(['ROUTE_DECIDED', 'JSON_REPAIRED', 'DISPATCH_SENT', 'DISPATCH_RESULT']);
    expect(routing[0]).toMatchObject({ request_id: 'req', target: 'echo.echo', data: { decision: 'dispatch_module' } });
    expect(routing[1]?.data).toEqual({
      attempt: 1,
      outcome: 'ok',
      repairs: [{ kind: 'syntax', before: 'x', after: 'y' }],
    });
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      type: 'route.decision',
      actor: { kind: 'human', id: 'admin' },
      request_id: 'req',
      correlation_id: 'corr',
      tool: 'echo.echo',
      decision: 'dispatch_module',
      details: {
        agent: 'supervisor',
        outcome: 'ok',
        provider: 'stub',
        attempts: [{ n: 1, outcome: 'ok', repairs: ['syntax'] }],
      },
    });
  });

  it('re-asks after an invalid enum and audits both attempts in one entry', async () => {
    const model = await supervisor([
      '{"decision":"Send","target":"echo","confidence":0.9}',
      '{"decision":"dispatch_module","target":"echo","confidence":0.9,"payload":{"n":1}}',
    ]);
    const out = await send('echo one');
    expect(out).toMatchObject({ reply: { n: 1 }, attempts: 2 });
    expect(model.requests).toHaveLength(2);
    expect(audit).toHaveLength(1);
    const attempts = (audit[0]!.details as { attempts: { outcome: string; reason_code?: string }[] }).attempts;
    expect(attempts.map((a) => [a.outcome, a.reason_code])).toEqual([
      ['ask_human', 'invalid_schema'],
      ['ok', undefined],
    ]);
  });

  it('never valid → ask_human after max_retries: nothing dispatched, ROUTE_FAILED says a person must decide', async () => {
    await supervisor(['not json at all']);
    const out = await send('???');
    expect(out).toMatchObject({ decision: 'ask_human', requires_human: true, reason_code: 'unparseable', attempts: 3 });
    const types = events.filter((e) => e.correlation_id === 'corr').map((e) => e.type);
    expect(types).toEqual(['ROUTE_DECIDED', 'ROUTE_FAILED']);
    expect(events.find((e) => e.type === 'ROUTE_FAILED')?.data).toMatchObject({ outcome: 'ask_human' });
  });

  it('a dispatch the model marks requires_human is not run: the caller gets a /hub suggestion', async () => {
    await supervisor([
      '{"decision":"dispatch_module","target":"echo","confidence":0.9,"payload":{"a":1},"requires_human":true}',
    ]);
    const out = await send('echo maybe');
    expect(out).toMatchObject({
      decision: 'ask_human',
      target: 'echo.echo',
      requires_human: true,
      suggestion: '/hub target=echo.echo {"a":1}',
    });
    expect(events.some((e) => e.type === 'DISPATCH_SENT')).toBe(false);
  });

  it('direct_reply answers with the payload text', async () => {
    await supervisor([
      '{"decision":"direct_reply","target":null,"confidence":1,"reason":"greeting","payload":{"text":"hello!"}}',
    ]);
    await expect(send('hi')).resolves.toMatchObject({ decision: 'direct_reply', target: null, reply: 'hello!' });
  });

  it('reject → E_ROUTE_FAILED with a ROUTE_FAILED event', async () => {
    await supervisor(['{"decision":"dispatch_module","target":"shell.exec","confidence":1}'], 0);
    await expect(send('rm -rf /')).rejects.toMatchObject({
      code: 'E_ROUTE_FAILED',
      details: { decision: 'reject', reason_code: 'unknown_target', attempts: 1 },
    });
    expect(events.filter((e) => e.correlation_id === 'corr').map((e) => e.type)).toEqual([
      'ROUTE_DECIDED',
      'ROUTE_FAILED',
    ]);
  });

  it('an audit log that cannot be written stops the routing before any dispatch', async () => {
    const model = new ScriptedModel(['{"decision":"dispatch_module","target":"echo","confidence":0.9}']);
    const agent = new IngressSupervisorAgent({
      engine: new RouterEngine({ model, guardrail: stubGuardrail }),
      grants: new ToolGrantProfile(),
      audit: { append: () => Promise.reject(new FingerError('E_STORE_UNAVAILABLE', 'disk full')) },
    });
    await registerAgent(hub, agent);
    await expect(send('say hi')).rejects.toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
    expect(events.some((e) => e.type === 'DISPATCH_SENT')).toBe(false);
  });

  describe('with the real guardrail', () => {
    async function real(answer: string): Promise<void> {
      const engine = new RouterEngine({ model: new ScriptedModel([answer]), guardrail: runGuardrail });
      await registerAgent(hub, new IngressSupervisorAgent({ engine, grants: new ToolGrantProfile() }));
    }

    it('a dispatch below min_confidence goes to a person: nothing runs, the /hub suggestion is given', async () => {
      await real(
        '{"decision":"dispatch_module","target":"echo","confidence":0.2,"payload":{"a":1},"requires_human":false}',
      );
      const out = await send('maybe echo');
      expect(out).toMatchObject({ decision: 'ask_human', requires_human: true, reason_code: 'low_confidence' });
      expect(events.some((e) => e.type === 'DISPATCH_SENT')).toBe(false);
    });

    it('a high-risk target the supervisor may reach is never dispatched without a person, whatever the model says', async () => {
      await hub.registry.register(
        {
          id: 'danger',
          name: 'danger',
          version: '1.0.0',
          kind: 'tool',
          runtime: { type: 'inprocess', entry: 'unused' },
          tools: [{ name: 'boom', description: 'Does something risky.', risk_level: 'high' }],
          grants: ['supervisor'],
        },
        {
          baseDir: '.',
          runtime: {
            type: 'test',
            start: () => Promise.resolve(),
            invoke: () => Promise.reject(new Error('must not run')),
            cancel: () => undefined,
            health: () => Promise.resolve({ ok: true }),
            close: () => Promise.resolve(),
          },
        },
      );
      await real(
        '{"decision":"dispatch_module","target":"danger","confidence":0.99,"payload":{},"requires_human":false}',
      );
      const out = await send('boom');
      expect(out).toMatchObject({
        target: 'danger.boom',
        requires_human: true,
        suggestion: '/hub target=danger.boom {}',
      });
      expect(events.some((e) => e.type === 'DISPATCH_SENT')).toBe(false);
    });
  });
});
