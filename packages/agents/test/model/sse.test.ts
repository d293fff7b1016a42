import { describe, expect, it } from 'vitest';

import { readSse, type SseEvent } from '../../src/model/sse.js';

/** A Response whose body arrives in exactly these pieces. */
function responseOf(pieces: string[]): Response {
  const enc = new TextEncoder();
  const stream = new ReadableStream<Uint8Array>({
    start(ctl) {
      for (const p of pieces) ctl.enqueue(enc.encode(p));
      ctl.close();
    },
  });
  return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
}

async function collect(pieces: string[], stopAt?: string): Promise<SseEvent[]> {
  const out: SseEvent[] = [];
  await readSse(responseOf(pieces), new AbortController().signal, (e) => {
    out.push(e);
    return e.data === stopAt ? 'stop' : undefined;
  });
  return out;
}

describe('readSse', () => {
  it('joins events split across chunks, multi-line data, CRLF, and skips comments', async () => {
    expect(
      await collect(['event: a\r\nda', 'ta: one\r\n\r\n: comment\n\ndata: x\n', 'data: y\n\n', 'data: last']),
    ).toEqual([
      { event: 'a', data: 'one', id: undefined },
      // an unterminated last event is dropped, as the SSE spec says
      { event: undefined, data: 'x\ny', id: undefined },
    ]);
  });

  it("stops early when onEvent says 'stop'", async () => {
    const events = await collect(['data: 1\n\ndata: [DONE]\n\ndata: after\n\n'], '[DONE]');
    expect(events.map((e) => e.data)).toEqual(['1', '[DONE]']);
  });

  it('an event larger than the buffer bound → TransportError', async () => {
    const big = `data: ${'x'.repeat(2000)}`;
    await expect(readSse(responseOf([big, big]), new AbortController().signal, () => undefined, 1000)).rejects.toThrow(
      /model event stream/,
    );
  });

  it('a stream longer than maxTotal → E_LLM_UNAVAILABLE', async () => {
    const pieces = Array.from({ length: 10 }, (_, i) => `data: ${i}${'y'.repeat(100)}\n\n`);
    await expect(
      readSse(responseOf(pieces), new AbortController().signal, () => undefined, 10_000, 500),
    ).rejects.toMatchObject({ code: 'E_LLM_UNAVAILABLE', details: { max: 500 } });
  });
});
