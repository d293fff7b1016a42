/**
 * What a model reply means beyond its text, shared by the adapters and their callers: why the
 * model stopped (a cut, a refusal, the provider's content filter), native tool calls rendered as
 * the JSON text the guardrails read, and provider messages made safe to show. Pure functions.
 */
import type { ModelResult, ModelToolCall } from './model-adapter.js';

/**
 * How a reply ended: `complete` (the model finished: `stop`, `end_turn`, `tool_calls`, … or no
 * reason reported), `truncated` (the text is not the whole answer: the token limit — `length`,
 * `max_tokens`, `model_context_window_exceeded` — or a paused turn, `pause_turn`), `refused` (the
 * model declined: Anthropic `refusal`, or an OpenAI `refusal` message) or `filtered` (the
 * provider's content filter withheld the answer: `content_filter`).
 */
export type ModelStop = 'complete' | 'truncated' | 'refused' | 'filtered';

const TRUNCATED = new Set(['length', 'max_tokens', 'model_context_window_exceeded', 'pause_turn']);
const TOKEN_LIMIT = new Set(['length', 'max_tokens', 'model_context_window_exceeded']);

/** Classifies a reply's end (see {@link ModelStop}). A refusal message wins over any stop reason. */
export function stopOf(result: Pick<ModelResult, 'finish_reason' | 'refusal'>): ModelStop {
  if ((typeof result.refusal === 'string' && result.refusal.trim() !== '') || result.finish_reason === 'refusal')
    return 'refused';
  const r = result.finish_reason;
  if (r === undefined) return 'complete';
  if (r === 'content_filter') return 'filtered';
  return TRUNCATED.has(r) ? 'truncated' : 'complete';
}

/** One line saying why a reply that did not end `complete` cannot be used (for errors and people). */
export function stopMessage(result: Pick<ModelResult, 'finish_reason' | 'refusal'>): string {
  const why = result.finish_reason !== undefined ? ` (stop reason "${safeText(result.finish_reason, 40)}")` : '';
  switch (stopOf(result)) {
    case 'refused':
      return typeof result.refusal === 'string' && result.refusal.trim() !== ''
        ? `the model refused to answer: ${safeText(result.refusal, 300)}`
        : `the model refused to answer${why}`;
    case 'filtered':
      return `the provider's content filter withheld the answer${why}`;
    case 'truncated':
      return TOKEN_LIMIT.has(result.finish_reason ?? '')
        ? `the answer was cut off at the token limit${why}`
        : `the answer is incomplete${why}`;
    default:
      return 'the answer is complete';
  }
}

/**
 * A native tool call as text the guardrails read: `{"name": …, "arguments": …}` with the
 * arguments spliced in exactly as the model sent them (a repeated key stays visible to the
 * duplicate-key check; the router guardrail unwraps `arguments`). Empty arguments are `{}`;
 * arguments encoded twice (a JSON string) are passed on as their inner text.
 * Arguments that are not valid JSON are passed on alone, as sent, so the guardrail's repair and
 * truncation checks judge them like any other text (a cut `{"decision": …` is `truncated`, never
 * silently closed inside a string).
 */
export function renderToolCall(call: ModelToolCall): string {
  const args = call.arguments.trim();
  const name = JSON.stringify(call.name);
  if (args === '') return `{"name":${name},"arguments":{}}`;
  let value: unknown;
  try {
    value = JSON.parse(args);
  } catch {
    return call.arguments;
  }
  // double-encoded arguments: their inner text, judged as itself (a cut one stays visibly cut)
  if (typeof value === 'string') return value;
  return `{"name":${name},"arguments":${args}}`;
}

/** The text of a reply: its text parts, then each tool call rendered on its own line. */
export function replyText(text: string, calls: readonly ModelToolCall[]): string {
  const rendered = calls.map(renderToolCall);
  return [...(text !== '' ? [text] : []), ...rendered].join('\n');
}

// C0/C1 controls and the bidi overrides/isolates that could reorder what a terminal shows.
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]+/g;

/** `s` with control and bidi characters replaced by a space, whitespace collapsed, cut to `max`. */
export function safeText(s: string, max = 300): string {
  const t = s.replace(UNSAFE, ' ').replace(/\s+/g, ' ').trim();
  return t.length <= max ? t : `${t.slice(0, max - 1)}…`;
}

/**
 * The provider's own message in an error body, made safe to show: `error.message` (OpenAI,
 * Anthropic), `error` as a string, a top-level `message` or `detail`; otherwise the body text itself.
 * Undefined for an empty body.
 */
export function providerMessage(body: unknown, max = 300): string | undefined {
  let v: unknown = body;
  if (typeof v === 'string') {
    const raw = v;
    try {
      v = JSON.parse(raw);
    } catch {
      const t = safeText(raw, max);
      return t === '' ? undefined : t;
    }
    if (v === null || typeof v !== 'object') return safeText(raw, max) || undefined;
  }
  if (v === null || typeof v !== 'object') return undefined;
  const o = v as { error?: unknown; message?: unknown; detail?: unknown };
  const e = o.error;
  const inner = typeof e === 'object' && e !== null ? (e as { message?: unknown }).message : undefined;
  const msg = [inner, e, o.message, o.detail].find((x): x is string => typeof x === 'string');
  const t = safeText(msg ?? JSON.stringify(v), max);
  return t === '' ? undefined : t;
}
