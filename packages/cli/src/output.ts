import { randomBytes } from 'node:crypto';

import type { Env } from './client.js';

/** Where the CLI writes: `process.stdout`/`stderr` in real use, a string buffer in tests. */
export interface OutputStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
}

/** Tiny ANSI colour helpers; every function is the identity when colour is off. */
export interface Colors {
  enabled: boolean;
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

type SgrCode = (n: number) => string;

const realSgr: SgrCode = (n) => `\u001b[${n}m`;

/*
 * Terminal safety. Nothing the daemon (or anything else outside the CLI) sends may reach the
 * terminal as a control: the CLI's human output shows every C0 control (newline included: a value
 * never starts a line of its own), DEL, every C1 control and the bidi/invisible formatting
 * characters as visible escapes (`\x1b`, `\n`, `\u202e`). The only escape sequences written are
 * the CLI's own colours: the Colors of an Output do not emit SGR directly but a tag carrying a
 * per-process secret, which the Output turns into SGR after escaping everything else, so a value
 * cannot forge a colour either.
 */

/** What {@link escapeControls} makes visible. */
const UNSAFE =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function visible(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const cp = ch.charCodeAt(0);
  return cp < 0x80 ? `\\x${cp.toString(16).padStart(2, '0')}` : `\\u${cp.toString(16).padStart(4, '0')}`;
}

/**
 * `s` with every control and bidi/invisible formatting character shown as an escape (`\x1b`,
 * `\n`, `\u202e`): safe to print on a terminal, one line.
 */
export function escapeControls(s: string): string {
  return s.replace(UNSAFE, visible);
}

const NONCE = randomBytes(8).toString('hex');
const TAG_RE = new RegExp(`\u{E000}${NONCE}:(\\d+)\u{E001}`, 'gu');
const taggedSgr: SgrCode = (n) => `\u{E000}${NONCE}:${n}\u{E001}`;

/** Escapes what is outside the colour tags of `s`, keeping the tags (tagged: true) or turning them into SGR. */
function escapeOutsideTags(s: string, tagged: boolean): string {
  let out = '';
  let last = 0;
  for (const m of s.matchAll(TAG_RE)) {
    out += escapeControls(s.slice(last, m.index)) + (tagged ? m[0] : realSgr(Number(m[1])));
    last = m.index + m[0].length;
  }
  return out + escapeControls(s.slice(last));
}

/** How many columns `s` (tags left in) takes once printed. */
function visibleLength(s: string): number {
  return s.replace(TAG_RE, '').length;
}

/** One line for the terminal: controls of `s` escaped, the CLI's own colour tags turned into SGR. */
export function terminalLine(s: string): string {
  return escapeOutsideTags(s, false);
}

/** What JSON.stringify leaves raw in a string (it escapes C0 itself): DEL, C1, bidi/invisible characters. */
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/g;

/**
 * JSON text (from JSON.stringify) with what it leaves raw as `\uXXXX` escapes: the same JSON value,
 * safe on a terminal. Those characters occur only inside strings, where the escape is valid.
 */
function terminalJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function colors(enabled: boolean, code: SgrCode): Colors {
  const id = (s: string): string => s;
  if (!enabled) return { enabled, bold: id, dim: id, red: id, green: id, yellow: id, cyan: id };
  const sgr =
    (open: number, close: number) =>
    (s: string): string =>
      `${code(open)}${s}${code(close)}`;
  return {
    enabled,
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
  };
}

/**
 * Colour helpers, on or off, writing SGR directly: for text the CLI writes itself (commander's
 * messages). What goes through an {@link Output} uses its own `c`/`ce`.
 */
export function makeColors(enabled: boolean): Colors {
  return colors(enabled, realSgr);
}

/** Colour is used only on a TTY and only when NO_COLOR is unset or empty (no-color.org). */
export function colorEnabled(stream: OutputStream, env: Env): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

/**
 * Everything a command prints goes through here: human text or JSON on stdout, warnings and
 * errors on stderr, colour decided once per stream. Human text is made terminal-safe here, the one
 * place every line passes: {@link escapeControls} on everything but the colours `c`/`ce` added.
 */
export class Output {
  /** True with `--json`: commands print one JSON document (or JSON lines) instead of text. */
  readonly json: boolean;
  /** Colours for stdout. */
  readonly c: Colors;
  /** Colours for stderr. */
  readonly ce: Colors;
  private readonly stdout: OutputStream;
  private readonly stderr: OutputStream;

  constructor(io: { stdout: OutputStream; stderr: OutputStream; env: Env }, json: boolean) {
    this.json = json;
    this.stdout = io.stdout;
    this.stderr = io.stderr;
    this.c = colors(colorEnabled(io.stdout, io.env), taggedSgr);
    this.ce = colors(colorEnabled(io.stderr, io.env), taggedSgr);
  }

  /** One line of text on stdout; a newline inside `s` is shown as `\n` (use {@link block} for text of several lines). */
  line(s = ''): void {
    this.stdout.write(`${terminalLine(s)}\n`);
  }

  /** Text of several lines (a tool's result, a schema) on stdout, one line per `\n` of it. */
  block(text: string): void {
    for (const l of text.split(/\r?\n/)) this.line(l);
  }

  /** Streamed text (a model's output as it comes) on stdout, as is but for its controls: only its newlines stay. */
  text(chunk: string): void {
    this.stdout.write(chunk.split('\n').map(terminalLine).join('\n'));
  }

  /** One line of text on stderr. */
  errLine(s = ''): void {
    this.stderr.write(`${terminalLine(s)}\n`);
  }

  /** A `warning: …` line on stderr. */
  warn(s: string): void {
    this.errLine(this.ce.yellow(`warning: ${s}`));
  }

  /** A value as indented JSON on stdout (the `--json` output of one-shot commands). */
  printJson(v: unknown): void {
    this.stdout.write(`${terminalJson(JSON.stringify(v, null, 2))}\n`);
  }

  /** A value as one compact JSON line on stdout (streams: `events tail --json`). */
  printJsonLine(v: unknown): void {
    this.stdout.write(`${terminalJson(JSON.stringify(v))}\n`);
  }

  /** A table with a bold header row; columns padded to their widest cell. */
  table(headers: string[], rows: string[][]): void {
    for (const l of formatTable(headers, rows, this.c)) this.line(l);
  }
}

/**
 * Lays out a table as lines: columns separated by two spaces, last column unpadded. Controls in a
 * cell are escaped first ({@link escapeControls}), so a cell is one line and the columns line up.
 */
export function formatTable(headers: string[], rows: string[][], c: Colors = makeColors(false)): string[] {
  const safe = (cells: string[]): string[] => cells.map((cell) => escapeOutsideTags(cell, true));
  const head = safe(headers);
  const body = rows.map(safe);
  const widths = head.map((h, i) => Math.max(visibleLength(h), ...body.map((r) => visibleLength(r[i] ?? ''))));
  const fmt = (cells: string[]): string =>
    cells
      .map((cell, i) =>
        i === cells.length - 1 ? cell : cell + ' '.repeat(Math.max(0, (widths[i] ?? 0) - visibleLength(cell))),
      )
      .join('  ')
      .trimEnd();
  return [c.bold(fmt(head)), ...body.map(fmt)];
}

/** A result for people: strings raw, everything else as indented JSON. */
export function formatResult(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined) return 'null';
  return JSON.stringify(v, null, 2);
}

/**
 * A one-line summary of an event's `data`: `key=value` pairs (strings bare, the rest JSON),
 * cut with `…` past `max` characters.
 */
export function summarizeData(data: unknown, max = 160): string {
  let s: string;
  if (typeof data === 'object' && data !== null && !Array.isArray(data)) {
    s = Object.entries(data as Record<string, unknown>)
      .map(([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) && v !== '' ? v : JSON.stringify(v)}`)
      .join(' ');
  } else {
    s = data === undefined ? '' : JSON.stringify(data);
  }
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** Seconds as `1d 2h 3m 4s`, leaving out leading zero units. */
export function formatDuration(seconds: number): string {
  let s = Math.max(0, Math.floor(seconds));
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
  ] as const) {
    if (s >= size || parts.length) {
      parts.push(`${Math.floor(s / size)}${unit}`);
      s %= size;
    }
  }
  parts.push(`${s}s`);
  return parts.join(' ');
}
