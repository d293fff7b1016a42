/**
 * The executor's decision (§3.7) through the same guardrail chain as the router's: extract,
 * repair, select, truncation, then its own mask (six keys; three per tool call), coerce and ajv
 * schema. Any failure yields a safe decision — no tool calls, `human_required: true` — so the task
 * loop never acts on an answer it could not read.
 */
import { compileChecker, createAjv, type ValidationIssue } from '@finger/protocol';

import { type ChainFailure, type ChainRule, selectDecisionObject } from './chain.js';
import { ARG_KEYS, coerceBoolean, coerceConfidence, parseObjectString } from './coerce.js';
import type { GuardrailReasonCode, GuardrailRepair, LlmDecision, LlmDecisionOutcome } from './guardrail-types.js';
import { type CopyReport, maskKeys, safeCopy } from './mask.js';
import { canonical, isPlaceholder } from './select.js';
import { clip } from './snippet.js';
import { issueLines } from './validate.js';

/** The six keys of an executor decision. */
export const LLM_DECISION_KEYS = ['thought', 'tool_calls', 'confidence', 'human_required', 'done', 'summary'] as const;

/** Most tool calls one step may request unless the caller sets `max_tool_calls`. */
export const DEFAULT_MAX_TOOL_CALLS = 16;

/** Options of {@link parseLlmDecision}. */
export interface LlmDecisionOptions {
  /** More tool calls than this in one answer → `invalid_schema` (default 16). */
  max_tool_calls?: number;
  /** Longest answer read (default 256 KiB); longer → `too_large`. */
  max_chars?: number;
}

/** The decision every failure carries: nothing to run, a human needed. */
export function safeLlmDecision(): LlmDecision {
  return { thought: '', tool_calls: [], confidence: 0, human_required: true, done: false, summary: '' };
}

const CLAIM_KEYS = ['tool_calls', 'done', 'human_required'];

const LLM_RULE: ChainRule = {
  claim: /["']?\b(?:tool_calls|human_required|done)["']?\s*:/,
  isCandidate: (o) => CLAIM_KEYS.some((k) => Object.hasOwn(o, k)),
  safe: (o) => o.human_required === true || o.human_required === 'true',
  isTemplateEcho: (o) =>
    isPlaceholder(o.thought) ||
    isPlaceholder(o.summary) ||
    (Array.isArray(o.tool_calls) &&
      o.tool_calls.some(
        (c) => typeof c === 'object' && c !== null && isPlaceholder((c as { intent?: unknown }).intent),
      )),
  truncation: (o) => ({
    anchor: CLAIM_KEYS.find((k) => Object.hasOwn(o, k))!,
    required: ['tool_calls', 'confidence', 'human_required', 'done'],
    completeIfPresent: [],
  }),
};

function schemaFor(maxToolCalls: number): object {
  return {
    type: 'object',
    required: [...LLM_DECISION_KEYS],
    additionalProperties: false,
    properties: {
      thought: { type: 'string' },
      tool_calls: {
        type: 'array',
        maxItems: maxToolCalls,
        items: {
          type: 'object',
          required: ['tool', 'args', 'intent'],
          additionalProperties: false,
          properties: {
            tool: { type: 'string', minLength: 1, maxLength: 256 },
            args: { type: 'object' },
            intent: { type: 'string' },
          },
        },
      },
      confidence: { type: 'number', minimum: 0, maximum: 1 },
      human_required: { type: 'boolean' },
      done: { type: 'boolean' },
      summary: { type: 'string' },
    },
  };
}

const checkers = new Map<number, (v: unknown) => ValidationIssue[]>();

function checkerFor(maxToolCalls: number): (v: unknown) => ValidationIssue[] {
  let c = checkers.get(maxToolCalls);
  if (!c) {
    c = compileChecker(createAjv(), schemaFor(maxToolCalls));
    if (checkers.size < 16) checkers.set(maxToolCalls, c);
  }
  return c;
}

/** A tool call the guardrail refuses to read: two spellings of one field disagree, or its args string is refused. */
interface CallIssue {
  reason_code: GuardrailReasonCode;
  error: string;
}

/** Deep equality of two parsed JSON values (key order ignored). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  const keys = Object.keys(x);
  if (keys.length !== Object.keys(y).length) return false;
  return keys.every((k) => Object.hasOwn(y, k) && sameJson(x[k], y[k]));
}

/** One spelling of a field: where it was found and its value (for args, a JSON string already parsed). */
interface Spelling {
  path: string;
  key: string;
  value: unknown;
  /** The JSON string `value` was parsed from. */
  json?: string;
}

/**
 * The value of one field of a tool call, which may be spelt several ways (`tool`/`name`,
 * `args`/`arguments`/…, at the call or under `function`). Two spellings with different values are
 * refused (`ambiguous_candidates`): the model named two things, and the guardrail never picks one.
 */
function oneSpelling(found: Spelling[], issues: CallIssue[]): Spelling | undefined {
  const first = found[0];
  if (first === undefined || found.length === 1) return first;
  const other = found.find((f) => !sameJson(f.value, first.value));
  if (other !== undefined)
    issues.push({
      reason_code: 'ambiguous_candidates',
      error: `${first.path} and ${other.path} differ (${clip(canonical(first.value))} vs ${clip(canonical(other.value))}); give one`,
    });
  return first;
}

/**
 * Keys a tool call's tool may come under (`tool` is the contract's): `name` (OpenAI, `{function:
 * {name}}`), `tool_name`, `function` as a string, LangChain's `action`, `tool_id`. Two of them with
 * different values are refused; one, or several that agree, are read as `tool`.
 */
const TOOL_KEYS: readonly string[] = ['tool', 'name', 'tool_name', 'function', 'action', 'tool_id'];

/**
 * One tool call: `{tool, args, intent}` from that shape, `{name, arguments}`, `{function: {…}}`,
 * `{action, action_input}`, or any other spelling of {@link TOOL_KEYS} and `ARG_KEYS`.
 */
function coerceToolCall(
  raw: unknown,
  i: number,
  repairs: GuardrailRepair[],
  report: CopyReport,
  issues: CallIssue[],
): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
  const call = raw as Record<string, unknown>;
  const at = `$.tool_calls[${i}]`;
  const places: [string, Record<string, unknown>][] = [[at, call]];
  const fn = call.function;
  if (typeof fn === 'object' && fn !== null && !Array.isArray(fn)) {
    places.push([`${at}.function`, fn as Record<string, unknown>]);
    repairs.push({ kind: 'unwrap_key', detail: `${at}.function` });
  }
  const spellings = (keys: readonly string[]): Spelling[] => {
    const found: Spelling[] = [];
    for (const [path, o] of places)
      for (const key of keys)
        if (Object.hasOwn(o, key) && o[key] !== undefined && (key !== 'function' || typeof o[key] === 'string'))
          found.push({ path: `${path}.${key}`, key, value: o[key] });
    return found;
  };
  const out: Record<string, unknown> = {};
  const tool = oneSpelling(
    spellings(TOOL_KEYS).map((f) => (typeof f.value === 'string' ? { ...f, value: f.value.trim() } : f)),
    issues,
  );
  if (tool !== undefined && tool.key !== 'tool')
    repairs.push({ kind: 'rename_key', detail: `${at}.${tool.key} → tool` });
  out.tool = tool?.value;
  // An args string holding a JSON object counts as that object (so `args` and an equal `arguments` agree).
  const argSpellings = spellings(ARG_KEYS).map((f): Spelling => {
    if (typeof f.value !== 'string') return f;
    const parsed = parseObjectString(f.value, f.path);
    if (parsed === undefined) return f;
    if (parsed.ok) return { ...f, value: parsed.value, json: f.value };
    const reason_code = parsed.duplicate !== undefined ? 'duplicate_keys' : 'invalid_schema';
    issues.push({ reason_code, error: parsed.problem });
    return f;
  });
  const args = oneSpelling(argSpellings, issues);
  if (args !== undefined && args.key !== 'args')
    repairs.push({ kind: 'rename_key', detail: `${at}.${args.key} → args` });
  if (args?.json !== undefined)
    repairs.push({ kind: 'nested_json_string', detail: `${at}.args`, before: clip(args.json) });
  out.args = args === undefined || args.value === null ? {} : safeCopy(args.value, report, `${at}.args`);
  const intent = oneSpelling(spellings(['intent']), issues);
  out.intent = intent === undefined || intent.value === null ? '' : intent.value;
  // Keys dropped: of an OpenAI-style call `{id, type, function: {…}}` only unknown keys of `function`.
  const known = [...TOOL_KEYS.filter((k) => k !== 'function'), 'intent', ...ARG_KEYS];
  const extra = [
    ...Object.keys(call).filter(
      (k) =>
        !known.includes(k) &&
        !(k === 'function' && typeof call.function === 'string') &&
        (places.length === 1 || !['id', 'type', 'function'].includes(k)),
    ),
    ...(places.length === 2
      ? Object.keys(places[1]![1])
          .filter((k) => !known.includes(k))
          .map((k) => `function.${k}`)
      : []),
  ];
  if (extra.length > 0) repairs.push({ kind: 'mask', detail: `${at} dropped keys: ${extra.join(', ')}` });
  return out;
}

function coerce(
  o: Record<string, unknown>,
  repairs: GuardrailRepair[],
  report: CopyReport,
  issues: CallIssue[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['thought', 'summary'] as const) out[k] = o[k] === undefined || o[k] === null ? '' : o[k];
  let calls = o.tool_calls;
  if (calls === undefined || calls === null) calls = [];
  else if (typeof calls === 'object' && !Array.isArray(calls)) {
    repairs.push({ kind: 'wrap_array', detail: '$.tool_calls' });
    calls = [calls];
  }
  out.tool_calls = Array.isArray(calls)
    ? calls.slice(0, 1024).map((c, i) => coerceToolCall(c, i, repairs, report, issues))
    : calls;
  const c = coerceConfidence(o.confidence);
  if (c !== undefined && c !== o.confidence)
    repairs.push({ kind: 'coerce_confidence', before: clip(String(o.confidence)) });
  out.confidence = c ?? o.confidence;
  for (const k of ['human_required', 'done'] as const) {
    if (o[k] === undefined || o[k] === null) out[k] = false;
    else {
      const b = coerceBoolean(o[k]);
      if (b !== undefined && b !== o[k]) repairs.push({ kind: `coerce_${k}`, before: clip(String(o[k])) });
      out[k] = b ?? o[k];
    }
  }
  return out;
}

function failure(f: Omit<ChainFailure, 'ok'>, repairs: GuardrailRepair[]): LlmDecisionOutcome {
  return {
    outcome: 'ask_human',
    decision: safeLlmDecision(),
    reason_code: f.reason_code,
    retryable: f.retryable,
    errors: f.errors,
    repairs,
  };
}

/**
 * Parses one executor answer into an {@link LlmDecision}. `ok` only when the answer holds exactly
 * one decision that survives the chain; otherwise `ask_human` with a safe decision
 * (`human_required: true`, no tool calls) and the reason. Missing `human_required` / `done` mean
 * false; missing `tool_calls` means none. Never throws.
 */
export function parseLlmDecision(text: string, options: LlmDecisionOptions = {}): LlmDecisionOutcome {
  const repairs: GuardrailRepair[] = [];
  try {
    const sel = selectDecisionObject(String(text), LLM_RULE, repairs, options.max_chars);
    if (!sel.ok) return failure(sel, repairs);
    const masked = maskKeys(sel.value, LLM_DECISION_KEYS, repairs);
    const report: CopyReport = { dropped: [], tooDeep: false };
    const issues: CallIssue[] = [];
    const coerced = coerce(masked, repairs, report, issues);
    const issue = issues[0];
    if (issue !== undefined)
      return failure(
        {
          reason_code: issue.reason_code,
          errors: issues.filter((x) => x.reason_code === issue.reason_code).map((x) => x.error),
          retryable: issue.reason_code === 'invalid_schema',
        },
        repairs,
      );
    if (report.dropped.length > 0) repairs.push({ kind: 'mask', detail: `dropped keys: ${report.dropped.join(', ')}` });
    if (report.tooDeep)
      return failure(
        { reason_code: 'invalid_schema', errors: ['tool call args nest too deeply'], retryable: true },
        repairs,
      );
    const errors = issueLines(checkerFor(options.max_tool_calls ?? DEFAULT_MAX_TOOL_CALLS)(coerced));
    if (typeof coerced.confidence === 'number' && !Number.isFinite(coerced.confidence) && errors.length === 0)
      errors.push('$.confidence must be a finite number');
    if (errors.length > 0) return failure({ reason_code: 'invalid_schema', errors, retryable: true }, repairs);
    const decision = {} as Record<string, unknown>;
    for (const k of LLM_DECISION_KEYS) decision[k] = coerced[k];
    return { outcome: 'ok', decision: decision as unknown as LlmDecision, repairs };
  } catch (e) {
    return failure(
      {
        reason_code: 'unparseable',
        errors: [`the answer could not be read: ${(e as Error).message}`],
        retryable: true,
      },
      repairs,
    );
  }
}
