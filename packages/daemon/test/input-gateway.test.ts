import { describe, expect, it } from 'vitest';

import type { MessageHub } from '@finger/hub';
import { FingerError, type Principal } from '@finger/protocol';

import { InputGateway } from '../src/gateway/input-gateway.js';

const human: Principal = { kind: 'human', id: 'op', roles: ['operator'] };

/** The part of a hub the gateway uses: events recorded, `request` answering as told. */
function fakeHub(request: (p: { target: string }) => Promise<unknown>) {
  const events: { type: string; data: unknown }[] = [];
  const hub = {
    events: {
      emit: (type: string, _corr: unknown, data: unknown) => {
        events.push({ type, data });
        return {};
      },
    },
    resolveTarget: (target: string) => {
      if (target === 'nowhere') throw new FingerError('E_NO_TARGET', `no target ${target}`);
      return { tool_id: `${target}.${target}` };
    },
    request,
    dispatch: () => Promise.reject(new Error('not used')),
  };
  return { hub: hub as unknown as MessageHub, events };
}

/** What a promise settles with: its value, or the code of what it rejected with. */
async function outcome(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (v) => ({ value: v }),
    (e: unknown) => ({ code: (e as FingerError).code }),
  );
}

describe('InputGateway entry points', () => {
  it('answer every refusal as a rejected promise, never a throw: closed, bad /hub syntax, an unknown target, a hub that throws at once', async () => {
    const { hub, events } = fakeHub(() => {
      throw new FingerError('E_INVALID_ARGS', 'refused at once');
    });
    const gateway = new InputGateway({ hub });
    // each call returns (does not throw); what it returns rejects with the refusal's code
    const calls = [
      () => gateway.input(human, { text: '/hub target=' }),
      () => gateway.message(human, { target: 'nowhere' }),
      () => gateway.message(human, { target: 'echo', payload: {} }),
      () => gateway.tool(human, { tool: 'echo.echo', args: {} }),
    ];
    const answers: Promise<unknown>[] = [];
    for (const call of calls) {
      let p: Promise<unknown> | undefined;
      expect(() => (p = call())).not.toThrow();
      answers.push(outcome(p!));
    }
    expect(await Promise.all(answers)).toEqual([
      { code: 'E_BAD_HUB_SYNTAX' },
      { code: 'E_NO_TARGET' },
      { code: 'E_INVALID_ARGS' },
      { code: 'E_INVALID_ARGS' },
    ]);
    // a dispatch refused at once still ends with DISPATCH_RESULT
    expect(events.filter((e) => e.type === 'DISPATCH_RESULT').map((e) => e.data)).toEqual([
      { ok: false, error: expect.objectContaining({ code: 'E_NO_TARGET' }) },
      { ok: false, error: expect.objectContaining({ code: 'E_INVALID_ARGS' }) },
      { ok: false, error: expect.objectContaining({ code: 'E_INVALID_ARGS' }) },
    ]);

    gateway.close();
    const closed = [
      () => gateway.input(human, { text: '/hub target=echo {}' }),
      () => gateway.message(human, { target: 'echo' }),
      () => gateway.tool(human, { tool: 'echo.echo', args: {} }),
    ];
    for (const call of closed) {
      let p: Promise<unknown> | undefined;
      expect(() => (p = call())).not.toThrow();
      expect(await outcome(p!)).toEqual({ code: 'E_PROVIDER_CLOSED' });
    }
  });

  it('answers a blocking call with its result, and a call waiting when the gateway closes with E_PROVIDER_CLOSED', async () => {
    let release: (v: unknown) => void = () => {};
    const { hub, events } = fakeHub((p) =>
      p.target === 'slow' ? new Promise((resolve) => (release = resolve)) : Promise.resolve({ echoed: true }),
    );
    const gateway = new InputGateway({ hub });
    const ids: unknown[] = [];
    const done = await gateway.input(human, { text: '/hub target=echo {"a":1}' }, (x) => ids.push(x));
    expect(done).toEqual({
      status: 200,
      body: {
        request_id: expect.any(String),
        correlation_id: expect.any(String),
        status: 'succeeded',
        target: 'echo.echo',
        result: { echoed: true },
      },
    });
    expect(ids).toEqual([{ request_id: done.body.request_id, correlation_id: done.body.correlation_id }]);
    const waiting = outcome(gateway.message(human, { target: 'slow' }));
    gateway.close();
    release({ late: true });
    expect(await waiting).toEqual({ code: 'E_PROVIDER_CLOSED' });
    await new Promise((r) => setImmediate(r));
    // one DISPATCH_RESULT each: the call cut by close() reports E_PROVIDER_CLOSED, not its late answer
    expect(events.filter((e) => e.type === 'DISPATCH_RESULT').map((e) => e.data)).toEqual([
      { ok: true },
      { ok: false, error: expect.objectContaining({ code: 'E_PROVIDER_CLOSED' }) },
    ]);
  });

  it("routes text through the supervisor and answers the routed target's reply with the decision", async () => {
    const { hub } = fakeHub((p) =>
      p.target === 'router'
        ? Promise.resolve({ decision: 'dispatch', target: 'echo.echo', reply: { echoed: 'hi' } })
        : Promise.reject(new FingerError('E_NO_TARGET', 'no')),
    );
    const gateway = new InputGateway({ hub, supervisor: 'router' });
    const done = await gateway.input(human, { text: 'say hi' });
    expect(done).toEqual({
      status: 200,
      body: {
        request_id: expect.any(String),
        correlation_id: expect.any(String),
        status: 'succeeded',
        target: 'echo.echo',
        result: { echoed: 'hi' },
        route: { decision: 'dispatch', target: 'echo.echo' },
      },
    });
    const failing = new InputGateway({ hub, supervisor: 'elsewhere' });
    expect(await outcome(failing.input(human, { text: 'say hi' }))).toEqual({ code: 'E_NO_TARGET' });
  });
});
