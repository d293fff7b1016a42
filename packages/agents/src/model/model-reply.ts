/**
 * What a model reply means beyond its text, shared by the adapters and their callers: why the
 * model stopped (a cut, a refusal, the provider's content filter), native tool calls rendered as
 * the JSON text the guardrails read, and provider messages made safe to show. Pure functions.
 */
import type { ModelResult, ModelToolCall } from './model-adapter.js';

/**
 * How a reply ended: `complete` (the model finished: a reason of {@link FINISHED}, any case, or —
 * for a plain reply — none reported), `truncated` (the text cannot be taken as the whole answer:
 * the token limit — `length`, `max_tokens`, `model_length`, `model_context_window_exceeded`, … — a
 * paused turn, `pause_turn`, a stream that ended without a stop reason, or any other reason, such as
 * Mistral's `error` or DeepSeek's `insufficient_system_resource`: only a reason known to mean
 * "finished" lets the text be read), `refused` (the model declined: Anthropic `refusal`, or an
 * OpenAI `refusal` message) or `filtered` (the provider's content filter withheld the answer:
 * `content_filter`).
 */
export type ModelStop = 'complete' | 'truncated' | 'refused' | 'filtered';

/**
 * The stop reasons that mean the model finished its answer (compared in lower case): OpenAI
 * `stop`, `tool_calls`, `function_call`; Anthropic `end_turn`, `tool_use`, `stop_sequence`; the
 * `eos` / `eos_token` / `complete` / `completed` / `finished` / `stop_token` that OpenAI-compatible
 * servers report. Everything else is not finished.
 */
export const FINISHED: ReadonlySet<string> = new Set([
  'stop',
  'end_turn',
  'tool_calls',
  'tool_use',
  'stop_sequence',
  'function_call',
  'eos',
  'eos_token',
  'stop_token',
  'complete',
  'completed',
  'finished',
]);

/**
 * What an adapter reports as `finish_reason` when a stream ended (`[DONE]`, `message_stop`) without
 * the provider ever giving a stop reason: the end of the answer is unknown, so it is `truncated`.
 */
export const STREAM_WITHOUT_STOP = 'stream_ended_without_stop_reason';

/** A stop reason naming a token or context limit (`length`, `max_tokens`, `model_length`, …). */
function tokenLimit(r: string): boolean {
  return /length|max_?tokens|token_?limit|context_window|context_length/.test(r);
}

/** Classifies a reply's end (see {@link ModelStop}). A refusal message wins over any stop reason. */
export function stopOf(result: Pick<ModelResult, 'finish_reason' | 'refusal'>): ModelStop {
  const r = result.finish_reason?.trim().toLowerCase();
  if ((typeof result.refusal === 'string' && result.refusal.trim() !== '') || r === 'refusal') return 'refused';
  // a plain reply some OpenAI-compatible servers send without a reason (a stream never: see STREAM_WITHOUT_STOP)
  if (r === undefined) return 'complete';
  if (r === 'content_filter') return 'filtered';
  return FINISHED.has(r) ? 'complete' : 'truncated';
}

/** One line saying why a reply that did not end `complete` cannot be used (for errors and people). */
export function stopMessage(result: Pick<ModelResult, 'finish_reason' | 'refusal'>): string {
  const r = result.finish_reason;
  const why = r !== undefined ? ` (stop reason "${safeText(r, 40)}")` : '';
  switch (stopOf(result)) {
    case 'refused':
      return typeof result.refusal === 'string' && result.refusal.trim() !== ''
        ? `the model refused to answer: ${safeText(result.refusal, 300)}`
        : `the model refused to answer${why}`;
    case 'filtered':
      return `the provider's content filter withheld the answer${why}`;
    case 'truncated': {
      const lower = (r ?? '').trim().toLowerCase();
      if (tokenLimit(lower)) return `the answer was cut off at the token limit${why}`;
      if (lower === 'pause_turn') return `the answer is incomplete${why}`;
      if (r === STREAM_WITHOUT_STOP) return 'the answer is incomplete (the stream ended without a stop reason)';
      return `the model did not finish its answer${why}`;
    }
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
