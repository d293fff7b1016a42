/**
 * The guardrail's own JSON repair: one linear pass that fixes the *structure* of a model's near-JSON
 * and never what a value says. It replaced jsonrepair, which rewrites string contents (`my\ dir` →
 * `my dir`, `\d` → `d`, `'Don't'` → `Don"t`), turns `NaN` and `0755` into strings, and is
 * quadratic (46 s at 16 KB) on unbalanced quotes.
 *
 * Repaired: `'…'` and smart-quoted strings (`“…”`, `‘…’`), bare keys (`{decision: …}`), Python
 * `True`/`False`/`None` and JavaScript `undefined` (read as `null`), `//` and `/* *\/` comments,
 * trailing and leading commas, a comma missing between members on different lines, a colon missing
 * between a quoted key and a value (`{"decision" "dispatch_module"}`), strings joined with `+`
 * (`"a " + "b"`), a `"` inside a double-quoted value that cannot end it (`"say "hi" now"`: after
 * the quote comes neither `, } ] :`, a line end, nor a `,` followed by a member), raw control
 * characters inside strings, and a cut-off end (open strings and brackets closed, a key or value
 * missing at the cut read as `null`). Each repair that goes beyond quoting and punctuation is named
 * in `fixes`.
 *
 * Refused (with the reason in `problem`): an unquoted value (`rm -rf x`, `NaN`, `Infinity`), a
 * number not in JSON's grammar (`0x10`, `0o755`, `0755`, `+1`, `.5`), a quote inside a
 * single-quoted string that ends it early (`'Don't'`), a string mixing an invalid escape with a JSON
 * escape (`"C:\Users\new"`: `\n` is a newline or not), `\'` outside a single-quoted string, a
 * mismatched bracket followed by more than brackets, a missing colon before what cannot be a
 * value, `+` joining anything but two strings, two commas, text after the value.
 * A string whose only escapes are invalid ones (`\d`, `\ `, `\$`) besides `\"` keeps them exactly
 * as written: `"^\d+$"` reads `^\d+$`.
 */

/** Deepest nesting the repair follows (the duplicate-key scan stops at the same depth). */
export const MAX_REPAIR_DEPTH = 128;

/** The outcome of {@link repairJson}. */
export type SyntaxRepair =
  | {
      ok: true;
      /** Valid JSON text: the input with its structure repaired. */
      json: string;
      /** True when the text ended inside the value (strings or brackets closed at the cut). */
      cut: boolean;
      /**
       * The values the repair had to finish at the cut, as JSON texts of their paths (`["payload"]`,
       * `["tool_calls",0]`; `[]` the root): every container it closed, a member whose value it
       * filled in (`"payload":` → null), and a scalar ending at the very end of the text (`0.8`
       * may have been `0.85`, a string without its closing quote). Empty when nothing was cut.
       */
      incomplete: ReadonlySet<string>;
      /**
       * What the repair did beyond quoting and punctuation, once each, in the order first met
       * (`a missing colon added after "decision"`, `strings joined with +`, …); recorded with the
       * `syntax` repair so a person sees how the answer was read.
       */
      fixes: string[];
    }
  | { ok: false; problem: string };

const LITERALS: Record<string, string> = {
  true: 'true',
  false: 'false',
  null: 'null',
  True: 'true',
  False: 'false',
  None: 'null',
  undefined: 'null',
};

const ESCAPES: Record<string, string> = { '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const NUMBER_TAIL = /^[-+.\deE]*$/;
const WORD = /[\p{L}\p{N}_$@.-]+/uy;
/** A `+` between two strings (spaces and line breaks around it). */
const PLUS = /\s*\+\s*/y;
/** What may follow a comma that ends a member: the next member (or a close, a comment, the end). */
const MEMBER_START =
  /\s*(?:$|["'\u201c\u201d\u2018\u2019{}[\]\d/-]|(?:true|false|null|True|False|None|undefined)\b|[\p{L}\p{N}_$@.-]+\s*:)/uy;

function isSpecialSpace(c: number): boolean {
  return c === 0xa0 || (c >= 0x2000 && c <= 0x200b) || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

/** The characters that end a string opened by `open`; undefined when `open` opens none. */
function closersOf(open: string): string | undefined {
  if (open === '"') return '"';
  if (open === "'") return "'";
  if (open === '\u201c' || open === '\u201d') return '"\u201c\u201d';
  if (open === '\u2018' || open === '\u2019') return "'\u2018\u2019";
  return undefined;
}

class Fail extends Error {}

interface Frame {
  close: '}' | ']';
  /** `key`/`item`: a member may start; `colon`: after a key; `value`: after a colon; `next`: after a member. */
  state: 'key' | 'colon' | 'value' | 'item' | 'next';
  /** Index in `out` of a comma not yet followed by a member (dropped at a close), else -1. */
  comma: number;
  /** Index in `out` of the chunk that ended the last member. */
  last: number;
  /** True until the first member. */
  first: boolean;
  /** The key of the current member (objects), or the index of the current item (arrays; -1 before the first). */
  at: string | number;
}

class Repairer {
  private i = 0;
  private readonly out: string[] = [];
  private readonly stack: Frame[] = [];
  private cut = false;
  /** Path (JSON text) of a scalar that ended at the very end of the text. */
  private endScalar: string | undefined;
  private incomplete = new Set<string>();
  private readonly fixes: string[] = [];

  constructor(private readonly s: string) {}

  private fixed(what: string): void {
    if (!this.fixes.includes(what)) this.fixes.push(what);
  }

  /**
   * Whether the `"` at `q` (inside a double-quoted value) ends it: followed, on its line, by
   * nothing, `}`, `]`, `:`, `+`, `/`, another `"`, or by a `,` that a member follows. Anything else
   * (`"say "hi" now"`) cannot follow a value, so the quote is one of the string's characters.
   */
  private endsValue(q: number): boolean {
    const s = this.s;
    let j = q + 1;
    while (j < s.length && (s[j] === ' ' || s[j] === '\t')) j++;
    const c = s[j];
    if (c === undefined || '}]:+/"\n\r'.includes(c)) return true;
    if (c !== ',') return false;
    MEMBER_START.lastIndex = j + 1;
    return MEMBER_START.test(s);
  }

  /** The path of the value being read in the innermost frame (`depth` frames deep: all of them by default). */
  private path(depth = this.stack.length): (string | number)[] {
    const out: (string | number)[] = [];
    for (let d = 0; d < depth; d++) out.push(this.stack[d]!.at);
    return out;
  }

  /** A scalar ended at the end of the text: the value there may have gone on. */
  private scalarAtEnd(): void {
    this.endScalar = JSON.stringify(this.path());
  }

  /** Records what the cut left open (before the frames are closed). */
  private markCut(): void {
    for (let d = 0; d < this.stack.length; d++) this.incomplete.add(JSON.stringify(this.path(d)));
    const top = this.stack[this.stack.length - 1];
    if (top && (top.state === 'colon' || top.state === 'value')) this.incomplete.add(JSON.stringify(this.path()));
    if (this.endScalar !== undefined) this.incomplete.add(this.endScalar);
  }

  private fail(what: string): never {
    throw new Fail(`${what} at character ${this.i}`);
  }

  /** Skips whitespace (kept; special spaces as ' ') and comments (dropped); true when it crossed a newline. */
  private trivia(): boolean {
    const s = this.s;
    let newline = false;
    for (;;) {
      let start = this.i;
      while (this.i < s.length) {
        const c = s.charCodeAt(this.i);
        if (c === 32 || c === 10 || c === 13 || c === 9) {
          if (c === 10) newline = true;
          this.i++;
        } else if (isSpecialSpace(c)) {
          this.out.push(s.slice(start, this.i), ' ');
          start = ++this.i;
        } else break;
      }
      if (this.i > start) this.out.push(s.slice(start, this.i));
      if (s.startsWith('//', this.i)) {
        const nl = s.indexOf('\n', this.i);
        this.i = nl < 0 ? s.length : nl;
      } else if (s.startsWith('/*', this.i)) {
        const end = s.indexOf('*/', this.i + 2);
        if (end < 0) this.cut = true;
        this.i = end < 0 ? s.length : end + 2;
      } else return newline;
    }
  }

  /**
   * A string at `i` (its opener checked by the caller), decoded; `done` false when the text ended in
   * it. In a value (`inValue`) a `"` that cannot end a double-quoted string is kept as a character.
   */
  private string(inValue = false): { value: string; raw: boolean; done: boolean } {
    const s = this.s;
    const open = s[this.i]!;
    const closers = closersOf(open)!;
    const start = this.i++;
    let value = '';
    let from = this.i;
    let invalid = '';
    let jsonEscape = '';
    let raw = open === '"';
    /** Where the text after the first quote kept as a character goes on (-1: none kept). */
    let firstInner = -1;
    for (;;) {
      if (this.i >= s.length) {
        // a string that reads as closed only without its inner quotes never closes: its first quote ended it
        if (firstInner >= 0) this.afterValue(firstInner);
        this.cut = true;
        this.scalarAtEnd();
        return { value: value + s.slice(from), raw: false, done: false };
      }
      const c = s[this.i]!;
      if (closers.includes(c)) {
        if (inValue && open === '"' && !this.endsValue(this.i)) {
          // a quote right after `, { [ :` opens the next token: the string ended before it
          if (/[,{[:]\s*$/.test(s.slice(Math.max(start + 1, this.i - 8), this.i)))
            this.afterValue(firstInner >= 0 ? firstInner : this.i + 1);
          if (firstInner < 0) firstInner = this.i + 1;
          this.fixed('a " inside a string kept as a character');
          raw = false;
          this.i++;
          continue;
        }
        value += s.slice(from, this.i);
        this.i++;
        break;
      }
      if (c < ' ') raw = false;
      if (c !== '\\') {
        this.i++;
        continue;
      }
      value += s.slice(from, this.i);
      const e = s[this.i + 1];
      if (e === undefined) {
        // a cut inside an escape: the escape is dropped, the string is incomplete anyway
        this.i = s.length;
        from = this.i;
        continue;
      }
      if (e === '"') value += '"';
      else if (e === "'") {
        if (!closers.includes("'")) this.fail("\\' inside a string not quoted with '");
        value += "'";
        raw = false;
      } else if (e === 'u') {
        const hex = /^[0-9a-fA-F]{0,4}/.exec(s.slice(this.i + 2, this.i + 6))![0];
        if (hex.length < 4) {
          if (this.i + 2 + hex.length < s.length) this.fail('\\u without four hex digits');
          this.i = s.length;
          from = this.i;
          continue;
        }
        value += String.fromCharCode(parseInt(hex, 16));
        jsonEscape ||= `\\u${hex}`;
        this.i += 4;
      } else if (ESCAPES[e] !== undefined) {
        value += ESCAPES[e];
        jsonEscape ||= `\\${e}`;
      } else {
        value += `\\${e}`;
        invalid ||= `\\${e}`;
        raw = false;
      }
      this.i += 2;
      from = this.i;
    }
    if (invalid && jsonEscape) {
      this.i = start;
      this.fail(`a string mixes the invalid escape ${invalid} with the JSON escape ${jsonEscape} (ambiguous)`);
    }
    return { value, raw, done: true };
  }

  /** Fails as a token after a value does: at the first non-space character from `at`. */
  private afterValue(at: number): never {
    let j = at;
    while (j < this.s.length && (this.s[j] === ' ' || this.s[j] === '\t')) j++;
    this.i = j;
    this.fail(`unexpected ${JSON.stringify(this.s[j] ?? '')} after a value`);
  }

  /** Emits the string at `i`; returns its decoded value. */
  private emitString(): string {
    const start = this.i;
    const str = this.string();
    this.out.push(str.raw && str.done ? this.s.slice(start, this.i) : JSON.stringify(str.value));
    return str.value;
  }

  /** Emits the string value at `i`, joined with the strings `+` adds to it (`"a " + "b"` → `"a b"`). */
  private emitValueString(): void {
    const s = this.s;
    const start = this.i;
    const first = this.string(true);
    let value = first.value;
    let joined = false;
    let done = first.done;
    while (done) {
      PLUS.lastIndex = this.i;
      const m = PLUS.exec(s);
      if (!m) break;
      const next = s[this.i + m[0].length];
      if (next === undefined || closersOf(next) === undefined) this.fail('"+" joins a string with something else');
      this.i += m[0].length;
      const str = this.string(true);
      value += str.value;
      done = str.done;
      joined = true;
    }
    if (joined) this.fixed('strings joined with +');
    this.out.push(!joined && first.raw && first.done ? s.slice(start, this.i) : JSON.stringify(value));
  }

  /** A scalar or an opening bracket at `i`, where a value must start. */
  private value(): void {
    const s = this.s;
    const c = s[this.i]!;
    if (c === '{' || c === '[') {
      if (this.stack.length >= MAX_REPAIR_DEPTH) this.fail(`nesting deeper than ${MAX_REPAIR_DEPTH} levels`);
      this.stack.push({
        close: c === '{' ? '}' : ']',
        state: c === '{' ? 'key' : 'item',
        comma: -1,
        last: -1,
        first: true,
        at: c === '{' ? '' : -1,
      });
      this.out.push(c);
      this.i++;
      return;
    }
    if (closersOf(c) !== undefined) this.emitValueString();
    else if (c === '-' || (c >= '0' && c <= '9')) {
      NUMBER.lastIndex = this.i;
      const m = NUMBER.exec(s);
      const end = m ? this.i + m[0].length : this.i;
      const next = s[end];
      if (m && (next === undefined || ' \n\r\t,]}/'.includes(next))) {
        this.out.push(m[0]);
        this.i = end;
        if (next === undefined) this.scalarAtEnd();
      } else if (NUMBER_TAIL.test(s.slice(end))) {
        // a number cut mid-way (`0.`, `-`, `1e`): not a value yet
        this.cut = true;
        this.scalarAtEnd();
        this.out.push('null');
        this.i = s.length;
      } else this.fail('a number not in JSON form (0x…, 0o…, leading zero, …)');
    } else {
      WORD.lastIndex = this.i;
      const m = WORD.exec(s);
      if (!m) this.fail(`unexpected ${JSON.stringify(c)} where a value starts`);
      const word = m[0];
      const lit = LITERALS[word];
      const end = this.i + word.length;
      if (end >= s.length) this.scalarAtEnd();
      if (lit !== undefined) {
        this.out.push(lit);
        if (word === 'undefined') this.fixed('undefined read as null');
      } else if (end >= s.length && Object.keys(LITERALS).some((l) => l.startsWith(word))) {
        this.cut = true;
        this.out.push('null');
      } else this.fail(`an unquoted value ${JSON.stringify(word.slice(0, 40))}`);
      this.i = end;
    }
    this.member();
  }

  /** A member (scalar or closed container) ended: the enclosing frame waits for a comma or its close. */
  private member(): void {
    const top = this.stack[this.stack.length - 1];
    if (!top) return;
    top.state = 'next';
    top.last = this.out.length - 1;
  }

  private key(): void {
    const c = this.s[this.i]!;
    const top = this.stack[this.stack.length - 1]!;
    if (closersOf(c) !== undefined) {
      // a key cut off is no value at the end: the member it starts is marked by its missing value
      const end = this.endScalar;
      top.at = this.emitString();
      this.endScalar = end;
      return;
    }
    WORD.lastIndex = this.i;
    const m = WORD.exec(this.s);
    if (!m) this.fail(`unexpected ${JSON.stringify(c)} where a key starts`);
    this.out.push(JSON.stringify(m[0]));
    top.at = m[0];
    this.i += m[0].length;
  }

  /** True when a value starts at `i` that is not a bare word: a string, bracket, number or literal. */
  private startsValue(): boolean {
    const c = this.s[this.i]!;
    if (closersOf(c) !== undefined || c === '{' || c === '[' || c === '-' || (c >= '0' && c <= '9')) return true;
    WORD.lastIndex = this.i;
    const m = WORD.exec(this.s);
    return m !== null && LITERALS[m[0]] !== undefined;
  }

  /** Closes the innermost frame (dropping a trailing comma); `atCut` fills a key or value missing at the end. */
  private closeTop(atCut: boolean): void {
    const top = this.stack.pop()!;
    if (top.state === 'colon' || top.state === 'value') {
      if (!atCut) this.fail('a value is missing');
      this.out.push(top.state === 'colon' ? ':null' : 'null');
    } else if (top.comma >= 0) this.out[top.comma] = '';
    this.out.push(top.close);
    this.member();
  }

  private closer(c: '}' | ']'): void {
    const top = this.stack[this.stack.length - 1]!;
    if (top.close === c) {
      if (top.state === 'colon' || top.state === 'value') this.fail('a value is missing');
      this.i++;
      this.closeTop(false);
      return;
    }
    // A mismatched bracket is read as a cut only when nothing but brackets follows it: which
    // object the members after it belong to would otherwise be a guess.
    if (!/^[\s\]}]*$/.test(this.s.slice(this.i))) this.fail(`a mismatched ${c}`);
    this.cut = true;
    this.i = this.s.length;
  }

  run(): SyntaxRepair {
    const s = this.s;
    this.trivia();
    const c0 = s[this.i];
    if (c0 !== '{' && c0 !== '[') this.fail('no object or array');
    this.value();
    while (this.stack.length > 0) {
      const newline = this.trivia();
      if (this.i >= s.length) {
        this.cut = true;
        this.markCut();
        while (this.stack.length > 0) this.closeTop(true);
        break;
      }
      const top = this.stack[this.stack.length - 1]!;
      const c = s[this.i]!;
      if (c === '}' || c === ']') {
        this.closer(c);
        continue;
      }
      switch (top.state) {
        case 'key':
        case 'item':
          if (c === ',') {
            if (!top.first || top.comma >= 0) this.fail('two commas');
            top.comma = this.out.length;
            this.out.push(',');
            this.i++;
            break;
          }
          // a member starts: a leading comma (`{,`) is dropped, a separating one kept
          if (top.first && top.comma >= 0) this.out[top.comma] = '';
          top.comma = -1;
          top.first = false;
          if (top.state === 'key') {
            this.key();
            top.state = 'colon';
          } else {
            top.at = (top.at as number) + 1;
            this.value();
          }
          break;
        case 'colon':
          if (c !== ':') {
            // `{"decision" "dispatch_module"}`: a quoted key, then what can only be its value
            if (!this.startsValue()) this.fail('a colon is missing');
            if (!this.fixes.some((f) => f.startsWith('a missing colon')))
              this.fixed(`a missing colon added after a key (first ${JSON.stringify(String(top.at)).slice(0, 60)})`);
            this.out.push(':');
            top.state = 'value';
            break;
          }
          this.out.push(':');
          this.i++;
          top.state = 'value';
          break;
        case 'value':
          if (c === ',' || c === ':') this.fail('a value is missing');
          this.value();
          break;
        case 'next':
          if (c === ',') {
            top.comma = this.out.length;
            this.out.push(',');
            this.i++;
          } else if (newline) this.out[top.last] += ',';
          else this.fail(`unexpected ${JSON.stringify(c)} after a value`);
          top.state = top.close === '}' ? 'key' : 'item';
          break;
      }
    }
    this.trivia();
    if (this.i < s.length) this.fail('text after the value');
    return { ok: true, json: this.out.join(''), cut: this.cut, incomplete: this.incomplete, fixes: this.fixes };
  }
}

/**
 * Repairs the structure of near-JSON `text` (an object or array, possibly cut off) in one linear
 * pass. Values are never changed: `ok: false` with the reason when a repair would have to.
 */
export function repairJson(text: string): SyntaxRepair {
  try {
    return new Repairer(text).run();
  } catch (e) {
    if (e instanceof Fail) return { ok: false, problem: e.message };
    throw e;
  }
}
