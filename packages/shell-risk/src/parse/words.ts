// Bash quoting rules on plain text: what a word means once the shell has removed its quotes and
// escapes. Used by the model builder on the pieces the grammar identifies, and by the pattern
// compiler to split a pattern into words.

const SIMPLE_ESCAPES: Record<string, string> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
};

function isHex(c: string | undefined): boolean {
  return c !== undefined && /^[0-9a-fA-F]$/.test(c);
}

function isOctal(c: string | undefined): boolean {
  return c !== undefined && c >= '0' && c <= '7';
}

/**
 * Decodes the body of an ANSI-C string (`$'…'` without the `$'` and `'`): `\n`, `\xHH`, `\nnn`,
 * `\uHHHH`, `\UHHHHHHHH`, `\cX` and the simple escapes, as bash does.
 */
export function decodeAnsiC(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i] as string;
    if (c !== '\\' || i + 1 >= body.length) {
      out += c;
      continue;
    }
    const e = body[++i] as string;
    const simple = SIMPLE_ESCAPES[e];
    if (simple !== undefined) {
      out += simple;
    } else if (e === 'x' || e === 'u' || e === 'U') {
      const max = e === 'x' ? 2 : e === 'u' ? 4 : 8;
      let j = i + 1;
      while (j < body.length && j - i - 1 < max && isHex(body[j])) j++;
      if (j === i + 1) {
        out += `\\${e}`;
      } else {
        const code = Number.parseInt(body.slice(i + 1, j), 16);
        out += code <= 0x10ffff ? String.fromCodePoint(code) : '';
        i = j - 1;
      }
    } else if (isOctal(e)) {
      let j = i;
      while (j < body.length && j - i < 3 && isOctal(body[j])) j++;
      out += String.fromCharCode(Number.parseInt(body.slice(i, j), 8) & 0xff);
      i = j - 1;
    } else if (e === 'c' && i + 1 < body.length) {
      out += String.fromCharCode((body.charCodeAt(++i) & 0x1f) >>> 0);
    } else {
      out += `\\${e}`;
    }
  }
  return out;
}

/** Decodes literal text inside double quotes: only `\$ \` \" \\` and backslash-newline are escapes. */
export function decodeDoubleQuoted(content: string): string {
  if (!content.includes('\\')) return content;
  let out = '';
  for (let i = 0; i < content.length; i++) {
    const c = content[i] as string;
    if (c === '\\' && i + 1 < content.length) {
      const n = content[i + 1] as string;
      if (n === '$' || n === '`' || n === '"' || n === '\\') {
        out += n;
        i++;
        continue;
      }
      if (n === '\n') {
        i++;
        continue;
      }
    }
    out += c;
  }
  return out;
}

/** Decodes an unquoted word: `\x` → `x`, backslash-newline → nothing (`r\m` → `rm`). */
export function decodeUnquoted(text: string): string {
  if (!text.includes('\\')) return text;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '\\' && i + 1 < text.length) {
      const n = text[++i] as string;
      if (n !== '\n') out += n;
      continue;
    }
    out += c;
  }
  return out;
}

/**
 * Splits a policy pattern into words with shell-like quoting (`'…'`, `"…"`, backslash), without
 * expansions. Returns null when a quote is left open.
 */
export function splitPatternWords(pattern: string): string[] | null {
  const words: string[] = [];
  let cur = '';
  let inWord = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === ' ' || c === '\t' || c === '\n') {
      if (inWord) words.push(cur);
      cur = '';
      inWord = false;
      continue;
    }
    inWord = true;
    if (c === "'") {
      const end = pattern.indexOf("'", i + 1);
      if (end < 0) return null;
      cur += pattern.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      let body = '';
      while (j < pattern.length && pattern[j] !== '"') {
        if (pattern[j] === '\\' && j + 1 < pattern.length) body += pattern[j++];
        body += pattern[j++];
      }
      if (j >= pattern.length) return null;
      cur += decodeDoubleQuoted(body);
      i = j;
    } else if (c === '\\' && i + 1 < pattern.length) {
      cur += pattern[++i];
    } else {
      cur += c;
    }
  }
  if (inWord) words.push(cur);
  return words;
}
