import { afterEach, describe, expect, it } from 'vitest';

import { FingerError } from '@finger/protocol';
import { type FakeLlmServer, startFakeLlmServer, waitUntil } from '@finger/testkit';

import { OpenAiAdapter } from '../../src/model/openai.js';
import {
  abortError,
  backoffDelay,
  HttpStatusError,
  parseRetryAfter,
  type SleepFn,
  withRetry,
} from '../../src/model/retry.js';

let server: FakeLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const messages = [{ role: 'user' as const, content: 'hello' }];

/** A sleep that records what it was asked for and returns at once. */
function recordingSleep(): { sleep: SleepFn; waits: number[] } {
  const waits: number[] = [];
  return {
    waits,
    sleep: async (ms) => {
      waits.push(ms);
    },
  };
}

function adapter(s: FakeLlmServer, extra: Partial<ConstructorParameters<typeof OpenAiAdapter>[0]> = {}) {
  return new OpenAiAdapter({ base_url: s.openaiBaseUrl, model: 'm', ...extra });
}

describe('parseRetryAfter', () => {
  const h = (init: Record<string, string>) => new Headers(init);
  it('reads seconds, ms (which take precedence) and HTTP dates', () => {
    expect(parseRetryAfter(h({ 'retry-after': '2' }))).toBe(2000);
    expect(parseRetryAfter(h({ 'retry-after': '0.5' }))).toBe(500);
    expect(parseRetryAfter(h({ 'retry-after-ms': '150', 'retry-after': '9' }))).toBe(150);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter(h({ 'retry-after': 'Thu, 01 Jan 2026 00:00:03 GMT' }), now)).toBe(3000);
    expect(parseRetryAfter(h({ 'retry-after': 'Wed, 31 Dec 2025 23:59:00 GMT' }), now)).toBe(0);
  });
  it('ignores absent, negative and unparseable values', () => {
    expect(parseRetryAfter(h({}))).toBeUndefined();
    expect(parseRetryAfter(h({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(parseRetryAfter(h({ 'retry-after': '-3' }))).toBeUndefined();
    expect(parseRetryAfter(h({ 'retry-after-ms': 'x', 'retry-after': '1' }))).toBe(1000);
  });
});

describe('backoffDelay (full jitter)', () => {
  it('is uniform below base·2^(n-1), capped', () => {
    expect(backoffDelay(1, 500, 8000, () => 0.5)).toBe(250);
    expect(backoffDelay(3, 500, 8000, () => 0.5)).toBe(1000);
    expect(backoffDelay(10, 500, 8000, () => 0.999)).toBe(7992);
    expect(backoffDelay(2, 500, 8000, () => 0)).toBe(0);
  });
});

describe('abortError', () => {
  it('maps a halt reason to E_HALTED, error codes to themselves and anything else to E_TIMEOUT', () => {
    expect(abortError('E_HALTED').code).toBe('E_HALTED');
    expect(abortError(new FingerError('E_HALTED', 'kill switch')).code).toBe('E_HALTED');
    expect(abortError('halt').code).toBe('E_HALTED');
    expect(abortError('E_TIMEOUT').code).toBe('E_TIMEOUT');
    expect(abortError(new DOMException('timed out', 'TimeoutError')).code).toBe('E_TIMEOUT');
    expect(abortError(undefined).code).toBe('E_TIMEOUT');
    expect(abortError('E_LEASE_EXPIRED').code).toBe('E_LEASE_EXPIRED');
    expect(abortError(new FingerError('E_SAFETY_LOCKOUT', 'locked')).code).toBe('E_SAFETY_LOCKOUT');
    expect(abortError('shutdown')).toMatchObject({ code: 'E_TIMEOUT', details: { reason: 'shutdown' } });
  });
});

describe('withRetry', () => {
  it('without retry-after waits the jittered backoff; non-retryable statuses fail at once', async () => {
    const { sleep, waits } = recordingSleep();
    let n = 0;
    const out = await withRetry(
      async () => {
        n++;
        if (n < 3) throw new HttpStatusError(503, new Headers(), '');
        return 'ok';
      },
      { max_retries: 5, max_retry_wait_ms: 60_000, sleep, random: () => 0.5 },
    );
    expect(out).toEqual({ value: 'ok', attempts: 3 });
    expect(waits).toEqual([250, 500]);
    await expect(
      withRetry(
        async () => {
          throw new HttpStatusError(401, new Headers(), 'bad key');
        },
        { max_retries: 5, max_retry_wait_ms: 60_000, sleep },
      ),
    ).rejects.toMatchObject({ code: 'E_LLM_UNAVAILABLE', details: { status: 401, attempts: 1 } });
  });
});

describe('transport retries against the fake server', () => {
  it('429 with retry-after: 2 → asked to sleep exactly 2000 ms, then succeeds', async () => {
    server = await startFakeLlmServer({
      script: [{ kind: 'status', status: 429, headers: { 'retry-after': '2' } }, { text: 'ok' }],
    });
    const { sleep, waits } = recordingSleep();
    const result = await adapter(server, { sleep, random: () => 0.99 }).complete({ messages });
    expect(waits).toEqual([2000]);
    expect(result).toMatchObject({ text: 'ok', attempts: 2 });
    expect(server.requests).toHaveLength(2);
  });

  it('retry-after-ms takes precedence over retry-after', async () => {
    server = await startFakeLlmServer({
      script: [
        { kind: 'status', status: 429, headers: { 'retry-after-ms': '1200', 'retry-after': '30' } },
        { text: 'ok' },
      ],
    });
    const { sleep, waits } = recordingSleep();
    await adapter(server, { sleep }).complete({ messages });
    expect(waits).toEqual([1200]);
  });

  it('real clock: 429 with retry-after: 2 is waited for and the retry succeeds', async () => {
    server = await startFakeLlmServer({
      script: [{ kind: 'status', status: 429, headers: { 'retry-after': '2' } }, { text: 'after the wait' }],
    });
    const result = await adapter(server).complete({ messages });
    expect(result).toMatchObject({ text: 'after the wait', attempts: 2 });
    expect(server.requests).toHaveLength(2);
  });

  it('retry-after above max_retry_wait_ms → E_LLM_UNAVAILABLE at once, exactly one request', async () => {
    server = await startFakeLlmServer({
      script: [{ kind: 'status', status: 429, headers: { 'retry-after': '120' } }, { text: 'never' }],
    });
    const { sleep, waits } = recordingSleep();
    await expect(adapter(server, { sleep, max_retry_wait_ms: 60_000 }).complete({ messages })).rejects.toMatchObject({
      code: 'E_LLM_UNAVAILABLE',
      details: { status: 429, retry_after_ms: 120_000, max_retry_wait_ms: 60_000, attempts: 1 },
    });
    expect(waits).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it('retries exhausted → E_LLM_UNAVAILABLE after max_retries + 1 requests', async () => {
    server = await startFakeLlmServer({ script: () => ({ kind: 'status', status: 500 }) });
    const { sleep, waits } = recordingSleep();
    await expect(adapter(server, { sleep, max_retries: 3 }).complete({ messages })).rejects.toMatchObject({
      code: 'E_LLM_UNAVAILABLE',
      details: { status: 500, attempts: 4 },
    });
    expect(server.requests).toHaveLength(4);
    expect(waits).toHaveLength(3);
  });

  it('408 and 409 are retried; a connection reset is retried', async () => {
    server = await startFakeLlmServer({
      script: [{ kind: 'status', status: 408 }, { kind: 'status', status: 409 }, { kind: 'reset' }, { text: 'ok' }],
    });
    const result = await adapter(server, { sleep: recordingSleep().sleep, max_retries: 3 }).complete({ messages });
    expect(result).toMatchObject({ text: 'ok', attempts: 4 });
  });

  it('an unreachable endpoint → E_LLM_UNAVAILABLE after the retries', async () => {
    const s = await startFakeLlmServer();
    const url = s.openaiBaseUrl;
    await s.close();
    const { sleep } = recordingSleep();
    await expect(new OpenAiAdapter({ base_url: url, model: 'm', sleep }).complete({ messages })).rejects.toMatchObject({
      code: 'E_LLM_UNAVAILABLE',
      details: { attempts: 3 },
    });
  });
});

describe('aborts and deadlines', () => {
  it('a halt while the server hangs → E_HALTED', async () => {
    server = await startFakeLlmServer({ script: [{ kind: 'hang' }] });
    const ctl = new AbortController();
    const call = adapter(server).complete({ messages }, { signal: ctl.signal });
    const s = server;
    await waitUntil('the fake LLM server to receive the request', () => s.requests.length > 0, 10_000, 5);
    ctl.abort('E_HALTED');
    await expect(call).rejects.toMatchObject({ code: 'E_HALTED' });
  });

  it('a caller abort with another reason → E_TIMEOUT', async () => {
    server = await startFakeLlmServer({ script: [{ kind: 'hang' }] });
    const ctl = new AbortController();
    const call = adapter(server).complete({ messages, stream: true }, { signal: ctl.signal });
    const s = server;
    await waitUntil('the fake LLM server to receive the request', () => s.requests.length > 0, 10_000, 5);
    ctl.abort('deadline');
    await expect(call).rejects.toMatchObject({ code: 'E_TIMEOUT' });
  });

  it('a halt during a retry wait → E_HALTED, no further request', async () => {
    server = await startFakeLlmServer({
      script: [{ kind: 'status', status: 429, headers: { 'retry-after': '30' } }, { text: 'never' }],
    });
    const ctl = new AbortController();
    const sleep: SleepFn = (_ms, signal) =>
      new Promise((_resolve, reject) => {
        signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
        ctl.abort(new FingerError('E_HALTED', 'kill switch'));
      });
    await expect(adapter(server, { sleep }).complete({ messages }, { signal: ctl.signal })).rejects.toMatchObject({
      code: 'E_HALTED',
    });
    expect(server.requests).toHaveLength(1);
  });

  it('timeout_ms covers a slow stream → E_TIMEOUT with details.timeout_ms', async () => {
    server = await startFakeLlmServer({
      script: [{ text: 'slow slow slow slow', chunk_delay_ms: 400 }],
    });
    await expect(adapter(server, { timeout_ms: 150 }).complete({ messages, stream: true })).rejects.toMatchObject({
      code: 'E_TIMEOUT',
      details: { timeout_ms: 150 },
    });
  });

  it('an already aborted signal sends nothing', async () => {
    server = await startFakeLlmServer({ script: [{ text: 'x' }] });
    await expect(
      adapter(server).complete({ messages }, { signal: AbortSignal.abort('E_HALTED') }),
    ).rejects.toMatchObject({ code: 'E_HALTED' });
    expect(server.requests).toHaveLength(0);
  });
});
