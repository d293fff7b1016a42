// Finds the substitutions a shell runs in text it expands without splitting it into words: the body
// of a here-document whose delimiter is unquoted, and the word of a `${…}` the grammar leaves
// unparsed. There, `$(…)`, backticks and `$((…))` are live wherever they stand (single and double
// quotes are ordinary characters), and a backslash escapes only `$`, `` ` ``, `\` and a newline.
// The bash grammar's own reading of a here-document body misses backticks and misreads `\\$(`,
// so the body is scanned here instead, in one linear pass.

/** A command substitution found in expanded text: the script it runs and how it was written. */
export interface FoundSubstitution {
  script: string;
  label: '$(…)' | '`…`';
}

/** Expanded text: what a reader of it gets, the substitutions it runs, whether any expansion happens. */
export interface ExpandedText {
  /** the text with its escapes and line continuations removed, expansions left as written */
  text: string;
  substitutions: FoundSubstitution[];
  dynamic: boolean;
}

/** A character that can follow `$` to expand a parameter (`$HOME`, `$1`, `$@`, `$$`…). */
const PARAMETER = /[A-Za-z0-9_@*#?$!-]/;

/** Removes each backslash-newline (a line continuation); `\\` followed by a newline is kept. */
function joinContinuations(s: string): string {
  if (!s.includes('\\\n')) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (c === '\\' && i + 1 < s.length) {
      const n = s[i + 1] as string;
      if (n !== '\n') out += c + n;
      i++;
      continue;
    }
    out += c;
  }
  return out;
}

/** The body of a `<<-` here-document: leading tabs removed from every line. */
export function stripLeadingTabs(body: string): string {
  return body.replace(/^\t+/gm, '');
}

/**
 * Expands text as a here-document body with an unquoted delimiter is expanded (also used for the
 * word of a `${…}` the grammar leaves as plain text). Pure; linear in the text's length.
 */
export function expandText(raw: string): ExpandedText {
  const s = joinContinuations(raw);
  const out: ExpandedText = { text: '', substitutions: [], dynamic: false };
  let text = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i] as string;
    const n = s[i + 1];
    if (c === '\\' && n !== undefined && (n === '$' || n === '`' || n === '\\')) {
      text += n;
      i += 2;
      continue;
    }
    if (c === '`') {
      const close = closeBacktick(s, i + 1);
      const end = close < 0 ? s.length : close;
      out.substitutions.push({ script: s.slice(i + 1, end).replace(/\\([$`\\])/g, '$1'), label: '`…`' });
      out.dynamic = true;
      text += s.slice(i, close < 0 ? end : end + 1);
      i = close < 0 ? end : end + 1;
      continue;
    }
    if (c === '$' && n === '(') {
      const close = closeParen(s, i + 2);
      const end = close < 0 ? s.length : close;
      const inner = s.slice(i + 2, end);
      out.dynamic = true;
      if (close >= 0 && inner.length >= 2 && inner.startsWith('(') && inner.endsWith(')') && isArithmetic(inner)) {
        // `$((…))`: arithmetic; what stands inside is expanded the same way (`$((1 + $(cmd)))`)
        text += '$((';
        i += 3;
        continue;
      }
      out.substitutions.push({ script: inner, label: '$(…)' });
      text += s.slice(i, close < 0 ? end : end + 1);
      i = close < 0 ? end : end + 1;
      continue;
    }
    if (c === '$' && n !== undefined && (n === '{' || PARAMETER.test(n))) {
      // `${…}` and `$NAME`: a run-time value; the operand of `${x:-…}` is scanned as it comes
      out.dynamic = true;
    }
    text += c;
    i++;
  }
  out.text = text;
  return out;
}

/**
 * Whether `$(` + `inner` + `)` is arithmetic (`$((1+2))`), as bash decides it: `inner` is `(…)`
 * whose parentheses balance inside. `$((a) || (b))` is a command substitution of two subshells.
 */
function isArithmetic(inner: string): boolean {
  let depth = 0;
  for (let i = 1; i < inner.length - 1; i++) {
    const c = inner[i];
    if (c === '(') depth++;
    else if (c === ')' && --depth < 0) return false;
  }
  return depth === 0;
}

/** Index of the backtick closing one opened before `from` (`\` escapes the next character); -1 when none. */
function closeBacktick(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') i++;
    else if (c === '`') return i;
  }
  return -1;
}

/** Index after the closing quote of a `'…'` that opens before `from`; -1 when unterminated. */
function closeSingle(s: string, from: number): number {
  const j = s.indexOf("'", from);
  return j < 0 ? -1 : j + 1;
}

/** Index after the closing quote of a `$'…'` that opens before `from` (`\` escapes); -1 when unterminated. */
function closeAnsiC(s: string, from: number): number {
  for (let i = from; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') i++;
    else if (c === "'") return i + 1;
  }
  return -1;
}

/** Index after the closing quote of a `"…"` that opens before `from`; -1 when unterminated. */
function closeDouble(s: string, from: number): number {
  let i = from;
  while (i < s.length) {
    const c = s[i];
    if (c === '\\') i += 2;
    else if (c === '"') return i + 1;
    else if (c === '`') {
      const j = closeBacktick(s, i + 1);
      if (j < 0) return -1;
      i = j + 1;
    } else if (c === '$' && s[i + 1] === '(') {
      const j = closeParen(s, i + 2);
      if (j < 0) return -1;
      i = j + 1;
    } else if (c === '$' && s[i + 1] === '{') {
      const j = closeBrace(s, i + 2);
      if (j < 0) return -1;
      i = j + 1;
    } else i++;
  }
  return -1;
}

/** Index of the `}` closing a `${` opened before `from` (shell code: quotes quote); -1 when none. */
function closeBrace(s: string, from: number): number {
  let depth = 1;
  let i = from;
  while (i < s.length) {
    const c = s[i];
    if (c === '\\') i += 2;
    else if (c === "'") {
      i = closeSingle(s, i + 1);
      if (i < 0) return -1;
    } else if (c === '"') {
      i = closeDouble(s, i + 1);
      if (i < 0) return -1;
    } else if (c === '`') {
      const j = closeBacktick(s, i + 1);
      if (j < 0) return -1;
      i = j + 1;
    } else if (c === '$' && s[i + 1] === '(') {
      const j = closeParen(s, i + 2);
      if (j < 0) return -1;
      i = j + 1;
    } else {
      if (c === '{' && s[i - 1] === '$') depth++;
      else if (c === '}' && --depth === 0) return i;
      i++;
    }
  }
  return -1;
}

/** A word boundary in shell code: what may stand before a comment or a reserved word. */
function isBoundary(c: string | undefined): boolean {
  return (
    c === undefined ||
    c === ' ' ||
    c === '\t' ||
    c === '\n' ||
    c === ';' ||
    c === '&' ||
    c === '|' ||
    c === '(' ||
    c === ')'
  );
}

/** Whether the reserved word `word` stands at `i` (followed by a boundary). */
function reservedAt(s: string, i: number, word: string): boolean {
  return s.startsWith(word, i) && isBoundary(s[i - 1]) && isBoundary(s[i + word.length]);
}

/**
 * Index of the `)` closing a `$(` opened before `from`: the text is shell code (quotes, escapes,
 * comments, nested substitutions; a `case` pattern's `)` does not close). -1 when none.
 */
function closeParen(s: string, from: number): number {
  let depth = 1;
  /** the depths at which a `case` is open: a `)` there ends a pattern */
  const cases: number[] = [];
  let i = from;
  while (i < s.length) {
    const c = s[i] as string;
    if (c === '\\') {
      i += 2;
    } else if (c === "'") {
      i = closeSingle(s, i + 1);
      if (i < 0) return -1;
    } else if (c === '$' && s[i + 1] === "'") {
      i = closeAnsiC(s, i + 2);
      if (i < 0) return -1;
    } else if (c === '"') {
      i = closeDouble(s, i + 1);
      if (i < 0) return -1;
    } else if (c === '`') {
      const j = closeBacktick(s, i + 1);
      if (j < 0) return -1;
      i = j + 1;
    } else if (c === '$' && s[i + 1] === '{') {
      const j = closeBrace(s, i + 2);
      if (j < 0) return -1;
      i = j + 1;
    } else if (c === '#' && (i === from || isBoundary(s[i - 1]))) {
      const j = s.indexOf('\n', i);
      i = j < 0 ? s.length : j;
    } else {
      if (c === '(') depth++;
      else if (c === ')') {
        if (cases[cases.length - 1] === depth) {
          // the end of a case pattern
        } else if (--depth === 0) return i;
      } else if (c === 'c' && reservedAt(s, i, 'case')) cases.push(depth);
      else if (c === 'e' && reservedAt(s, i, 'esac') && cases[cases.length - 1] === depth) cases.pop();
      i++;
    }
  }
  return -1;
}
