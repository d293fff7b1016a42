/**
 * What `JSON.parse` hides in valid JSON text. It silently keeps the last of two equal keys, so
 * `{"decision":"reject","decision":"dispatch_module"}` would pass as a dispatch: the guardrail must
 * see both values and refuse to pick one. And it reads `1e999` as Infinity (serialised as null),
 * `1e-999` as 0, `12345678901234567890` as …7000 and `9.007199254740993e15` as …992: a number must
 * read back as written.
 */

/** Deepest nesting the scanner follows; deeper text is reported as `tooDeep`. */
export const MAX_DEPTH = 128;

/** What {@link scanJson} found; empty when nothing. */
export interface JsonScan {
  /** JSON path (`$.decision`) of the first key that appears twice in one object with different values. */
  duplicate?: string;
  /** The first number that does not read back as written: `$.path: why`. */
  number?: string;
  /** True when the text nests deeper than {@link MAX_DEPTH}. */
  tooDeep?: true;
}

/**
 * Why the JSON number `raw` does not read back as written, or undefined when it does: out of range
 * (`1e999`), rounded to zero (`1e-999`), an integer spelt out beyond ±2^53
 * (`12345678901234567890`), more significant digits than a double holds (over 17), or any other
 * number whose value is not exactly the decimal written (`9.007199254740993e15`,
 * `0.12345678901234567`, `3e-324`): its significant digits and decimal exponent must be those of
 * the shortest form that reads back as the parsed double. Allocation-free but for `Number()` on
 * short plain numbers (at most 15 characters, which always read back); every number of a 256 KiB
 * answer goes through it.
 */
export function numberProblem(raw: string): string | undefined {
  let end = raw.length;
  for (let k = 0; k < raw.length; k++) {
    const c = raw.charCodeAt(k);
    if (c === 101 || c === 69) {
      end = k;
      break;
    }
  }
  const exp = end < raw.length;
  if (raw.length <= 15 && !exp) return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) return `${raw} is out of range`;
  // significant digits: from the first non-zero digit to the last one, the point not counted
  let digits = 0;
  let zeros = 0;
  let first = -1; // index in raw of the first significant digit
  let last = -1; // index in raw of the last non-zero digit
  let point = end; // index in raw of the decimal point (end when none)
  for (let k = 0; k < end; k++) {
    const c = raw.charCodeAt(k);
    if (c === 46) point = k;
    else if (c === 48) {
      if (digits > 0) zeros++;
    } else if (c >= 49 && c <= 57) {
      if (first < 0) first = k;
      last = k;
      digits += zeros + 1;
      zeros = 0;
    }
  }
  if (n === 0) return digits === 0 ? undefined : `${raw} reads as 0`;
  if (!exp && Math.abs(n) > Number.MAX_SAFE_INTEGER)
    return `${raw} is beyond the integers a number keeps exactly (±2^53)`;
  if (digits > 17) return `${raw} has more digits than a number keeps (17)`;
  // The written decimal is d1.d2…dk × 10^e; the double's shortest round-trip form must be the same.
  const shortest = Math.abs(n).toExponential(); // "d.ddde+x": the fewest digits that read back as n
  const mark = shortest.indexOf('e');
  const sig = shortest.charCodeAt(0) === 48 ? '' : shortest[0]! + shortest.slice(2, mark); // no trailing zeros
  const writtenExp = (first < point ? point - first - 1 : point - first) + (exp ? Number(raw.slice(end + 1)) : 0);
  let same = sig.length === digits && Number(shortest.slice(mark + 1)) === writtenExp;
  for (let k = first, j = 0; same && k <= last; k++) {
    const c = raw.charCodeAt(k);
    if (c !== 46) same = c === sig.charCodeAt(j++);
  }
  return same ? undefined : `${raw} does not read back as written (it reads as ${String(n)})`;
}

/** True for the characters that end a JSON literal or number: `, ] }` and whitespace. */
function ends(c: number): boolean {
  return c === 44 || c === 93 || c === 125 || c === 32 || c === 10 || c === 13 || c === 9;
}

function canonical(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw));
  } catch {
    return raw;
  }
}

/** A single pass over valid JSON; stops at the first finding. */
class Scanner {
  private i = 0;
  found: JsonScan | undefined;
  /** Keys and indices down to the current value; joined into a path only for a finding. */
  private readonly path: (string | number)[] = [];

  constructor(private readonly s: string) {}

  private where(): string {
    return `$${this.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('')}`;
  }

  private ws(): void {
    const s = this.s;
    let i = this.i;
    let c = s.charCodeAt(i);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = s.charCodeAt(++i);
    this.i = i;
  }

  /** Skips the string at `i`; returns its text when `decode` (keys). */
  private string(decode: boolean): string {
    const s = this.s;
    const start = this.i;
    let i = start + 1;
    let escaped = false;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 34 || Number.isNaN(c)) break;
      if (c === 92) {
        escaped = true;
        i += 2;
      } else i++;
    }
    this.i = i + 1;
    if (!decode) return '';
    return escaped ? (JSON.parse(s.slice(start, this.i)) as string) : s.slice(start + 1, i);
  }

  value(depth: number): void {
    if (depth > MAX_DEPTH) {
      this.found = { tooDeep: true };
      return;
    }
    this.ws();
    const s = this.s;
    const c = s.charCodeAt(this.i);
    if (c === 123) this.object(depth);
    else if (c === 91) this.array(depth);
    else if (c === 34) this.string(false);
    else {
      const start = this.i;
      let i = start;
      while (i < s.length && !ends(s.charCodeAt(i))) i++;
      this.i = i;
      if (c === 45 || (c >= 48 && c <= 57)) {
        const problem = numberProblem(s.slice(start, i));
        if (problem !== undefined) this.found = { number: `${this.where()}: ${problem}` };
      }
    }
  }

  private array(depth: number): void {
    this.i++;
    this.ws();
    if (this.s.charCodeAt(this.i) === 93) {
      this.i++;
      return;
    }
    this.path.push(0);
    for (let k = 0; this.found === undefined; k++) {
      this.path[this.path.length - 1] = k;
      this.value(depth + 1);
      this.ws();
      if (this.s.charCodeAt(this.i++) !== 44) break;
    }
    this.path.pop();
  }

  private object(depth: number): void {
    this.i++;
    this.ws();
    if (this.s.charCodeAt(this.i) === 125) {
      this.i++;
      return;
    }
    // per key: the first value's text, and its canonical form once it was needed (computed once,
    // so a key repeated many times costs each repeat only its own text)
    const seen = new Map<string, { raw: string; canon?: string }>();
    this.path.push('');
    while (this.found === undefined) {
      this.ws();
      const key = this.string(true);
      this.path[this.path.length - 1] = key;
      this.ws();
      this.i++; // ':'
      this.ws();
      const start = this.i;
      this.value(depth + 1);
      if (this.found !== undefined) break;
      const raw = this.s.slice(start, this.i);
      const prev = seen.get(key);
      if (prev === undefined) seen.set(key, { raw });
      else if (prev.raw !== raw && (prev.canon ??= canonical(prev.raw)) !== canonical(raw))
        this.found = { duplicate: this.where() };
      this.ws();
      if (this.s.charCodeAt(this.i++) !== 44) break;
    }
    this.path.pop();
  }
}

/**
 * Scans valid JSON text (as `JSON.parse` accepted it, or as the repair wrote it) for a key repeated
 * with a different value, a number that does not read back as written, and nesting deeper than
 * {@link MAX_DEPTH}; reports the first found. Linear in the text.
 */
export function scanJson(json: string): JsonScan {
  const sc = new Scanner(json);
  try {
    sc.value(0);
  } catch {
    return {};
  }
  return sc.found ?? {};
}
