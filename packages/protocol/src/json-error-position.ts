/**
 * Finds where JSON text first goes wrong: the 0-based index of the offending character (the
 * text's length when it ends too early), or -1 when the text is valid JSON. V8's JSON.parse
 * messages do not always carry a position, and users need a caret under the exact spot.
 */
export function jsonErrorPosition(text: string): number {
  let i = 0;
  const n = text.length;
  const ws = () => {
    while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const fail = (at: number): never => {
    throw at;
  };
  const literal = (word: string) => {
    for (let k = 0; k < word.length; k++) if (text[i + k] !== word[k]) fail(i + k);
    i += word.length;
  };
  const string = () => {
    i++; // opening quote
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) fail(i);
      if (c === 0x5c) {
        const e = text[i + 1];
        if (e === 'u') {
          for (let k = 2; k < 6; k++) if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) fail(i + k);
          i += 6;
          continue;
        }
        if (e === undefined || !'"\\/bfnrt'.includes(e)) fail(i + 1);
        i += 2;
        continue;
      }
      i++;
    }
    fail(n);
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i, i + 400));
    if (!m || m[0] === '-' || m[0].length === 0) fail(i + (text[i] === '-' ? 1 : 0));
    i += m![0].length;
  };
  const value = (depth: number): void => {
    if (depth > 1000) fail(i);
    ws();
    if (i >= n) fail(n);
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail(i >= n ? n : i);
        string();
        ws();
        if (text[i] !== ':') fail(i >= n ? n : i);
        i++;
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail(i >= n ? n : i);
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail(i >= n ? n : i);
      }
    }
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) return number();
    fail(i);
  };
  try {
    value(0);
    ws();
    return i < n ? i : -1;
  } catch (at) {
    return typeof at === 'number' ? at : 0;
  }
}

/** Where JSON text goes wrong, for a person: see {@link jsonSyntaxProblem}. */
export interface JsonSyntaxProblem {
  /** 0-based index of the offending character (the text's length when it ends too early). */
  position: number;
  /** 1-based line and column of `position`. */
  line: number;
  column: number;
  /** JSON.parse's reason without the text it echoes and without its position ("Unexpected token 'x'"). */
  reason: string;
}

/**
 * The line, column and reason of a JSON.parse `error` thrown for `text`, so a start-up error can
 * name the file and the spot ("line 3 column 8: Unexpected token 'x'"). V8 on Node 20 echoes the
 * text (several lines) instead of a position; the position comes from {@link jsonErrorPosition}.
 */
export function jsonSyntaxProblem(text: string, error: unknown): JsonSyntaxProblem {
  const found = jsonErrorPosition(text);
  const position = found < 0 ? 0 : found;
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  const column = position - (before.lastIndexOf('\n') + 1) + 1;
  const message = error instanceof Error ? error.message : String(error);
  const reason =
    message
      .replace(/, (?:\.\.\.)?"[\s\S]*" is not valid JSON$/, '')
      .replace(/^(?:\.\.\.)?"[\s\S]*" is not valid JSON$/, 'not valid JSON')
      .replace(/ in JSON at position \d+[\s\S]*$/, '')
      .replace(/ at position \d+[\s\S]*$/, '')
      .split('\n')[0]!
      .trim() || 'not valid JSON';
  return { position, line, column, reason };
}

/** `line L column C: <reason>` of {@link jsonSyntaxProblem}, one line. */
export function describeJsonSyntax(text: string, error: unknown): string {
  const p = jsonSyntaxProblem(text, error);
  return `line ${p.line} column ${p.column}: ${p.reason}`;
}
