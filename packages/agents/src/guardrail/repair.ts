/**
 * Step 2 of the guardrail: turn one extracted fragment into parsed objects. Valid JSON parses as
 * is; anything else goes through the guardrail's structural repair (syntax-repair.ts: quotes,
 * commas, comments, Python constants, unclosed strings and brackets — never a value's characters).
 * A JSON string holding JSON is parsed once more (a cut one is marked cut, like a cut fragment); a
 * one-object array or one known wrapper key is unwrapped. Duplicate keys and numbers that do not
 * read back as written are detected on the text actually parsed, and in the JSON strings coerce
 * will parse later.
 */
import { heldJsonProblem } from './coerce.js';
import { MAX_DEPTH, scanJson } from './duplicate-keys.js';
import type { Candidate } from './extract.js';
import type { GuardrailRepair } from './guardrail-types.js';
import { clip, clipMiddle } from './snippet.js';
import { repairJson } from './syntax-repair.js';
import type { CutInfo } from './truncation.js';

/** Keys a decision may arrive wrapped in (tool-call arguments, API envelopes, …). */
export const WRAPPER_KEYS: readonly string[] = [
  'arguments',
  'parameters',
  'input',
  'result',
  'output',
  'response',
  'routing_decision',
  'data',
];

/**
 * Longest broken fragment repaired, and the most characters one answer may have repaired in all
 * (a decision is small; the repair is linear, these keep its work per answer small). Valid JSON
 * of any length (up to `max_chars`) still parses.
 */
export const MAX_REPAIR_CHARS = 16 * 1024;
export const MAX_REPAIR_TOTAL = 64 * 1024;

/** How many characters the current answer may still have repaired. */
export interface RepairBudget {
  chars: number;
}

/** One parsed object that may be a decision. */
export interface ParsedCandidate {
  value: Record<string, unknown>;
  /** The fragment it came from (raw text, truncated flag). */
  source: Candidate;
  /** Path of a key repeated with different values, when there is one. */
  duplicate?: string;
  /** What parsing this fragment changed (recorded only for the chosen one). */
  repairs: GuardrailRepair[];
  /** Where the object lies in the text parsed (`source.text`), and what the repair finished at a cut. */
  cut: CutInfo;
}

type Parsed =
  | { ok: true; value: unknown; duplicate?: string; cut: boolean; incomplete: ReadonlySet<string> }
  | { ok: false; problem?: string };

const NONE: ReadonlySet<string> = new Set();

const FORMAT_CHAR = /\p{Cf}/u;

/**
 * The first key of `value` (at any depth) holding an invisible format character (U+200B, U+2060,
 * U+FEFF, bidi controls, …), as a path; undefined when none does. `"decision\u200b"` looks like
 * `"decision"` to a person and is another key to the code: such a key is refused, never read.
 */
function formatCharKey(value: unknown): string | undefined {
  const stack: [unknown, string][] = [[value, '$']];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) {
      v.forEach((item, i) => stack.push([item, `${path}[${i}]`]));
      continue;
    }
    for (const [k, item] of Object.entries(v)) {
      const at = `${path}.${k}`;
      if (FORMAT_CHAR.test(k)) return at;
      stack.push([item, at]);
    }
  }
  return undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Parses JSON text, repairing its structure when needed (a `syntax` repair records the change);
 * `cut` when the repair closed what the text left open. Broken answers make JSON.parse and the
 * repair throw, and capturing a stack for each of those errors was the largest cost of the broken
 * path: the stack trace limit is 0 while they run.
 */
function parseText(text: string, repairs: GuardrailRepair[], budget: RepairBudget): Parsed {
  let json = text;
  let value: unknown;
  let cut = false;
  let incomplete = NONE;
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    value = JSON.parse(json);
  } catch {
    if (text.length > MAX_REPAIR_CHARS)
      return {
        ok: false,
        problem: `the JSON is not valid and, at ${text.length} characters, too long to repair (at most ${MAX_REPAIR_CHARS})`,
      };
    if (text.length > budget.chars)
      return {
        ok: false,
        problem: `the answer holds more invalid JSON than is repaired (at most ${MAX_REPAIR_TOTAL} characters)`,
      };
    budget.chars -= text.length;
    const r = repairJson(text);
    if (!r.ok) return { ok: false, problem: r.problem };
    try {
      value = JSON.parse(r.json);
    } catch {
      return { ok: false };
    }
    json = r.json;
    cut = r.cut;
    incomplete = r.incomplete;
    const syntax: GuardrailRepair = { kind: 'syntax', before: clip(text), after: clip(json) };
    if (r.fixes.length > 0) syntax.detail = r.fixes.join('; ');
    repairs.push(syntax);
  } finally {
    Error.stackTraceLimit = limit;
  }
  if (typeof value !== 'object' || value === null) return { ok: true, value, cut, incomplete };
  const scan = scanJson(json);
  if (scan.tooDeep) return { ok: false, problem: `the JSON nests deeper than ${MAX_DEPTH} levels` };
  if (scan.number !== undefined) return { ok: false, problem: scan.number };
  const hidden = formatCharKey(value);
  if (hidden !== undefined) {
    const shown = hidden.replace(/\p{Cf}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    return { ok: false, problem: `the key ${shown} holds an invisible format character; write keys without them` };
  }
  return scan.duplicate === undefined
    ? { ok: true, value, cut, incomplete }
    : { ok: true, value, duplicate: scan.duplicate, cut, incomplete };
}

/** A string that holds JSON, parsed once (no further levels). */
function parseNested(value: string, repairs: GuardrailRepair[], budget: RepairBudget): Parsed {
  if (!/^\s*[[{]/.test(value)) return { ok: false };
  const p = parseText(value, repairs, budget);
  if (p.ok) repairs.push({ kind: 'nested_json_string', before: clip(value) });
  return p;
}

/** Most reasons {@link parseCandidate} collects for one answer (the same reason counts once). */
export const MAX_PROBLEMS = 3;

/**
 * Adds why a fragment cannot be read to `problems` (fed back to the model on a re-ask): bounded to
 * a snippet's length, each reason once, at most {@link MAX_PROBLEMS} of them.
 */
function addProblem(problems: string[], problem: string | undefined): void {
  if (problem === undefined || problems.length >= MAX_PROBLEMS) return;
  const shown = clipMiddle(problem);
  if (!problems.includes(shown)) problems.push(shown);
}

/**
 * The objects in `candidate` that pass `isCandidate` (or every object, when none does — select
 * reports why), after the unwrapping rules; null when the fragment cannot be parsed at all, with
 * the reason added to `problems` when there is one (what the repair refused, a number that does
 * not read back, nesting too deep, …).
 */
export function parseCandidate(
  candidate: Candidate,
  isCandidate: (o: Record<string, unknown>) => boolean,
  budget: RepairBudget,
  problems: string[] = [],
): ParsedCandidate[] | null {
  const repairs: GuardrailRepair[] = [];
  let p = parseText(candidate.text, repairs, budget);
  if (!p.ok) addProblem(problems, p.problem);
  // The repair found the text open where extraction found it closed: the two read the text
  // differently (a brace inside a smart-quoted string, …), and no truncation check would run.
  if (!p.ok || (p.cut && !candidate.truncated)) return null;
  let duplicate = p.duplicate;
  let value = p.value;
  let source = candidate;
  // A decision read out of a JSON string is checked for truncation like a fragment: cut when the
  // string's JSON was left open (or the fragment around it was cut).
  const nestedSource = (text: string, cut: boolean): Candidate => ({ text, truncated: cut || candidate.truncated });
  let incomplete = p.incomplete;
  if (typeof value === 'string') {
    const text = value;
    p = parseNested(text, repairs, budget);
    if (!p.ok) {
      addProblem(problems, p.problem);
      return null;
    }
    value = p.value;
    duplicate ??= p.duplicate;
    source = nestedSource(text, p.cut);
    incomplete = p.incomplete;
  }
  const out: ParsedCandidate[] = [];
  /** Why JSON held in a string of a candidate is refused (that candidate cannot be read). */
  let unreadable: string | undefined;
  const push = (v: Record<string, unknown>, dup: string | undefined, from: Candidate, cut: CutInfo): void => {
    if (dup === undefined && isCandidate(v)) {
      // JSON that coerce will read out of a string passes the same checks as the rest
      const held = heldJsonProblem(v);
      if (held?.duplicate !== undefined) dup = held.duplicate;
      else if (held !== undefined) unreadable ??= held.problem;
    }
    const p: ParsedCandidate = { value: v, source: from, repairs, cut };
    if (dup !== undefined) p.duplicate = dup;
    out.push(p);
  };
  /** The objects of `v` (itself, or an array's items) with their paths under `base`. */
  const objects = (
    v: unknown,
    base: readonly (string | number)[],
  ): [Record<string, unknown>, (string | number)[]][] => {
    if (isObject(v)) return [[v, [...base]]];
    if (!Array.isArray(v)) return [];
    const objs: [Record<string, unknown>, (string | number)[]][] = [];
    v.forEach((item, i) => {
      if (isObject(item)) objs.push([item, [...base, i]]);
    });
    if (objs.length === 1 && v.length === 1) repairs.push({ kind: 'unwrap_array' });
    return objs;
  };
  for (const [obj, path] of objects(value, [])) {
    const here: CutInfo = { path, incomplete };
    if (isCandidate(obj)) {
      push(obj, duplicate, source, here);
      continue;
    }
    const wrappers = WRAPPER_KEYS.filter(
      (k) => Object.hasOwn(obj, k) && (isObject(obj[k]) || typeof obj[k] === 'string' || Array.isArray(obj[k])),
    );
    if (wrappers.length !== 1) {
      push(obj, duplicate, source, here);
      continue;
    }
    const key = wrappers[0]!;
    let inner: unknown = obj[key];
    let dup = duplicate;
    let from = source;
    let innerBase: (string | number)[] = [...path, key];
    let innerIncomplete = incomplete;
    if (typeof inner === 'string') {
      const text = inner;
      const q = parseNested(text, repairs, budget);
      if (!q.ok) {
        push(obj, duplicate, source, here);
        continue;
      }
      inner = q.value;
      dup ??= q.duplicate;
      from = nestedSource(text, q.cut);
      innerBase = [];
      innerIncomplete = q.incomplete;
    }
    const innerObjects = objects(inner, innerBase);
    if (innerObjects.length === 0) {
      push(obj, duplicate, source, here);
      continue;
    }
    repairs.push({ kind: 'unwrap_key', detail: key });
    for (const [o, at] of innerObjects) push(o, dup, from, { path: at, incomplete: innerIncomplete });
  }
  if (unreadable === undefined) return out;
  addProblem(problems, unreadable);
  return null;
}
