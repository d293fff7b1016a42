import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { type AgentContext, type AgentOutcome, type AgentTurn, BaseAgent, registerAgent } from '@finger/agents';
import { createGrantInterceptor, ToolGrantProfile } from '@finger/firewall';
import { type HubCall, MessageHub } from '@finger/hub';
import type { Principal } from '@finger/protocol';

const ECHO = fileURLToPath(new URL('../../../../modules/echo/module.json', import.meta.url));
const ADMIN: Principal = { kind: 'human', id: 'admin', roles: ['admin'] };

interface Probe {
  target: string | null;
  fail?: 'decide' | 'act';
}

/** Records the template's steps; dispatches to `decision.target` through its context. */
class ProbeAgent extends BaseAgent<Probe, unknown> {
  steps: string[] = [];
  turns: AgentTurn[] = [];
  constructor(
    role: string,
    private readonly plan: Probe,
    grants?: ToolGrantProfile,
  ) {
    super({ id: 'probe', role, ...(grants ? { grants } : {}) });
  }
  protected override decide(turn: AgentTurn): Promise<Probe> {
    this.steps.push('decide');
    this.turns.push(turn);
    if (this.plan.fail === 'decide') return Promise.reject(new Error('decide broke'));
    return Promise.resolve(this.plan);
  }
  protected override async act(d: Probe, _turn: AgentTurn, ctx: AgentContext): Promise<AgentOutcome<unknown>> {
    this.steps.push('act');
    if (this.plan.fail === 'act') throw new Error('act broke');
    const result = d.target === null ? 'no target' : await ctx.call(d.target, { text: 'hi' });
    return { result, event: { type: 'DISPATCH_RESULT', data: { ok: true } }, record: { decision: 'x', outcome: 'ok' } };
  }
  protected override onError(error: unknown, turn: AgentTurn | undefined): Promise<unknown> {
    this.steps.push(`onError:${turn === undefined ? 'no-turn' : 'turn'}`);
    return Promise.reject(error);
  }
}

describe('BaseAgent + registerAgent', () => {
  let hub: MessageHub;
  let seen: HubCall[];
  const grants = new ToolGrantProfile();

  beforeEach(async () => {
    seen = [];
    hub = new MessageHub();
    hub.use(createGrantInterceptor(grants));
    hub.use((call, next) => {
      seen.push(call);
      return next();
    });
    await hub.registry.loadFile(ECHO, 'static');
  });
  afterEach(() => hub.close(0));

  it('runs decide → validate → act → emitEvent, the nested call as the agent principal under the caller chain', async () => {
    const agent = new ProbeAgent('supervisor', { target: 'echo' }, grants);
    const info = await registerAgent(hub, agent);
    expect(info).toMatchObject({ id: 'probe', kind: 'agent', tools: [{ name: 'handle' }] });
    const events: string[] = [];
    hub.events.subscribe({}, (e) => events.push(`${e.type}:${e.correlation_id}`));
    const out = await hub.request({ target: 'probe', payload: { text: 'go' }, source: ADMIN, correlation_id: 'c1' });
    expect(out).toEqual({ text: 'hi' });
    expect(agent.steps).toEqual(['decide', 'act']);
    expect(events).toContain('DISPATCH_RESULT:c1');
    const [toAgent, toEcho] = seen;
    expect(toAgent?.envelope.source).toEqual(ADMIN);
    expect(toEcho?.envelope).toMatchObject({
      source: { kind: 'agent', id: 'probe', roles: ['agent:supervisor'] },
      target: 'echo.echo',
      correlation_id: 'c1',
      execution_chain: ['probe.handle'],
      nesting_depth: 1,
    });
    const turn = agent.turns[0]!;
    expect(turn.text).toBe('go');
    expect(turn.reach).toEqual({ tool_ids: ['echo.echo'], agents: [], modules: ['echo'], high_risk: [] });
    expect(turn.snapshot.tools.map((t) => t.id)).toEqual(['echo.echo']);
  });

  it('remembers turns per session and shows them in the next turn', async () => {
    const agent = new ProbeAgent('supervisor', { target: null }, grants);
    await registerAgent(hub, agent);
    await hub.request({ target: 'probe', payload: { text: 'one' }, source: ADMIN, session_id: 's' });
    await hub.request({ target: 'probe', payload: { text: 'two' }, source: ADMIN, session_id: 's' });
    expect(agent.turns[1]?.session_summary).toBe('"one" → x (ok)');
    expect(agent.turns[1]?.feedback).toEqual([]);
    // another caller with the same session id sees none of it
    const other: Principal = { kind: 'human', id: 'op', roles: ['operator'] };
    await hub.request({ target: 'probe', payload: { text: 'three' }, source: other, session_id: 's' });
    expect(agent.turns[2]?.session_summary).toBe('');
  });

  it('validate refuses a target the role may not reach with E_FORBIDDEN, before act', async () => {
    const agent = new ProbeAgent('nobody', { target: 'echo' }, grants);
    await registerAgent(hub, agent);
    await expect(hub.request({ target: 'probe', payload: {}, source: ADMIN })).rejects.toMatchObject({
      code: 'E_FORBIDDEN',
    });
    expect(agent.steps).toEqual(['decide', 'onError:turn']);
    expect(seen.map((c) => c.envelope.target)).toEqual(['probe.handle']);
  });

  it('a decide failure goes to onError and reaches the caller as E_MODULE_ERROR', async () => {
    const agent = new ProbeAgent('supervisor', { target: 'echo', fail: 'decide' }, grants);
    await registerAgent(hub, agent);
    await expect(hub.request({ target: 'probe', payload: {}, source: ADMIN })).rejects.toMatchObject({
      code: 'E_MODULE_ERROR',
      message: 'decide broke',
    });
    expect(agent.steps).toEqual(['decide', 'onError:turn']);
  });

  it('a second agent with the same id is refused with E_CONFLICT', async () => {
    await registerAgent(hub, new ProbeAgent('supervisor', { target: null }));
    await expect(registerAgent(hub, new ProbeAgent('supervisor', { target: null }))).rejects.toMatchObject({
      code: 'E_CONFLICT',
    });
  });
});
