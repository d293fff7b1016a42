/**
 * Step 4 of the guardrail: when the chosen fragment was cut off, decide whether the control
 * fields survived. The repair closes a cut string or bracket and reads a cut `tr` as null, so
 * this reads the raw text again with a tolerant scanner and asks, per key, whether its value
 * ended before the cut. A number or literal at the very end is not complete (`0.8` may have been
 * `0.85`); a string is complete only with its closing quote; an object or array only when closed.
 */

interface RawObject {
  kind: 'object';
  entries: Map<string, RawNode>;
  complete: boolean;
}
type RawNode =
  RawObject | { kind: 'array'; items: RawNode[]; complete: boolean } | { kind: 'scalar'; complete: boolean };

const MAX_DEPTH = 64;

class Tolerant {
  i = 0;
  constructor(private readonly s: string) {}

  private skip(): void {
    const s = this.s;
    for (;;) {
      while (this.i < s.length && ' \n\r\t'.includes(s[this.i]!)) this.i++;
      if (s.startsWith('//', this.i) || s[this.i] === '#') {
        const nl = s.indexOf('\n', this.i);
        this.i = nl < 0 ? s.length : nl;
      } else if (s.startsWith('/*', this.i)) {
        const end = s.indexOf('*/', this.i + 2);
        this.i = end < 0 ? s.length : end + 2;
      } else return;
    }
  }

  private str(): { text: string; complete: boolean } {
    const s = this.s;
    const q = s[this.i]!;
    const start = ++this.i;
    while (this.i < s.length && s[this.i] !== q) this.i += s[this.i] === '\\' ? 2 : 1;
    if (this.i >= s.length) return { text: s.slice(start), complete: false };
    return { text: s.slice(start, this.i++), complete: true };
  }

  value(depth: number): RawNode {
    this.skip();
    const s = this.s;
    const c = s[this.i];
    if (c === undefined || depth > MAX_DEPTH) return { kind: 'scalar', complete: false };
    if (c === '{') return this.object(depth);
    if (c === '[') {
      this.i++;
      const items: RawNode[] = [];
      for (;;) {
        this.skip();
        if (this.i >= s.length) return { kind: 'array', items, complete: false };
        if (s[this.i] === ']') {
          this.i++;
          return { kind: 'array', items, complete: true };
        }
        if (s[this.i] === ',') {
          this.i++;
          continue;
        }
        const before = this.i;
        const v = this.value(depth + 1);
        if (this.i === before) this.i++; // a stray `}` or `:`: skip it
        items.push(v);
        if (!v.complete) return { kind: 'array', items, complete: false };
      }
    }
    if (c === '"' || c === "'") return { kind: 'scalar', complete: this.str().complete };
    while (this.i < s.length && !',]} \n\r\t'.includes(s[this.i]!)) this.i++;
    return { kind: 'scalar', complete: this.i < s.length };
  }

  private object(depth: number): RawObject {
    const s = this.s;
    this.i++;
    const entries = new Map<string, RawNode>();
    for (;;) {
      this.skip();
      if (this.i >= s.length) return { kind: 'object', entries, complete: false };
      const c = s[this.i]!;
      if (c === '}') {
        this.i++;
        return { kind: 'object', entries, complete: true };
      }
      if (c === ',') {
        this.i++;
        continue;
      }
      let key: string;
      if (c === '"' || c === "'") {
        const k = this.str();
        if (!k.complete) return { kind: 'object', entries, complete: false };
        key = k.text;
      } else {
        const start = this.i;
        while (this.i < s.length && !':,} \n\r\t'.includes(s[this.i]!)) this.i++;
        key = s.slice(start, this.i);
        if (this.i === start) this.i++;
      }
      this.skip();
      if (s[this.i] !== ':') {
        if (this.i >= s.length) return { kind: 'object', entries, complete: false };
        continue;
      }
      this.i++;
      const before = this.i;
      const v = this.value(depth + 1);
      if (this.i === before) this.i++;
      entries.set(key, v);
      if (!v.complete) return { kind: 'object', entries, complete: false };
    }
  }
}

/** The first object (breadth-first) holding `anchor` as a key. */
function findAnchor(root: RawNode, anchor: string): RawObject | undefined {
  const queue: RawNode[] = [root];
  for (let k = 0; k < queue.length && k < 10_000; k++) {
    const n = queue[k]!;
    if (n.kind === 'object') {
      if (n.entries.has(anchor)) return n;
      queue.push(...n.entries.values());
    } else if (n.kind === 'array') queue.push(...n.items);
  }
  return undefined;
}

/** What a truncated fragment must still hold completely. */
export interface TruncationRule {
  /** The key that identifies the decision object inside the fragment. */
  anchor: string;
  /** Keys that must be present with a complete value. */
  required: readonly string[];
  /** Keys whose value, when started, must be complete (closed). */
  completeIfPresent: readonly string[];
}

/**
 * Problems of a fragment that was cut off (`raw` is its text as extracted, before repair); empty
 * when every control field survived the cut.
 */
export function truncationProblems(raw: string, rule: TruncationRule): string[] {
  const start = raw.search(/[[{]/);
  if (start < 0) return ['the answer was cut off before any JSON'];
  const t = new Tolerant(raw.slice(start));
  const root = t.value(0);
  const obj = findAnchor(root, rule.anchor);
  if (obj === undefined) return [`the answer was cut off; no complete "${rule.anchor}" found`];
  const problems: string[] = [];
  for (const key of rule.required) {
    const v = obj.entries.get(key);
    if (v === undefined) problems.push(`$.${key} is missing: the answer was cut off before it`);
    else if (!v.complete) problems.push(`$.${key} was cut off`);
  }
  for (const key of rule.completeIfPresent) {
    if (rule.required.includes(key)) continue;
    const v = obj.entries.get(key);
    if (v !== undefined && !v.complete) problems.push(`$.${key} was cut off`);
  }
  return problems;
}
