import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import {
  executorDecision,
  type FakeLlmScript,
  startFakeLlmServer,
  startTestDaemon,
  type TestDaemon,
  waitFor,
} from '@finger/testkit';

// The breakers against a scripted agent: a real daemon running a supervised task whose model is
// the fake OpenAI-compatible server, the real pyworker module, the real firewall and audit log.

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const x of open.splice(0).reverse()) await x.close();
});

const decision = (d: Record<string, unknown>) => executorDecision(d, 'On it.');

async function setup(script: FakeLlmScript) {
  const llm = await startFakeLlmServer({ script });
  open.push(llm);
  const d: TestDaemon = await startTestDaemon({
    prepareHome: (_home, workspace) => mkdir(join(workspace, 'proj'), { recursive: true }).then(() => undefined),
    config: {
      log: { level: 'silent' },
      llm: { provider: 'openai', base_url: llm.openaiBaseUrl, model: 'fake', max_retries: 0 },
    },
  });
  open.push(d);
  return { d, llm, ws: join(d.workspace, 'proj') };
}

const until = <T>(what: string, fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> => waitFor(what, fn, ms, 25);

const taskIn = (d: TestDaemon, id: string, states: string[]) =>
  until(`task ${id} in ${states.join('|')}`, async () => {
    const r = await d.http<any>('GET', `/v1/tasks/${id}`);
    return states.includes(r.body.state) ? r.body : undefined;
  });

describe('breakers against a scripted agent (fake LLM server)', () => {
  it('a loop of identical failing calls: SYSTEM ALERT after the 3rd, terminated (E_LOOP_DETECTED) on the 4th', async () => {
    const failing = { tool: 'pyworker.fail', args: { code: 'E_MODULE_ERROR', message: 'disk on fire' } };
    const { d, llm, ws } = await setup(Array.from({ length: 8 }, () => decision({ tool_calls: [failing] })));
    const events = await d.events();
    await events.subscribe({ types: ['BREAKER_TRIPPED'] });
    const id = (await d.http<any>('POST', '/v1/tasks', { text: 'keep trying', workspace: ws })).body.id as string;
    const t = await taskIn(d, id, ['FAILED', 'STOPPED', 'COMPLETED', 'PAUSED', 'WAITING_HUMAN']);
    expect(t.state).toBe('FAILED');
    expect(JSON.stringify(t)).toContain('E_LOOP_DETECTED');
    // 4 model calls: the 4th prompt carries the alert; no 5th step
    expect(llm.requests).toHaveLength(4);
    expect(JSON.stringify(llm.requests[2]!.body)).not.toContain('SYSTEM ALERT');
    expect(JSON.stringify(llm.requests[3]!.body)).toContain('SYSTEM ALERT: you are repeating a failed action');
    await events.waitFor(
      (m) => m.filter((x) => x.type === 'event' && x.event.type === 'BREAKER_TRIPPED').length >= 2,
      '2 BREAKER_TRIPPED',
    );
    const trips = events.messages.filter((x) => x.type === 'event').map((x) => x.event.data);
    expect(trips.map((x) => [x.breaker, x.stage, x.failures])).toEqual([
      ['repeated_failure', 'alert', 3],
      ['repeated_failure', 'terminate', 4],
    ]);
    const audit = (await d.http<any>('GET', '/v1/audit?type=breaker.tripped')).body.entries;
    expect(audit.map((e: any) => [e.details.stage, e.decision, e.actor.id])).toEqual([
      ['alert', 'alert', `executor-${id}`],
      ['terminate', 'lockout', `executor-${id}`],
    ]);
    expect(audit[0].seq).toBeLessThan(audit[1].seq);
    await events.close();
  });

  it('a token-burning agent stops with E_BUDGET_EXHAUSTED before the call that would pass the budget is sent', async () => {
    const step = decision({ tool_calls: [{ tool: 'pyworker.echo', args: { n: 1 } }] });
    const { d, llm, ws } = await setup([
      { ...step, usage: { input_tokens: 1_000, output_tokens: 98_500 } },
      decision({ done: true, summary: 'never asked' }),
    ]);
    const id = (await d.http<any>('POST', '/v1/tasks', { text: 'burn tokens', workspace: ws })).body.id as string;
    const t = await taskIn(d, id, ['FAILED', 'STOPPED', 'COMPLETED', 'PAUSED', 'WAITING_HUMAN']);
    expect(t.state).toBe('FAILED');
    expect(JSON.stringify(t)).toContain('E_BUDGET_EXHAUSTED');
    expect(llm.requests).toHaveLength(1); // the second call was refused before it was sent
    const audit = (await d.http<any>('GET', '/v1/audit?type=breaker.tripped')).body.entries;
    expect(audit.at(-1).details).toMatchObject({ breaker: 'token_budget', scope: 'agent', used: 99_500 });
  });
});
