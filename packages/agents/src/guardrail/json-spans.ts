/**
 * String-aware brace scanning for the extract step: where a JSON-looking span ends, and which parts
 * of a whole answer lie inside one — so a `<think>`, a fence or a tag written inside a JSON string
 * is content, not structure. Everything here is linear in the length of the text.
 */

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const DOUBLE_QUOTE = 0x22;
const SINGLE_QUOTE = 0x27;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LEFT_DOUBLE = 0x201c;
const RIGHT_DOUBLE = 0x201d;
const LEFT_SINGLE = 0x2018;
const RIGHT_SINGLE = 0x2019;

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** True when a single quote after `prev` (the previous non-space character) opens a string. */
function quoteOpens(prev: number): boolean {
  return prev === OPEN_BRACE || prev === OPEN_BRACKET || prev === COMMA || prev === COLON;
}

/**
 * True when the character `c` after `prev` opens a string, as the repair (syntax-repair.ts) reads
 * one: a `"` always; a `'` or a smart quote where a JSON token may start (after `{ [ , :`).
 */
function opensString(c: number, prev: number): boolean {
  if (c === DOUBLE_QUOTE) return true;
  if (c !== SINGLE_QUOTE && c !== LEFT_DOUBLE && c !== RIGHT_DOUBLE && c !== LEFT_SINGLE && c !== RIGHT_SINGLE)
    return false;
  return quoteOpens(prev);
}

/** True when `d` ends a string opened by `q` (the repair's rule: a smart quote is closed by either smart quote or the ASCII one). */
function closes(q: number, d: number): boolean {
  if (q === LEFT_DOUBLE || q === RIGHT_DOUBLE) return d === DOUBLE_QUOTE || d === LEFT_DOUBLE || d === RIGHT_DOUBLE;
  if (q === LEFT_SINGLE || q === RIGHT_SINGLE) return d === SINGLE_QUOTE || d === LEFT_SINGLE || d === RIGHT_SINGLE;
  return d === q;
}

/** Index after the string opened by the quote at `i`, or -1 when the text ends first. */
function skipString(s: string, i: number): number {
  const q = s.charCodeAt(i);
  const n = s.length;
  let j = i + 1;
  while (j < n) {
    const d = s.charCodeAt(j);
    if (d === BACKSLASH) j += 2;
    else if (closes(q, d)) return j + 1;
    else j++;
  }
  return -1;
}

/** True when the character at `i` starts a span: a `{`, or a `[` whose next non-space character is `{`. */
export function startsSpan(s: string, i: number): boolean {
  const c = s.charCodeAt(i);
  if (c === OPEN_BRACE) return true;
  if (c !== OPEN_BRACKET) return false;
  let j = i + 1;
  while (j < s.length && isSpace(s.charCodeAt(j))) j++;
  return s.charCodeAt(j) === OPEN_BRACE;
}

/** A span that reads as an object: `{` then a quoted or `name:` key, or `[{`. */
const JSON_START = /[[{]\s*(?:["'{\u201c\u201d\u2018\u2019]|[A-Za-z_$][\w$]*\s*:)/y;

/** True when the span opening at `i` reads as an object (see {@link JSON_START}): a stray `{` in prose does not. */
export function looksLikeJson(s: string, i: number): boolean {
  JSON_START.lastIndex = i;
  return JSON_START.test(s);
}

/** A top-level span of a text: `[start, end)`; `closed` false for one cut off at the end. */
export interface Span {
  start: number;
  end: number;
  closed: boolean;
}

/**
 * The top-level JSON spans of `text`, in order: every span that closes (the outermost one that
 * does), and — when a span that reads as an object never closes (an answer cut off, or a string
 * the scan could not follow) — that span to the end. A stray `{` in prose that never closes is no
 * span: the spans after it still are. One linear pass with one string state from the first brace
 * on: double-quoted strings are skipped with escapes; a single or smart quote opens a string only
 * where a JSON token may start (after `{ [ , :`), so prose apostrophes inside unquoted values do
 * not derail the scan; a smart-quoted string ends at either smart quote or the ASCII one, as the
 * repair (syntax-repair.ts) reads it.
 */
export function topSpans(text: string): Span[] {
  const out: number[] = [];
  const opens: number[] = [];
  /** `out.length` when each open brace was pushed: a closing span replaces the spans inside it. */
  const marks: number[] = [];
  const n = text.length;
  let prev = -1;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (opens.length === 0) {
      if (startsSpan(text, i)) {
        opens.push(i);
        marks.push(out.length);
        prev = c;
      }
      i++;
      continue;
    }
    if (opensString(c, prev)) {
      i = skipString(text, i);
      if (i < 0) break;
      prev = c;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      opens.push(i);
      marks.push(out.length);
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      const start = opens.pop()!;
      out.length = marks.pop()!;
      out.push(start, i + 1);
    }
    if (!isSpace(c)) prev = c;
    i++;
  }
  const cut = opens.find((o) => looksLikeJson(text, o));
  const spans: Span[] = [];
  for (let k = 0; k < out.length && (cut === undefined || out[k]! < cut); k += 2)
    spans.push({ start: out[k]!, end: out[k + 1]!, closed: true });
  // the spans found after `cut` lie inside it
  if (cut !== undefined) spans.push({ start: cut, end: n, closed: false });
  return spans;
}

/**
 * The parts of `text` that belong to a JSON span, as sorted, disjoint `[start, end)` pairs (see
 * {@link topSpans}): a think tag, fence or tag inside one — also inside one that never closes —
 * is its content.
 */
export function jsonRanges(text: string): number[] {
  return topSpans(text).flatMap((s) => [s.start, s.end]);
}

/** True when position `p` lies inside one of `ranges` (as {@link jsonRanges} returns them). */
export function inRanges(ranges: readonly number[], p: number): boolean {
  let lo = 0;
  let hi = ranges.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (p < ranges[2 * mid]!) hi = mid - 1;
    else if (p >= ranges[2 * mid + 1]!) lo = mid + 1;
    else return true;
  }
  return false;
}
