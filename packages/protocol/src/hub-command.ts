import { FingerError } from './finger-error.js';
import { jsonErrorPosition } from './json-error-position.js';
import { jsonLimitError } from './json-limits.js';

/** A parsed `/hub target=<id> [blocking=…] [timeout=<ms>] {json}` command (§3.5). */
export interface HubCommand {
  target: string;
  blocking: boolean;
  timeout_ms?: number;
  payload: unknown;
}

const KEYS = new Set(['target', 'blocking', 'timeout']);
const TARGET_RE = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,255}$/;
const MAX_TIMEOUT_MS = 86_400_000;

function syntaxError(position: number, expected: string, found: string, message?: string): FingerError {
  return new FingerError(
    'E_BAD_HUB_SYNTAX',
    message ?? `bad /hub syntax at position ${position}: expected ${expected}, found ${found}`,
    { position, expected, found },
  );
}

function describe(s: string): string {
  if (!s) return 'end of input';
  const t = s.length > 20 ? `${s.slice(0, 20)}…` : s;
  return JSON.stringify(t);
}

/**
 * `/\s/.test(text[i])` without a one-character string and a regular expression per character:
 * the same set (ECMAScript WhiteSpace and LineTerminator).
 */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** True when the text is meant as a direct dispatch (starts with `/hub` as a word). */
export function isHubCommand(text: string): boolean {
  return /^\s*\/hub(\s|$)/.test(text);
}

/**
 * Parses a `/hub` command. Throws E_BAD_HUB_SYNTAX whose details give the 0-based `position` in
 * `text`, what was `expected` and what was `found`. Options are `key=value` words; the payload is
 * the JSON value that follows them (default `{}`). Throws E_INVALID_ARGS (`details.limit`) for a
 * payload nesting past MAX_JSON_DEPTH, counted as the `payload` member of a message body.
 */
export function parseHubCommand(text: string): HubCommand {
  const start = text.search(/\S/);
  if (start < 0 || !text.startsWith('/hub', start))
    throw syntaxError(Math.max(start, 0), '"/hub"', describe(text.trim()));
  let i = start + 4;
  const n = text.length;
  const seen = new Map<string, string>();
  let payloadStart = -1;
  while (i < n) {
    const ws = i;
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    if (i >= n) break;
    if (i === ws) throw syntaxError(i, 'whitespace', describe(text.slice(i)));
    const ch = text[i]!;
    if (ch === '{' || ch === '[' || ch === '"') {
      payloadStart = i;
      break;
    }
    const wordStart = i;
    while (i < n && !isSpace(text.charCodeAt(i))) i++;
    const word = text.slice(wordStart, i);
    const eq = word.indexOf('=');
    if (eq <= 0)
      throw syntaxError(wordStart, 'key=value (target, blocking, timeout) or a JSON payload', describe(word));
    const key = word.slice(0, eq);
    const value = word.slice(eq + 1);
    if (!KEYS.has(key)) throw syntaxError(wordStart, 'one of target=, blocking=, timeout=', describe(word));
    if (seen.has(key))
      throw syntaxError(
        wordStart,
        `a single ${key}=`,
        describe(word),
        `bad /hub syntax at position ${wordStart}: ${key}= given twice`,
      );
    const valuePos = wordStart + eq + 1;
    if (key === 'target' && !TARGET_RE.test(value))
      throw syntaxError(valuePos, 'a target id (module, module.tool or agent id)', describe(value));
    if (key === 'blocking' && value !== 'true' && value !== 'false')
      throw syntaxError(valuePos, 'true or false', describe(value));
    if (key === 'timeout') {
      const ms = Number(value);
      if (!/^\d+$/.test(value) || ms < 1 || ms > MAX_TIMEOUT_MS)
        throw syntaxError(valuePos, `a timeout in ms (1..${MAX_TIMEOUT_MS})`, describe(value));
    }
    seen.set(key, value);
  }
  const target = seen.get('target');
  if (target === undefined)
    throw syntaxError(
      payloadStart >= 0 ? payloadStart : n,
      'target=<id>',
      describe(payloadStart >= 0 ? text.slice(payloadStart) : ''),
    );
  let payload: unknown = {};
  if (payloadStart >= 0) {
    const json = text.slice(payloadStart);
    try {
      payload = JSON.parse(json);
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      const rel = jsonErrorPosition(json);
      const pos = payloadStart + (rel < 0 ? 0 : rel);
      throw syntaxError(
        pos,
        'a valid JSON payload',
        describe(text.slice(pos)),
        `bad /hub syntax at position ${pos}: invalid JSON payload (${msg})`,
      );
    }
    const tooDeep = jsonLimitError(payload, 'payload', { base: 2 });
    if (tooDeep) throw tooDeep;
  }
  const out: HubCommand = { target, blocking: seen.get('blocking') !== 'false', payload };
  const timeout = seen.get('timeout');
  if (timeout !== undefined) out.timeout_ms = Number(timeout);
  return out;
}
