import { hash } from 'node:crypto';

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
  // most payloads are shallow: a plain recursive walk, handed to the stack walker past FAST_DEPTH
  // (a deep payload or a cycle, which the walker reports)
  try {
    return shallowCanonical(value, 0);
  } catch (e) {
    if (e !== TOO_DEEP) throw e;
  }
  return stackCanonical(value);
}

/** Nesting the recursive fast path handles before it gives up to the stack walker. */
const FAST_DEPTH = 64;
const TOO_DEEP = Symbol('too deep');

function shallowCanonical(value: unknown, depth: number): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (depth >= FAST_DEPTH) throw TOO_DEEP;
  if (Array.isArray(value)) {
    const a = value as unknown[];
    let s = '[';
    for (let i = 0; i < a.length; i++) s += (i > 0 ? ',' : '') + shallowCanonical(a[i], depth + 1);
    return `${s}]`;
  }
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  if (keys.length > 1) keys.sort();
  let s = '{';
  let first = true;
  for (const k of keys) {
    const v = obj[k];
    if (v === undefined) continue;
    s += `${first ? '' : ','}${JSON.stringify(k)}:${shallowCanonical(v, depth + 1)}`;
    first = false;
  }
  return `${s}}`;
}

function stackCanonical(value: unknown): string {
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
  // one-shot hash: no Hash object per call
  return `sha256:${hash('sha256', canonicalJson(payload ?? null), 'hex')}`;
}

/** Canonical JSON up to this length is its own arguments key; longer is digested. */
const ARGS_KEY_INLINE = 160;

/**
 * What a request id's arguments are compared by inside one process: the canonical JSON itself
 * when short (exact, and no hash to compute), `sha256:<hex>` of it otherwise (a record stays
 * small). The two never collide: canonical JSON never starts with `s`. Stores shared between
 * daemons use {@link payloadDigest}.
 */
export function argsKey(payload: unknown): string {
  const json = flatCanonical(payload) ?? canonicalJson(payload ?? null);
  return json.length <= ARGS_KEY_INLINE ? json : `sha256:${hash('sha256', json, 'hex')}`;
}

/**
 * The canonical JSON of the common small payload — a plain object of at most 8 keys, already in
 * sorted order, whose values are strings, finite numbers, booleans or null — in one native
 * JSON.stringify (the same text canonicalJson writes); undefined for anything else.
 */
function flatCanonical(payload: unknown): string | undefined {
  if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) return undefined;
  if (Object.getPrototypeOf(payload) !== Object.prototype) return undefined;
  const obj = payload as Record<string, unknown>;
  const keys = Object.keys(obj);
  if (keys.length > 8) return undefined;
  for (let i = 0; i < keys.length; i++) {
    if (i > 0 && keys[i - 1]! >= keys[i]!) return undefined;
    const v = obj[keys[i]!];
    const t = typeof v;
    if (t === 'string' || t === 'boolean' || v === null) continue;
    if (t === 'number' && Number.isFinite(v)) continue;
    return undefined;
  }
  return JSON.stringify(obj);
}
