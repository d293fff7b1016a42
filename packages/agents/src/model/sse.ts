import { createParser, type EventSourceMessage } from 'eventsource-parser';

import { FingerError } from '@finger/protocol';

import { bodyChunks, MAX_RESPONSE_BYTES } from './model-http.js';
import { TransportError } from './retry.js';

/** One server-sent event: its `event:` name (undefined when absent) and `data:` text. */
export type SseEvent = EventSourceMessage;

/**
 * Reads a `text/event-stream` body and hands each event to `onEvent` in order. Parsing is
 * eventsource-parser's (spec-complete: multi-line data, comments, CRLF, split chunks); an event
 * buffer above 4 MiB, or a connection that breaks, throws TransportError; an abort propagates.
 * `onEvent` returning `'stop'` ends the read early (e.g. at `[DONE]`). A stream longer than
 * `maxTotal` characters (default 16 Mi) fails with E_LLM_UNAVAILABLE (not retried).
 */
export async function readSse(
  res: Response,
  signal: AbortSignal,
  onEvent: (event: SseEvent) => 'stop' | void,
  maxBufferSize = MAX_RESPONSE_BYTES,
  maxTotal = 4 * MAX_RESPONSE_BYTES,
): Promise<void> {
  let total = 0;
  const queue: SseEvent[] = [];
  let parseError: Error | undefined;
  const parser = createParser({
    onEvent: (e) => queue.push(e),
    onError: (err) => {
      if (err.type === 'max-buffer-size-exceeded') parseError = err;
    },
    maxBufferSize,
  });
  for await (const chunk of bodyChunks(res, signal)) {
    total += chunk.length;
    if (total > maxTotal) {
      throw new FingerError('E_LLM_UNAVAILABLE', `model stream longer than ${maxTotal} characters`, { max: maxTotal });
    }
    parser.feed(chunk);
    if (parseError) throw new TransportError(`model event stream: ${parseError.message}`, { cause: parseError });
    while (queue.length > 0) {
      if (onEvent(queue.shift() as SseEvent) === 'stop') return;
    }
  }
  // an event not closed by a blank line when the body ends is dropped (SSE spec)
}
