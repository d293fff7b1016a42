import type { ServeScope } from './nats-wire.js';
/**
 * Batches over NATS: every request a process makes to one module in one turn of the event loop
 * leaves as one NATS message — one frame, one MAC over the whole body, one nats.js publish — to
 * the module's queue subject, so one replica takes the whole batch; the replies a process
 * finishes for one caller in one turn leave the same way.
 *
 * The body of a `request` or `reply` frame is one line per envelope, `<token> <envelope JSON>`
 * (the JSON of nats-envelope.ts, which never holds a raw newline), lines separated by `\n`. The
 * token names the request's reply subject, `<inbox>.<token>`; a batch goes to the reply subject
 * of its first envelope, whose inbox (the subject without its last token) the others share. A
 * batch of one is one line.
 */

/**
 * Most envelopes in one batch (a batch is also split before it would pass max_payload). Small
 * enough that 100 calls in flight travel as a few frames, so caller, NATS server and serving
 * process work on different frames at once instead of in lockstep (32 against 128: +8% calls/s
 * at c100 in bench/hub-nats, same CPU per call); large enough that the frame's fixed costs
 * (MAC, publish, delivery) stay small per call.
 */
export const MAX_BATCH = 32;
/** Most lines a received batch may have (whatever the sender's batch size). */
const MAX_LINES = 1024;

/** Longest token (a reply subject's last part: random, see ReplyTokens in nats.ts). */
const MAX_TOKEN = 16;

/**
 * Whether `text[from, to)` is a token: 1–16 of `[0-9a-z]` (a loop, not a regular expression: less
 * code on a lone call's cold path).
 */
function isToken(text: string, from: number, to: number): boolean {
  if (to <= from || to - from > MAX_TOKEN) return false;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x7a))) return false;
  }
  return true;
}

/** Requests to one module, or replies to one caller, waiting for the end of the turn. */
export class WireBatch {
  /** Lines of the body, `<token> <json>`. */
  readonly lines: string[] = [];
  /** Tokens of the envelopes, in order (the first names the NATS subject of a reply batch). */
  readonly tokens: string[] = [];
  /** UTF-8 bytes of the body so far (lines and newlines). */
  bytes = 0;

  constructor(
    /** The module's call subject, or the caller's inbox (with its trailing dot). */
    readonly subject: string,
    /** Whom the frame's serve signature is for (nats-wire.ts). */
    readonly forServe: ServeScope,
  ) {}

  /** Bytes of the body once a line of `lineBytes` is added. */
  bytesWith(lineBytes: number): number {
    return this.lines.length === 0 ? lineBytes : this.bytes + 1 + lineBytes;
  }

  add(token: string, line: string, lineBytes: number): void {
    this.bytes = this.bytesWith(lineBytes);
    this.lines.push(line);
    this.tokens.push(token);
  }

  /**
   * The body, once: the lines are let go (a batch is still reachable from the outgrown backing
   * store of the Map that held it, which the scavenger treats as live until a full GC).
   */
  body(): string {
    const body = this.lines.length === 1 ? this.lines[0]! : this.lines.join('\n');
    this.lines.length = 0;
    return body;
  }
}

/** One envelope of a received batch: its token and its JSON text. */
export interface BatchPart {
  token: string;
  json: string;
}

/**
 * The parts of a received batch body (its bytes, or its text already decoded), or undefined when
 * a line has no valid token (the whole frame is then dropped: its lines cannot all be answered).
 * The body is decoded from UTF-8 once and cut into lines as strings (a newline byte never occurs
 * inside a multi-byte UTF-8 sequence, so this is the per-line decoding's result): one decode per
 * frame instead of a Buffer view, a token decode and a JSON decode per line.
 */
export function parseBatch(body: Buffer | string): BatchPart[] | undefined {
  const text = typeof body === 'string' ? body : body.toString('utf8');
  const parts: BatchPart[] = [];
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const sp = text.indexOf(' ', start);
    if (sp < 0 || sp >= end) return undefined;
    if (!isToken(text, start, sp)) return undefined;
    const token = text.slice(start, sp);
    parts.push({ token, json: text.slice(sp + 1, end) });
    if (parts.length > MAX_LINES) return undefined;
    start = end + 1;
  }
  return parts;
}

/**
 * The inbox of a batch's NATS reply subject (everything up to and with its last dot). A loop from
 * the end: the token is a few characters, and `lastIndexOf` is a runtime call (on every request).
 */
export function inboxOf(reply: string): string | undefined {
  let dot = reply.length - 1;
  while (dot > 0 && reply.charCodeAt(dot) !== 0x2e) dot--;
  return dot > 0 ? reply.slice(0, dot + 1) : undefined;
}
