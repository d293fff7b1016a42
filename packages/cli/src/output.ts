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

function sgr(open: number, close: number): (s: string) => string {
  return (s) => `\u001b[${open}m${s}\u001b[${close}m`;
}

/** Colour helpers, on or off. */
export function makeColors(enabled: boolean): Colors {
  const id = (s: string): string => s;
  if (!enabled) return { enabled, bold: id, dim: id, red: id, green: id, yellow: id, cyan: id };
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

/** Colour is used only on a TTY and only when NO_COLOR is unset or empty (no-color.org). */
export function colorEnabled(stream: OutputStream, env: Env): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

/**
 * Everything a command prints goes through here: human text or JSON on stdout, warnings and
 * errors on stderr, colour decided once per stream.
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
    this.c = makeColors(colorEnabled(io.stdout, io.env));
    this.ce = makeColors(colorEnabled(io.stderr, io.env));
  }

  /** One line of text on stdout. */
  line(s = ''): void {
    this.stdout.write(`${s}\n`);
  }

  /** One line of text on stderr. */
  errLine(s = ''): void {
    this.stderr.write(`${s}\n`);
  }

  /** A `warning: …` line on stderr. */
  warn(s: string): void {
    this.errLine(this.ce.yellow(`warning: ${s}`));
  }

  /** A value as indented JSON on stdout (the `--json` output of one-shot commands). */
  printJson(v: unknown): void {
    this.line(JSON.stringify(v, null, 2));
  }

  /** A value as one compact JSON line on stdout (streams: `events tail --json`). */
  printJsonLine(v: unknown): void {
    this.line(JSON.stringify(v));
  }

  /** A table with a bold header row; columns padded to their widest cell. */
  table(headers: string[], rows: string[][]): void {
    for (const l of formatTable(headers, rows, this.c)) this.line(l);
  }
}

/** Lays out a table as lines: columns separated by two spaces, last column unpadded. */
export function formatTable(headers: string[], rows: string[][], c: Colors = makeColors(false)): string[] {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const fmt = (cells: string[]): string =>
    cells
      .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [c.bold(fmt(headers)), ...rows.map(fmt)];
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
