import { createHash } from 'node:crypto';

/** Text already written out, or the end of a container (which leaves the cycle guard's set). */
class Raw {
  constructor(
    readonly text: string,
    readonly closes?: object,
  ) {}
}

/**
 * JSON with object keys sorted at every level and `undefined` members dropped, so equal
 * definitions hash equally whatever order a server sends its keys in. Walks with an explicit
 * stack, never recursion: a payload nested thousands of levels deep (from a caller that skipped
 * the boundary check) costs memory, not a RangeError. Throws a TypeError on a cycle.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  const open = new Set<object>();
  const work: unknown[] = [value];
  while (work.length > 0) {
    const w = work.pop();
    if (w instanceof Raw) {
      out.push(w.text);
      if (w.closes !== undefined) open.delete(w.closes);
      continue;
    }
    if (w === null || typeof w !== 'object') {
      out.push(JSON.stringify(w) ?? 'null');
      continue;
    }
    if (open.has(w)) throw new TypeError('canonicalJson: the value contains a cycle');
    open.add(w);
    if (Array.isArray(w)) {
      const a = w as unknown[];
      out.push('[');
      work.push(new Raw(']', a));
      for (let i = a.length - 1; i >= 0; i--) {
        work.push(a[i]);
        if (i > 0) work.push(new Raw(','));
      }
      continue;
    }
    const obj = w as Record<string, unknown>;
    const keys = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort();
    out.push('{');
    work.push(new Raw('}', obj));
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i]!;
      work.push(obj[k]);
      work.push(new Raw(`${i > 0 ? ',' : ''}${JSON.stringify(k)}:`));
    }
  }
  return out.join('');
}

/** `sha256:<hex>` of the canonical JSON of a call's payload: which arguments a request id was first used with. */
export function payloadDigest(payload: unknown): string {
  return `sha256:${createHash('sha256')
    .update(canonicalJson(payload ?? null))
    .digest('hex')}`;
}
