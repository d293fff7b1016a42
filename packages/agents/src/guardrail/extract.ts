/**
 * Step 1 of the guardrail: find the JSON-looking fragments in a model's answer. Pure string work.
 * The JSON spans of the answer are located first (string-aware), and every marker — a think block,
 * a fence, an XML-style tag — counts only outside them: one written inside a JSON string is content.
 * BOM and think blocks are removed, then the answer splits into fenced blocks, tagged blocks and the
 * rest; inside each every top-level brace span is a fragment, an unbalanced one marked truncated.
 */
import type { GuardrailRepair } from './guardrail-types.js';
import { inRanges, jsonRanges, topSpans } from './json-spans.js';
import { clip } from './snippet.js';

/** One fragment that may hold a decision. */
export interface Candidate {
  /** The span's text, from its opening `{` (or `[`) to its matching close or the end of the region. */
  text: string;
  /** True when the span never closed: the answer was cut off inside it. */
  truncated: boolean;
}

/**
 * Most regions (fenced or tagged blocks) and most spans one level yields. A level with more is
 * marked `overflow`: the guardrail refuses it rather than pick among the first ones.
 */
export const MAX_PER_LEVEL = 32;
const SCAN_LIMIT = MAX_PER_LEVEL + 1;
/** Most think blocks removed from one answer. */
const MAX_THINK_BLOCKS = 64;

const LEADING_THINK = /\s*<(think|thinking|reasoning)\b[^<>]*>/iy;
const THINK_TAG = /<(\/?)(think|thinking|reasoning)\b[^<>]*>/gi;
// An opening fence ends its line, after an optional language tag; models also open one mid-line
// ("Sure: ```json"). A closing fence stands alone on its line.
const FENCE_OPEN = /(?<![`~])(`{3,}|~{3,})[ \t]*[\w+.#-]*[ \t]*$/gm;
const XML_TAG = /<(json|output|answer|decision|response|result|tool_call)\b[^<>]*>/gi;
const CDATA = /^\s*<!\[CDATA\[([\s\S]*?)(?:\]\]>\s*)?$/;

/** The first closing tag `</name>` at or after `from` that lies outside `ranges`, or null. */
function closeTag(text: string, name: string, from: number, ranges: readonly number[]): RegExpExecArray | null {
  const re = new RegExp(`</${name}\\s*>`, 'gi');
  re.lastIndex = from;
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) if (!inRanges(ranges, m.index)) return m;
  return null;
}

/**
 * Removes think blocks: those opening the answer (their content is prose: the first closing tag
 * ends them), then, outside JSON spans, a closing tag that no opening one precedes (the chat
 * template opened the block: what precedes it goes) and further blocks. An unclosed block swallows
 * the rest of the answer.
 */
function dropThinkBlocks(text: string, repairs: GuardrailRepair[]): string {
  let pos = 0;
  let removed = 0;
  const unclosed = (rest: string): void => {
    repairs.push({ kind: 'think_block', detail: 'unclosed: rest of the answer dropped', before: clip(rest) });
  };
  for (; removed < MAX_THINK_BLOCKS; removed++) {
    LEADING_THINK.lastIndex = pos;
    const open = LEADING_THINK.exec(text);
    if (!open) break;
    const start = open.index + open[0].length - open[0].trimStart().length;
    const close = closeTag(text, open[1]!.toLowerCase(), LEADING_THINK.lastIndex, []);
    if (!close) {
      unclosed(text.slice(start));
      return '';
    }
    pos = close.index + close[0].length;
    repairs.push({ kind: 'think_block', before: clip(text.slice(start, pos)) });
  }
  const t = pos > 0 ? text.slice(pos) : text;
  if (removed >= MAX_THINK_BLOCKS || !(t.includes('</') || /<(think|thinking|reasoning)\b/i.test(t))) return t;

  const ranges = jsonRanges(t);
  const parts: string[] = [];
  let kept = 0;
  THINK_TAG.lastIndex = 0;
  let m: RegExpExecArray | null;
  while (removed < MAX_THINK_BLOCKS && (m = THINK_TAG.exec(t)) !== null) {
    if (inRanges(ranges, m.index)) continue;
    if (m[1] === '/') {
      if (kept === 0 && parts.length === 0) {
        const end = m.index + m[0].length;
        repairs.push({ kind: 'think_block', detail: 'unopened closing tag', before: clip(t.slice(0, end)) });
        kept = end;
        removed++;
      }
      continue;
    }
    const close = closeTag(t, m[2]!.toLowerCase(), THINK_TAG.lastIndex, ranges);
    parts.push(t.slice(kept, m.index));
    if (!close) {
      unclosed(t.slice(m.index));
      kept = t.length;
      break;
    }
    kept = close.index + close[0].length;
    repairs.push({ kind: 'think_block', before: clip(t.slice(m.index, kept)) });
    removed++;
    THINK_TAG.lastIndex = kept;
  }
  if (kept === 0) return t;
  parts.push(t.slice(kept));
  return parts.join('');
}

/** A block of the answer: its content and the whole extent, markers included. */
interface Region {
  body: string;
  start: number;
  end: number;
}

/** Fenced blocks (``` or ~~~, any tag) opened outside JSON spans; the closing fence is optional at the end. */
function fencedRegions(text: string, ranges: readonly number[]): Region[] {
  const out: Region[] = [];
  FENCE_OPEN.lastIndex = 0;
  let m: RegExpExecArray | null;
  while (out.length < SCAN_LIMIT && (m = FENCE_OPEN.exec(text)) !== null) {
    if (inRanges(ranges, m.index)) continue;
    const fence = m[1]!;
    let bodyStart = m.index + m[0].length;
    if (text[bodyStart] === '\r') bodyStart++;
    if (text[bodyStart] === '\n') bodyStart++;
    const closeRe = new RegExp(`^[ \\t]*${fence[0]}{${fence.length},}[ \\t]*$`, 'gm');
    closeRe.lastIndex = bodyStart;
    let close: RegExpExecArray | null;
    while ((close = closeRe.exec(text)) !== null && inRanges(ranges, close.index));
    const end = close ? close.index + close[0].length : text.length;
    out.push({ body: text.slice(bodyStart, close ? close.index : end), start: m.index, end });
    if (!close) break;
    FENCE_OPEN.lastIndex = end;
  }
  return out;
}

/** Contents of `<json>`, `<output>`, … tags outside JSON spans and fences (closing tag optional), CDATA unwrapped. */
function xmlRegions(text: string, ranges: readonly number[], fenced: readonly Region[]): Region[] {
  const fences = fenced.flatMap((r) => [r.start, r.end]);
  const out: Region[] = [];
  XML_TAG.lastIndex = 0;
  let m: RegExpExecArray | null;
  while (out.length < SCAN_LIMIT && (m = XML_TAG.exec(text)) !== null) {
    if (inRanges(ranges, m.index) || inRanges(fences, m.index)) continue;
    const start = m.index + m[0].length;
    const close = closeTag(text, m[1]!.toLowerCase(), start, ranges);
    let body = text.slice(start, close ? close.index : text.length);
    const cdata = CDATA.exec(body);
    if (cdata) body = cdata[1]!;
    const end = close ? close.index + close[0].length : text.length;
    out.push({ body, start: m.index, end });
    if (!close) break;
    XML_TAG.lastIndex = end;
  }
  return out;
}

/** The text outside `regions` (sorted by start, possibly nested), the gaps joined by line breaks. */
function outside(text: string, regions: readonly Region[]): string {
  if (regions.length === 0) return text;
  const parts: string[] = [];
  let at = 0;
  for (const r of regions) {
    if (r.start > at) parts.push(text.slice(at, r.start));
    at = Math.max(at, r.end);
  }
  parts.push(text.slice(at));
  return parts.join('\n');
}

/**
 * Every top-level span of a region (see {@link topSpans}); `[` starts one only when an object
 * follows it. A span that never closes is a cut-off fragment when it reads as an object; a stray
 * `{` in prose (`use { to open a block`) is none, and the spans after it are read. The text
 * between the spans goes to `gaps`.
 */
function spansOf(region: string, out: Candidate[], gaps: string[]): void {
  let gap = 0;
  for (const s of topSpans(region)) {
    if (out.length >= SCAN_LIMIT) return;
    if (s.start > gap) gaps.push(region.slice(gap, s.start));
    out.push({ text: region.slice(s.start, s.end), truncated: !s.closed });
    gap = s.end;
  }
  if (region.length > gap) gaps.push(region.slice(gap));
}

/** A text that is one JSON string literal holding JSON (`"{\"decision\": …}"`), decoded once; else null. */
function decodeString(text: string): string | null {
  const t = text.trim();
  if (t.length < 2 || t[0] !== '"' || t[t.length - 1] !== '"') return null;
  try {
    const v: unknown = JSON.parse(t);
    if (typeof v === 'string' && /^\s*[[{]/.test(v)) return v;
  } catch {
    // not a string literal: scanned as is
  }
  return null;
}

const ESCAPED_START = /[[{]\s*\\"/;

/**
 * An answer whose JSON has every quote escaped (`{\"decision\": \"dispatch_module\", …}`: the
 * model serialized it once more and left off the outer quotes), decoded once as the content of a
 * JSON string; else null. Only when `{\"` occurs and the whole answer decodes — which it cannot
 * when any quote in it is unescaped (a JSON answer that merely holds escaped JSON in a string has
 * quotes of its own) or it has an escape JSON does not know.
 */
function decodeEscaped(text: string): string | null {
  if (!ESCAPED_START.test(text)) return null;
  // raw line breaks and tabs (whitespace between members) may not stand in a JSON string: escaped,
  // they decode as themselves
  // eslint-disable-next-line no-control-regex
  const literal = text.replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  try {
    const v: unknown = JSON.parse(`"${literal}"`);
    if (typeof v === 'string' && /[[{]\s*"/.test(v)) return v;
  } catch {
    // a quote left unescaped, or an unknown escape: scanned as is
  }
  return null;
}

/**
 * The answer as the fragments are read from it: BOM, think blocks and a whole-answer JSON string
 * undone (see {@link extractCandidates}), without recording repairs. The prose the model shows.
 */
export function visibleAnswer(text: string): string {
  let t = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (t.includes('</') || /<(think|thinking|reasoning)\b/i.test(t)) t = dropThinkBlocks(t, []);
  return decodeString(t) ?? decodeEscaped(t) ?? t;
}

/** The fragments of one kind of region: fenced blocks, tagged blocks, or the rest of the answer. */
export interface CandidateLevel {
  /** Repairs to record when this level is the one used (`fence`, `xml_tag`, `nested_json_string`). */
  repairs: GuardrailRepair[];
  /** At most {@link MAX_PER_LEVEL}. */
  candidates: Candidate[];
  /** True when the level held more regions or spans than that. */
  overflow: boolean;
  /** The text of the level's regions outside its fragments (prose around them). */
  gaps: string[];
}

function level(regions: string[], repair: GuardrailRepair | undefined): CandidateLevel {
  const repairs: GuardrailRepair[] = repair ? [repair] : [];
  const candidates: Candidate[] = [];
  const gaps: string[] = [];
  for (const r of regions) {
    if (candidates.length >= SCAN_LIMIT) break;
    const decoded = decodeString(r);
    if (decoded !== null) repairs.push({ kind: 'nested_json_string', before: clip(r.trim()), after: clip(decoded) });
    spansOf(decoded ?? r, candidates, gaps);
  }
  const overflow = regions.length > MAX_PER_LEVEL || candidates.length > MAX_PER_LEVEL;
  return { repairs, candidates: candidates.slice(0, MAX_PER_LEVEL), overflow, gaps };
}

/**
 * The candidate fragments of `text`, by level in order of preference: fenced blocks, then
 * XML-style tags, then the rest of the answer (levels without a `{` are left out; the rest is
 * always last). Each part of the answer belongs to one level. A fence, tag or think block written
 * inside a JSON span is not one, so an answer that is one JSON value is read whole. BOM,
 * think-block, whole-answer decoding and escaped-quote repairs are recorded in `repairs` at once.
 * Never throws.
 */
export function extractCandidates(text: string, repairs: GuardrailRepair[]): CandidateLevel[] {
  let t = text;
  if (t.charCodeAt(0) === 0xfeff) {
    repairs.push({ kind: 'bom' });
    t = t.slice(1);
  }
  if (t.includes('</') || /<(think|thinking|reasoning)\b/i.test(t)) t = dropThinkBlocks(t, repairs);
  const decoded = decodeString(t);
  if (decoded !== null) {
    repairs.push({ kind: 'nested_json_string', before: clip(t.trim()), after: clip(decoded) });
    t = decoded;
  } else {
    const unescaped = decodeEscaped(t);
    if (unescaped !== null) {
      repairs.push({
        kind: 'escaped_json',
        detail: 'every quote of the JSON was escaped (\\"): the answer was unescaped once',
        before: clip(t.trim()),
        after: clip(unescaped),
      });
      t = unescaped;
    }
  }
  const hasFence = t.includes('```') || t.includes('~~~');
  if (!hasFence && !t.includes('<')) return [level([t], undefined)];
  const ranges = jsonRanges(t);
  const levels: CandidateLevel[] = [];
  const fences = hasFence ? fencedRegions(t, ranges) : [];
  const fenced = fences.map((r) => r.body).filter((b) => b.includes('{'));
  if (fenced.length > 0) levels.push(level(fenced, { kind: 'fence', detail: `${fenced.length} fenced block(s)` }));
  const tags = t.includes('<') ? xmlRegions(t, ranges, fences) : [];
  const tagged = tags.map((r) => r.body).filter((b) => b.includes('{'));
  if (tagged.length > 0) levels.push(level(tagged, { kind: 'xml_tag', detail: `${tagged.length} tagged block(s)` }));
  const regions = [...fences, ...tags].sort((a, b) => a.start - b.start);
  levels.push(level([outside(t, regions)], undefined));
  return levels;
}
