// Tool results for the model's context: summarised (key fields kept whole, long text shortened
// with an explicit marker saying how much was left out) instead of hard-cut, and classified
// success / failure / partial / irrelevant. Pure.

import type { ErrorInfo } from '@finger/protocol';

/** How a tool call ended, for the model and the PerceptionBus. */
export type ResultClass = 'success' | 'failure' | 'partial' | 'irrelevant';

/** Fields kept whole whatever the budget (status and identity of a result). */
export const KEY_FIELDS: readonly string[] = [
  'ok',
  'path',
  'exit_code',
  'signal',
  'timed_out',
  'cancelled',
  'truncated',
  'eof',
  'exists',
  'type',
  'size',
  'bytes',
  'total',
  'created',
  'backup_id',
  'hunks_applied',
  'code',
  'status',
];

/** Default character budget of one summarised result. */
export const DEFAULT_RESULT_CHARS = 2000;

/**
 * Classifies an outcome: an error → failure; a non-zero `exit_code`, a timeout or a cancel →
 * failure; `truncated`/`files_truncated` or `eof: false` → partial; null, `{}`, `[]` or `''` →
 * irrelevant; anything else → success.
 */
export function classifyResult(outcome: { result?: unknown; error?: ErrorInfo }): ResultClass {
  if (outcome.error) return 'failure';
  const r = outcome.result;
  if (r === null || r === undefined || r === '') return 'irrelevant';
  if (Array.isArray(r)) return r.length === 0 ? 'irrelevant' : 'success';
  if (typeof r === 'object') {
    const o = r as Record<string, unknown>;
    if (Object.keys(o).length === 0) return 'irrelevant';
    if (typeof o.exit_code === 'number' && o.exit_code !== 0) return 'failure';
    if (o.timed_out === true || o.cancelled === true) return 'failure';
    if (o.truncated === true || o.files_truncated === true || o.eof === false) return 'partial';
  }
  return 'success';
}

/** A string shortened to `max` characters: head and tail kept, the middle replaced by a marker with the count. */
export function shortenText(s: string, max: number): string {
  if (s.length <= max) return s;
  const marker = (n: number) => ` …[${n} chars omitted]… `;
  const room = Math.max(0, max - marker(s.length).length);
  const head = Math.ceil(room * 0.7);
  const tail = room - head;
  return `${s.slice(0, head)}${marker(s.length - head - tail)}${tail > 0 ? s.slice(s.length - tail) : ''}`;
}

function shrink(v: unknown, budget: number, depth: number): unknown {
  if (typeof v === 'string') return shortenText(v, Math.max(40, budget));
  if (v === null || typeof v !== 'object') return v;
  if (depth > 4) return `[${Array.isArray(v) ? 'array' : 'object'} omitted]`;
  if (Array.isArray(v)) {
    const full = JSON.stringify(v);
    if (full.length <= budget) return v;
    const out: unknown[] = [];
    let used = 2;
    for (const item of v) {
      const s = shrink(item, Math.max(40, Math.floor(budget / 4)), depth + 1);
      const len = JSON.stringify(s).length + 1;
      if (used + len > budget && out.length > 0) break;
      out.push(s);
      used += len;
    }
    if (out.length < v.length) out.push(`…[${v.length - out.length} more items]`);
    return out;
  }
  const o = v as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const keys = Object.keys(o);
  // key fields first and whole (when scalar), then the rest sharing what is left
  for (const k of keys) if (KEY_FIELDS.includes(k) && (o[k] === null || typeof o[k] !== 'object')) out[k] = o[k];
  const rest = keys.filter((k) => !(k in out));
  const left = Math.max(80, budget - JSON.stringify(out).length);
  const each = Math.max(40, Math.floor(left / Math.max(1, rest.length)));
  for (const k of rest) out[k] = shrink(o[k], each, depth + 1);
  return out;
}

/**
 * A tool outcome as text for the model: the whole JSON when it fits in `max_chars`, otherwise a
 * summary keeping {@link KEY_FIELDS} whole and shortening long strings and arrays with markers
 * that say how much was omitted (never a silent cut). Errors keep their code and message.
 */
export function summariseResult(
  outcome: { result?: unknown; error?: ErrorInfo },
  max_chars: number = DEFAULT_RESULT_CHARS,
): string {
  if (outcome.error) {
    const { code, message, details } = outcome.error;
    const d = details === undefined ? '' : ` ${JSON.stringify(shrink(details, Math.floor(max_chars / 2), 0))}`;
    return `error ${code}: ${shortenText(message, Math.floor(max_chars / 2))}${d}`;
  }
  const full = JSON.stringify(outcome.result ?? null);
  if (full.length <= max_chars) return full;
  return JSON.stringify(shrink(outcome.result, max_chars, 0));
}
