import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { type Envelope, type ErrorInfo, FingerError } from '@finger/protocol';

import { createModuleHandler, InProcessTransport } from '../../src/index.js';
import { silentLogger } from '../../src/logger.js';
import { InProcessRuntime } from '../../src/runtime/in-process.js';
import type { DirectSink } from '../../src/transport/reply-sink.js';
import type { Canceller } from '../../src/transport/transport.js';
import { human, ObjectRuntime } from '../helpers.js';

function request(target: string, payload: unknown): Envelope {
  return {
    id: '01JTESTREQUEST000000000000',
    kind: 'request',
    request_id: '01JTESTREQUEST000000000000',
    correlation_id: '01JTESTREQUEST000000000000',
    session_id: '',
    workflow_id: '',
    source: human,
    target,
    blocking: true,
    timestamp: '2026-11-29T10:00:00.000Z',
    deadline: Date.now() + 60_000,
    execution_chain: [],
    nesting_depth: 0,
    payload,
  };
}

/** A sink recording what the transport tells it, and whether it was told from inside deliver(). */
class RecordingSink implements DirectSink {
  canceller?: Canceller;
  inside = false;
  told: { how: 'answer' | 'reply' | 'failed'; inside: boolean; value: unknown; error?: ErrorInfo }[] = [];
  private settled!: () => void;
  readonly done = new Promise<void>((resolve) => (this.settled = resolve));

  onAnswer(payload: unknown, error: ErrorInfo | undefined): void {
    this.told.push({ how: 'answer', inside: this.inside, value: payload, ...(error ? { error } : {}) });
    this.settled();
  }
  onReply(reply: Envelope): void {
    this.told.push({ how: 'reply', inside: this.inside, value: reply });
    this.settled();
  }
  onFailed(e: unknown): void {
    this.told.push({ how: 'failed', inside: this.inside, value: e });
    this.settled();
  }
}

async function deliver(t: InProcessTransport, env: Envelope): Promise<RecordingSink> {
  const sink = new RecordingSink();
  sink.inside = true;
  t.deliver(env, sink);
  sink.inside = false;
  await sink.done;
  return sink;
}

const tools = {
  echo: (args: unknown) => args,
  nothing: () => undefined,
  fails: () => {
    throw new FingerError('E_FORBIDDEN', 'not you', { who: 'tester' });
  },
};

async function served(copy: 'none' | 'json'): Promise<InProcessTransport> {
  const t = new InProcessTransport({ copy });
  await t.serve(
    'mod',
    createModuleHandler('mod', new ObjectRuntime({ tools }), () => Promise.resolve(null)),
  );
  return t;
}

describe('InProcessTransport.deliver', () => {
  it("hands a module host's result and error to onAnswer as they are (copy none), never from inside deliver()", async () => {
    const t = await served('none');
    const payload = { text: 'hi' };
    const ok = await deliver(t, request('mod.echo', payload));
    expect(ok.told).toEqual([{ how: 'answer', inside: false, value: payload }]);
    expect(ok.told[0]!.value).toBe(payload); // not copied
    expect(ok.canceller).toBeDefined();

    const none = await deliver(t, request('mod.nothing', {}));
    expect(none.told).toEqual([{ how: 'answer', inside: false, value: null }]);

    const failed = await deliver(t, request('mod.fails', {}));
    expect(failed.told).toHaveLength(1);
    expect(failed.told[0]).toMatchObject({ how: 'answer', inside: false, value: null });
    expect(failed.told[0]!.error).toMatchObject({
      code: 'E_FORBIDDEN',
      message: 'not you',
      details: { who: 'tester' },
    });

    const unknown = await deliver(t, request('mod.missing', {}));
    expect(unknown.told[0]!.error?.code).toBe('E_NO_TARGET');
  });

  it('names the right tool for every target, also past the 1,024 targets whose tool names it keeps', async () => {
    const t = await served('none');
    for (let i = 0; i < 1100; i++) {
      const sink = await deliver(t, request(`mod.tool${i}`, {}));
      expect(sink.told[0]!.error).toMatchObject({ code: 'E_NO_TARGET', message: `no tool tool${i}` });
    }
    const again = await deliver(t, request('mod.tool5', {}));
    expect(again.told[0]!.error).toMatchObject({ code: 'E_NO_TARGET', message: 'no tool tool5' });
    expect((await deliver(t, request('mod.echo', 'hi'))).told).toEqual([{ how: 'answer', inside: false, value: 'hi' }]);
  });

  it('answers with a reply envelope when envelopes are copied (copy json), with the same outcome', async () => {
    const t = await served('json');
    const ok = await deliver(t, request('mod.echo', { text: 'hi' }));
    expect(ok.told).toHaveLength(1);
    expect(ok.told[0]).toMatchObject({
      how: 'reply',
      inside: false,
      value: { kind: 'reply', payload: { text: 'hi' } },
    });
    const failed = await deliver(t, request('mod.fails', {}));
    expect(failed.told[0]).toMatchObject({ how: 'reply', value: { payload: null, error: { code: 'E_FORBIDDEN' } } });
  });

  it('passes a plain handler’s reply envelope to onReply and its rejection to onFailed', async () => {
    const t = new InProcessTransport();
    await t.serve('plain', (req) =>
      req.target === 'plain.ok'
        ? Promise.resolve({ ...req, kind: 'reply', payload: 'fine' })
        : Promise.reject(new FingerError('E_TIMEOUT', 'too slow')),
    );
    const ok = await deliver(t, request('plain.ok', {}));
    expect(ok.told).toMatchObject([{ how: 'reply', inside: false, value: { kind: 'reply', payload: 'fine' } }]);
    const failed = await deliver(t, request('plain.late', {}));
    expect(failed.told).toHaveLength(1);
    expect(failed.told[0]).toMatchObject({ how: 'failed', inside: false });
    expect((failed.told[0]!.value as FingerError).code).toBe('E_TIMEOUT');
  });

  it('fails a target nobody serves with E_NO_TARGET through onFailed, from a microtask', async () => {
    const t = await served('none');
    const sink = await deliver(t, request('other.echo', {}));
    expect(sink.told).toHaveLength(1);
    expect(sink.told[0]).toMatchObject({ how: 'failed', inside: false });
    expect((sink.told[0]!.value as FingerError).code).toBe('E_NO_TARGET');
    expect(sink.canceller).toBeUndefined();
  });
});

describe('InProcessTransport.deliver to an in-process runtime (invokeNow)', () => {
  const FIXTURES = fileURLToPath(new URL('../fixtures/', import.meta.url));

  async function fixture(copy: 'none' | 'json'): Promise<InProcessTransport> {
    const runtime = new InProcessRuntime({
      manifest: {
        id: 'fx',
        name: 'fx',
        version: '0.1.0',
        kind: 'tool',
        runtime: { type: 'inprocess', entry: 'inprocess-object.ts' },
        tools: [{ name: 'echo', description: 'echo' }],
      },
      baseDir: FIXTURES,
      logger: silentLogger,
    });
    await runtime.start();
    const t = new InProcessTransport({ copy });
    await t.serve(
      'fx',
      createModuleHandler('fx', runtime, () => Promise.resolve(null)),
    );
    return t;
  }

  it('answers at once-answering, async, throwing and unknown tools as the reply envelope does', async () => {
    const direct = await fixture('none');
    const enveloped = await fixture('json');
    const cases: [string, unknown][] = [
      ['fx.echo', { text: 'hi' }],
      ['fx.async_echo', { text: 'later' }],
      ['fx.boom', {}],
      ['fx.async_boom', {}],
      ['fx.throw_string', {}],
      ['fx.forbidden', {}],
      ['fx.async_forbidden', {}],
      ['fx.missing', {}],
    ];
    const codes: Record<string, string | undefined> = {};
    for (const [target, payload] of cases) {
      const a = await deliver(direct, request(target, payload));
      const r = await deliver(enveloped, request(target, payload));
      expect(a.told).toHaveLength(1);
      expect(a.told[0]!.how).toBe('answer');
      expect(a.told[0]!.inside).toBe(false);
      const reply = r.told[0]!.value as Envelope;
      expect(a.told[0]!.value).toEqual(reply.payload);
      expect(a.told[0]!.error).toEqual(reply.error);
      codes[target] = a.told[0]!.error?.code;
    }
    expect(codes).toEqual({
      'fx.echo': undefined,
      'fx.async_echo': undefined,
      'fx.boom': 'E_MODULE_ERROR',
      'fx.async_boom': 'E_MODULE_ERROR',
      'fx.throw_string': 'E_MODULE_ERROR',
      'fx.forbidden': 'E_FORBIDDEN',
      'fx.async_forbidden': 'E_INVALID_ARGS',
      'fx.missing': 'E_NO_TARGET',
    });
  });

  it('gives every answer of a turn, in order, after deliver() returned, also one delivered while answers are given', async () => {
    const t = await fixture('none');
    const order: number[] = [];
    const sinks = Array.from({ length: 5 }, (_, i) => {
      const sink = new RecordingSink();
      void sink.done.then(() => order.push(i));
      return sink;
    });
    // the first sink's answer delivers one more request, from inside the pass that gives answers
    const late = new RecordingSink();
    const first = sinks[0]!;
    const onAnswer = first.onAnswer.bind(first);
    first.onAnswer = (payload, error) => {
      onAnswer(payload, error);
      late.inside = true;
      t.deliver(request('fx.echo', 'late'), late);
      late.inside = false;
    };
    for (const [i, sink] of sinks.entries()) {
      sink.inside = true;
      t.deliver(request('fx.echo', i), sink);
      sink.inside = false;
    }
    expect(sinks.every((s) => s.told.length === 0)).toBe(true);
    await Promise.all([...sinks.map((s) => s.done), late.done]);
    expect(sinks.map((s) => s.told)).toEqual([0, 1, 2, 3, 4].map((i) => [{ how: 'answer', inside: false, value: i }]));
    expect(late.told).toEqual([{ how: 'answer', inside: false, value: 'late' }]);
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });
});
