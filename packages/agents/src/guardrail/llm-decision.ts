/**
 * The executor's decision (§3.7) through the same guardrail chain as the router's: extract,
 * repair, select, truncation, then its own mask (six keys; three per tool call), coerce and ajv
 * schema. Any failure yields a safe decision — no tool calls, `human_required: true` — so the task
 * loop never acts on an answer it could not read.
 */
import { compileChecker, createAjv, type ValidationIssue } from '@finger/protocol';

import { type ChainFailure, type ChainRule, selectDecisionObject } from './chain.js';
import { coerceBoolean, coerceConfidence, parseObjectString } from './coerce.js';
import type { GuardrailRepair, LlmDecision, LlmDecisionOutcome } from './guardrail-types.js';
import { type CopyReport, maskKeys, safeCopy } from './mask.js';
import { isPlaceholder } from './select.js';
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

const ARG_KEYS = ['args', 'arguments', 'parameters', 'input'];

/** One tool call: `{tool, args, intent}` from that shape, `{name, arguments}` or `{function: {…}}`. */
function coerceToolCall(raw: unknown, i: number, repairs: GuardrailRepair[], report: CopyReport): unknown {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return raw;
  let item = raw as Record<string, unknown>;
  if (typeof item.function === 'object' && item.function !== null && !Object.hasOwn(item, 'tool')) {
    item = item.function as Record<string, unknown>;
    repairs.push({ kind: 'unwrap_key', detail: `$.tool_calls[${i}].function` });
  }
  const out: Record<string, unknown> = {};
  const tool = item.tool ?? item.name;
  if (item.tool === undefined && item.name !== undefined)
    repairs.push({ kind: 'rename_key', detail: `$.tool_calls[${i}].name → tool` });
  out.tool = typeof tool === 'string' ? tool.trim() : tool;
  const argKey = ARG_KEYS.find((k) => Object.hasOwn(item, k));
  let args: unknown = argKey === undefined ? {} : item[argKey];
  if (argKey !== undefined && argKey !== 'args')
    repairs.push({ kind: 'rename_key', detail: `$.tool_calls[${i}].${argKey} → args` });
  if (args === null || args === undefined) args = {};
  if (typeof args === 'string') {
    const parsed = parseObjectString(args);
    if (parsed !== undefined) {
      repairs.push({ kind: 'nested_json_string', detail: `$.tool_calls[${i}].args`, before: clip(args) });
      args = parsed;
    }
  }
  out.args = safeCopy(args, report, `$.tool_calls[${i}].args`);
  out.intent = item.intent === undefined || item.intent === null ? '' : item.intent;
  const extra = Object.keys(item).filter((k) => !['tool', 'name', 'intent', ...ARG_KEYS].includes(k));
  if (extra.length > 0) repairs.push({ kind: 'mask', detail: `$.tool_calls[${i}] dropped keys: ${extra.join(', ')}` });
  return out;
}

function coerce(o: Record<string, unknown>, repairs: GuardrailRepair[], report: CopyReport): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['thought', 'summary'] as const) out[k] = o[k] === undefined || o[k] === null ? '' : o[k];
  let calls = o.tool_calls;
  if (calls === undefined || calls === null) calls = [];
  else if (typeof calls === 'object' && !Array.isArray(calls)) {
    repairs.push({ kind: 'wrap_array', detail: '$.tool_calls' });
    calls = [calls];
  }
  out.tool_calls = Array.isArray(calls)
    ? calls.slice(0, 1024).map((c, i) => coerceToolCall(c, i, repairs, report))
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
    const coerced = coerce(masked, repairs, report);
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
