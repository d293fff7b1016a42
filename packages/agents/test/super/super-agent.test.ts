import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { createGrantInterceptor, ToolGrantProfile } from '@finger/firewall';
import { MessageHub } from '@finger/hub';
import type { FingerEvent, Principal } from '@finger/protocol';

import { type Agent, type AgentContext, registerAgent, SuperAgent } from '../../src/index.js';

const ADMIN: Principal = { kind: 'human', id: 'admin', roles: ['admin'] };

/** A sub-agent whose handle is a function (the SuperAgent's collaborator under test). */
function fnAgent(id: string, role: string, handle: (input: unknown, ctx: AgentContext) => Promise<unknown>): Agent {
  return {
    id,
    role,
    init: () => Promise.resolve(),
    handle,
    health: () => ({ ok: true }),
    shutdown: () => Promise.resolve(),
  };
}

describe('SuperAgent', () => {
  let hub: MessageHub;
  let events: FingerEvent[];
  const grants = new ToolGrantProfile({
    extra: {
      planner: ['writer.handle', 'checker.handle'],
      'writer-role': ['checker.handle'],
      'checker-role': ['writer.handle'],
    },
  });

  const graph = {
    steps: [
      { id: 'draft', agent: 'writer' },
      { id: 'check', agent: 'checker', after: ['draft'] },
    ],
  };

  beforeEach(() => {
    events = [];
    hub = new MessageHub({ limits: { default_timeout_ms: 5000 } });
    hub.use(createGrantInterceptor(grants));
    hub.events.subscribe({}, (e) => events.push(e));
  });
  afterEach(() => hub.close(0));

  it('runs a two-step flow: each step a nested hub call as the SuperAgent, results passed along', async () => {
    const seen: { id: string; input: unknown; caller: Principal; chain: readonly string[] }[] = [];
    const record = (id: string, out: (input: { text: string; results: Record<string, unknown> }) => unknown) =>
      fnAgent(id, `${id}-role`, (input, ctx) => {
        seen.push({ id, input, caller: ctx.caller, chain: ctx.execution_chain });
        return Promise.resolve(out(input as { text: string; results: Record<string, unknown> }));
      });
    await registerAgent(
      hub,
      record('writer', (i) => ({ draft: i.text.toUpperCase() })),
    );
    await registerAgent(
      hub,
      record('checker', (i) => ({ approved: i.results.draft })),
    );
    await registerAgent(hub, new SuperAgent({ id: 'flow', role: 'planner', grants, graph }));
    const out = await hub.request({
      target: 'flow',
      payload: { text: 'plan a trip' },
      source: ADMIN,
      correlation_id: 'c',
    });
    expect(out).toEqual({
      status: 'completed',
      decision: 'direct_reply',
      reply: { approved: { draft: 'PLAN A TRIP' } },
      steps: {
        draft: { status: 'done', attempts: 1, result: { draft: 'PLAN A TRIP' } },
        check: { status: 'done', attempts: 1, result: { approved: { draft: 'PLAN A TRIP' } } },
      },
    });
    expect(seen.map((s) => [s.id, s.caller.id, s.chain])).toEqual([
      ['writer', 'flow', ['flow.handle', 'writer.handle']],
      ['checker', 'flow', ['flow.handle', 'checker.handle']],
    ]);
    expect(seen[1]?.input).toEqual({ text: 'plan a trip', results: { draft: { draft: 'PLAN A TRIP' } } });
    expect(events.filter((e) => e.correlation_id === 'c').map((e) => `${e.type}:${String(e.data.step)}`)).toEqual([
      'DISPATCH_SENT:draft',
      'DISPATCH_RESULT:draft',
      'DISPATCH_SENT:check',
      'DISPATCH_RESULT:check',
    ]);
  });

  it('sub-agents calling each other in a cycle: DEGRADED with E_CALL_CYCLE, ask_human, no hang', async () => {
    const calls: string[] = [];
    const ping = (id: string, other: string) =>
      fnAgent(id, `${id}-role`, (input, ctx) => {
        calls.push(id);
        return ctx.call(other, input);
      });
    await registerAgent(hub, ping('writer', 'checker'));
    await registerAgent(hub, ping('checker', 'writer'));
    await registerAgent(hub, new SuperAgent({ id: 'flow', role: 'planner', grants, graph }));
    const out = (await hub.request({
      target: 'flow',
      payload: { text: 'loop' },
      source: ADMIN,
      correlation_id: 'c',
    })) as {
      status: string;
      decision: string;
      error: { code: string };
      steps: Record<string, { status: string; attempts: number }>;
    };
    expect(out).toMatchObject({ status: 'degraded', decision: 'ask_human', error: { code: 'E_CALL_CYCLE' } });
    expect(out.steps).toMatchObject({
      draft: { status: 'failed', attempts: 1 },
      check: { status: 'pending', attempts: 0 },
    });
    expect(calls).toEqual(['writer', 'checker']); // the hub stopped checker → writer before it ran
    const degraded = events.filter((e) => e.type === 'DEGRADED');
    expect(degraded).toHaveLength(1);
    expect(degraded[0]).toMatchObject({
      correlation_id: 'c',
      data: { agent: 'flow', decision: 'ask_human', failed_step: 'draft', error: { code: 'E_CALL_CYCLE' } },
    });
  });

  it('a step that keeps failing is retried up to max_attempts, then degrades to direct_reply with the partial results', async () => {
    let checks = 0;
    await registerAgent(
      hub,
      fnAgent('writer', 'writer-role', () => Promise.resolve({ draft: 'ok' })),
    );
    await registerAgent(
      hub,
      fnAgent('checker', 'checker-role', () => {
        checks++;
        return Promise.reject(new Error('checker down'));
      }),
    );
    await registerAgent(hub, new SuperAgent({ id: 'flow', role: 'planner', grants, graph }));
    const out = await hub.request({ target: 'flow', payload: { text: 'x' }, source: ADMIN });
    expect(checks).toBe(2);
    expect(out).toMatchObject({
      status: 'degraded',
      decision: 'direct_reply',
      error: { code: 'E_MODULE_ERROR' },
      steps: { draft: { status: 'done' }, check: { status: 'failed', attempts: 2 } },
    });
    expect((out as { reply: string }).reply).toMatch(/^Finished draft; step "check" failed with E_MODULE_ERROR/);
  });

  it('a sub-agent the SuperAgent role is not granted: E_FORBIDDEN degrades at once', async () => {
    await registerAgent(
      hub,
      fnAgent('writer', 'writer-role', () => Promise.resolve(1)),
    );
    await registerAgent(
      hub,
      fnAgent('checker', 'checker-role', () => Promise.resolve(2)),
    );
    await registerAgent(hub, new SuperAgent({ id: 'flow', role: 'nobody', grants, graph }));
    await expect(hub.request({ target: 'flow', payload: {}, source: ADMIN })).resolves.toMatchObject({
      status: 'degraded',
      decision: 'ask_human',
      error: { code: 'E_FORBIDDEN' },
    });
  });
});
