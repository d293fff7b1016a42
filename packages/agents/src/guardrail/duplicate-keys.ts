/**
 * Duplicate-key detection over valid JSON text. `JSON.parse` silently keeps the last of two equal
 * keys, so `{"decision":"reject","decision":"dispatch_module"}` would pass as a dispatch; the
 * guardrail must see both values and refuse to pick one.
 */

/** Deepest nesting the scanner follows; deeper text is reported as {@link TOO_DEEP}. */
export const MAX_DEPTH = 128;

/** Returned by {@link findDuplicateConflict} when the text nests deeper than {@link MAX_DEPTH}. */
export const TOO_DEEP = '\u0000too-deep';

class Scanner {
  i = 0;
  conflict: string | undefined;
  constructor(private readonly s: string) {}

  ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 32 || c === 10 || c === 13 || c === 9) this.i++;
      else break;
    }
  }

  string(): string {
    const s = this.s;
    const start = this.i;
    this.i++;
    let escaped = false;
    while (this.i < s.length) {
      const c = s[this.i]!;
      if (c === '\\') {
        escaped = true;
        this.i += 2;
        continue;
      }
      if (c === '"') break;
      this.i++;
    }
    this.i++;
    const raw = s.slice(start, this.i);
    return escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
  }

  value(depth: number, path: string): void {
    if (this.conflict !== undefined) return;
    if (depth > MAX_DEPTH) {
      this.conflict = TOO_DEEP;
      return;
    }
    this.ws();
    const c = this.s[this.i];
    if (c === '{') this.object(depth, path);
    else if (c === '[') {
      this.i++;
      this.ws();
      if (this.s[this.i] === ']') {
        this.i++;
        return;
      }
      for (let k = 0; this.conflict === undefined; k++) {
        this.value(depth + 1, `${path}[${k}]`);
        this.ws();
        if (this.s[this.i++] !== ',') return;
      }
    } else if (c === '"') this.string();
    else {
      const s = this.s;
      while (this.i < s.length && !',]} \n\r\t'.includes(s[this.i]!)) this.i++;
    }
  }

  object(depth: number, path: string): void {
    this.i++;
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return;
    }
    const seen = new Map<string, string>();
    while (this.conflict === undefined) {
      this.ws();
      const key = this.string();
      this.ws();
      this.i++; // ':'
      this.ws();
      const start = this.i;
      this.value(depth + 1, `${path}.${key}`);
      const raw = this.s.slice(start, this.i);
      const prev = seen.get(key);
      if (prev === undefined) seen.set(key, raw);
      else if (canonical(prev) !== canonical(raw)) this.conflict = `${path}.${key}`;
      this.ws();
      if (this.s[this.i++] !== ',') return;
    }
  }
}

function canonical(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw));
  } catch {
    return raw;
  }
}

/**
 * The JSON path (`$.decision`) of the first key that appears twice in one object with different
 * values, {@link TOO_DEEP} when the text nests too deeply, else undefined. `json` must be valid JSON.
 */
export function findDuplicateConflict(json: string): string | undefined {
  const sc = new Scanner(json);
  try {
    sc.value(0, '$');
  } catch {
    return undefined;
  }
  return sc.conflict;
}
