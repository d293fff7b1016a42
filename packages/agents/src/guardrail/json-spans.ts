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

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** True when a single quote after `prev` (the previous non-space character) opens a string. */
function quoteOpens(prev: number): boolean {
  return prev === OPEN_BRACE || prev === OPEN_BRACKET || prev === COMMA || prev === COLON;
}

/** Index after the string opened by the quote at `i`, or -1 when the text ends first. */
function skipString(s: string, i: number): number {
  const q = s.charCodeAt(i);
  const n = s.length;
  let j = i + 1;
  while (j < n) {
    const d = s.charCodeAt(j);
    if (d === BACKSLASH) j += 2;
    else if (d === q) return j + 1;
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

/**
 * Scans a brace span starting at `start` (a `{` or `[`); returns the index after its matching close,
 * or -1 when the text ends first. Double-quoted strings are skipped with escapes; a single quote
 * opens a string only where a JSON token may start (after `{ [ , :`), so prose apostrophes inside
 * unquoted values do not derail the scan.
 */
export function scanSpan(s: string, start: number): number {
  let depth = 0;
  let prev = -1;
  let i = start;
  const n = s.length;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c === DOUBLE_QUOTE || (c === SINGLE_QUOTE && quoteOpens(prev))) {
      i = skipString(s, i);
      if (i < 0) return -1;
      prev = c;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 0) return i + 1;
    }
    if (!isSpace(c)) prev = c;
    i++;
  }
  return -1;
}

/** A span opening the text that reads as an object: `{` then a quoted or `name:` key, or `[{`. */
const JSON_START = /^[[{]\s*(?:["'{]|[A-Za-z_$][\w$]*\s*:)/;

/**
 * The parts of `text` that belong to a JSON span, as sorted, disjoint `[start, end)` pairs: every
 * span that closes (the outermost one that does), and — when the text itself opens with a span that
 * never closes (an answer cut off) — that span to the end. One pass with one string state from the
 * first brace on, the same rules as {@link scanSpan}.
 */
export function jsonRanges(text: string): number[] {
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
    if (c === DOUBLE_QUOTE || (c === SINGLE_QUOTE && quoteOpens(prev))) {
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
  const first = opens[0];
  if (first !== undefined) {
    let lead = 0;
    while (lead < n && isSpace(text.charCodeAt(lead))) lead++;
    if (first === lead && JSON_START.test(text.slice(first, first + 256))) return [first, n];
  }
  return out;
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
