/**
 * Step 1 of the guardrail: find the JSON-looking fragments in a model's answer. Pure string work:
 * BOM and think blocks removed, then fenced blocks, else XML-style tags, else the whole text; inside
 * each region every top-level brace span (string-aware), an unbalanced one marked truncated.
 */
import type { GuardrailRepair } from './guardrail-types.js';
import { clip } from './snippet.js';

/** One fragment that may hold a decision. */
export interface Candidate {
  /** The span's text, from its opening `{` (or `[`) to its matching close or the end of the region. */
  text: string;
  /** True when the span never closed: the answer was cut off inside it. */
  truncated: boolean;
}

const THINK_OPEN = /<(think|thinking|reasoning)\b[^>]*>/i;
// An opening fence ends its line, after an optional language tag; models also open one mid-line
// ("Sure: ```json"). The strict tag keeps a fence mentioned inside a JSON string from counting.
const FENCE_OPEN = /(`{3,}|~{3,})[ \t]*[\w+.#-]*[ \t]*$/gm;
const XML_TAG = /<(json|output|answer|decision|response|result|tool_call)\b[^>]*>/gi;
const CDATA = /^\s*<!\[CDATA\[([\s\S]*?)(?:\]\]>\s*)?$/;

/** Removes `<think>…</think>` blocks (an unclosed one swallows the rest) and a stray leading `</think>`. */
function dropThinkBlocks(text: string, repairs: GuardrailRepair[]): string {
  let out = text;
  // A reasoning model whose template opened the block emits only the closing tag: drop what precedes it.
  const stray = /^[\s\S]*?<\/(think|thinking|reasoning)>/i.exec(out);
  if (stray && !THINK_OPEN.test(out.slice(0, stray.index + stray[0].length))) {
    repairs.push({ kind: 'think_block', detail: 'unopened closing tag', before: clip(stray[0]) });
    out = out.slice(stray[0].length);
  }
  for (let guard = 0; guard < 64; guard++) {
    const open = THINK_OPEN.exec(out);
    if (!open) break;
    const name = open[1]!.toLowerCase();
    const closeRe = new RegExp(`</${name}\\s*>`, 'i');
    const rest = out.slice(open.index + open[0].length);
    const close = closeRe.exec(rest);
    if (!close) {
      repairs.push({
        kind: 'think_block',
        detail: 'unclosed: rest of the answer dropped',
        before: clip(out.slice(open.index)),
      });
      out = out.slice(0, open.index);
      break;
    }
    const end = open.index + open[0].length + close.index + close[0].length;
    repairs.push({ kind: 'think_block', before: clip(out.slice(open.index, end)) });
    out = out.slice(0, open.index) + out.slice(end);
  }
  return out;
}

/**
 * Most regions (fenced or tagged blocks) and most spans one level yields. A level with more is
 * marked `overflow`: the guardrail refuses it rather than pick among the first ones.
 */
export const MAX_PER_LEVEL = 32;
const SCAN_LIMIT = MAX_PER_LEVEL + 1;

/** Contents of fenced blocks (``` or ~~~, any tag); the closing fence is optional at the end. */
function fencedRegions(text: string): string[] {
  const out: string[] = [];
  FENCE_OPEN.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = FENCE_OPEN.exec(text)) !== null) {
    const fence = m[1]!;
    const bodyStart = m.index + m[0].length + 1;
    const closeRe = new RegExp(`${fence[0] === '`' ? '`' : '~'}{${fence.length},}`, 'g');
    closeRe.lastIndex = Math.min(bodyStart, text.length);
    const close = closeRe.exec(text);
    const bodyEnd = close ? close.index : text.length;
    out.push(text.slice(Math.min(bodyStart, text.length), bodyEnd));
    if (out.length >= SCAN_LIMIT) break;
    FENCE_OPEN.lastIndex = close ? close.index + close[0].length : text.length;
    if (!close) break;
  }
  return out;
}

/** Contents of `<json>`, `<output>`, … tags (closing tag optional), CDATA unwrapped. */
function xmlRegions(text: string): string[] {
  const out: string[] = [];
  XML_TAG.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = XML_TAG.exec(text)) !== null) {
    const name = m[1]!.toLowerCase();
    const start = m.index + m[0].length;
    const close = new RegExp(`</${name}\\s*>`, 'i').exec(text.slice(start));
    let body = close ? text.slice(start, start + close.index) : text.slice(start);
    const cdata = CDATA.exec(body);
    if (cdata) body = cdata[1]!;
    out.push(body);
    if (out.length >= SCAN_LIMIT) break;
    XML_TAG.lastIndex = close ? start + close.index + close[0].length : text.length;
  }
  return out;
}

function isSpace(c: string | undefined): boolean {
  return c === ' ' || c === '\n' || c === '\r' || c === '\t';
}

/** Index of the previous non-space character before `i`, or -1. */
function prevNonSpace(s: string, i: number): number {
  let j = i - 1;
  while (j >= 0 && isSpace(s[j])) j--;
  return j;
}

/**
 * Scans a brace span starting at `start` (a `{` or `[`); returns the index after its matching close,
 * or -1 when the region ends first. Double-quoted strings are skipped with escapes; a single quote
 * opens a string only where a JSON token may start (after `{ [ , :`), so prose apostrophes inside
 * unquoted values do not derail the scan.
 */
export function scanSpan(s: string, start: number): number {
  let depth = 0;
  let i = start;
  const n = s.length;
  while (i < n) {
    const c = s[i]!;
    if (c === '"' || (c === "'" && '{[,:'.includes(s[prevNonSpace(s, i)] ?? ''))) {
      i++;
      while (i < n) {
        const d = s[i]!;
        if (d === '\\') i += 2;
        else if (d === c) break;
        else i++;
      }
      if (i >= n) return -1;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return -1;
}

/** Every top-level span of a region; `[` starts one only when an object follows it. */
function spansOf(region: string, out: Candidate[]): void {
  let i = 0;
  const n = region.length;
  while (i < n && out.length < SCAN_LIMIT) {
    const c = region[i]!;
    let starts = c === '{';
    if (c === '[') {
      let j = i + 1;
      while (j < n && isSpace(region[j])) j++;
      starts = region[j] === '{';
    }
    if (!starts) {
      i++;
      continue;
    }
    const end = scanSpan(region, i);
    if (end < 0) {
      out.push({ text: region.slice(i), truncated: true });
      return;
    }
    out.push({ text: region.slice(i, end), truncated: false });
    i = end;
  }
}

/** A region that is one JSON string literal holding JSON (`"{\"decision\": …}"`), decoded once. */
function decodeStringRegion(region: string, repairs: GuardrailRepair[]): string {
  const t = region.trim();
  if (t.length < 2 || t[0] !== '"' || t[t.length - 1] !== '"') return region;
  try {
    const v: unknown = JSON.parse(t);
    if (typeof v === 'string' && /^\s*[[{]/.test(v)) {
      repairs.push({ kind: 'nested_json_string', before: clip(t), after: clip(v) });
      return v;
    }
  } catch {
    // not a string literal: scanned as is
  }
  return region;
}

/** The fragments of one kind of region: fenced blocks, tagged blocks, or the whole text. */
export interface CandidateLevel {
  /** Repairs to record when this level is the one used (`fence`, `xml_tag`, `nested_json_string`). */
  repairs: GuardrailRepair[];
  /** At most {@link MAX_PER_LEVEL}. */
  candidates: Candidate[];
  /** True when the level held more regions or spans than that. */
  overflow: boolean;
}

function level(regions: string[], repair: GuardrailRepair | undefined): CandidateLevel {
  const repairs: GuardrailRepair[] = repair ? [repair] : [];
  const candidates: Candidate[] = [];
  for (const r of regions) {
    if (candidates.length >= SCAN_LIMIT) break;
    spansOf(decodeStringRegion(r, repairs), candidates);
  }
  const overflow = regions.length > MAX_PER_LEVEL || candidates.length > MAX_PER_LEVEL;
  return { repairs, candidates: candidates.slice(0, MAX_PER_LEVEL), overflow };
}

/**
 * The candidate fragments of `text`, by level in order of preference: fenced blocks, then
 * XML-style tags, then the whole text (levels without a `{` are left out; the whole text is always
 * last). BOM and think-block repairs are recorded in `repairs` at once. Never throws.
 */
export function extractCandidates(text: string, repairs: GuardrailRepair[]): CandidateLevel[] {
  let t = text;
  if (t.charCodeAt(0) === 0xfeff) {
    repairs.push({ kind: 'bom' });
    t = t.slice(1);
  }
  if (t.includes('</') || THINK_OPEN.test(t)) t = dropThinkBlocks(t, repairs);
  const levels: CandidateLevel[] = [];
  if (t.includes('```') || t.includes('~~~')) {
    const regions = fencedRegions(t).filter((r) => r.includes('{'));
    if (regions.length > 0) levels.push(level(regions, { kind: 'fence', detail: `${regions.length} fenced block(s)` }));
  }
  if (t.includes('<')) {
    const regions = xmlRegions(t).filter((r) => r.includes('{'));
    if (regions.length > 0)
      levels.push(level(regions, { kind: 'xml_tag', detail: `${regions.length} tagged block(s)` }));
  }
  levels.push(level([t], undefined));
  return levels;
}
