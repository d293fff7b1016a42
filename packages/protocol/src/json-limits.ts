import { FingerError } from './finger-error.js';

/**
 * Deepest nesting of arrays and objects accepted in a JSON text that enters finger: an HTTP
 * request body, a WebSocket message, a stdio module's line, a NATS message (`{}` is 1 level,
 * `{"a":[1]}` 2, a scalar 0).
 *
 * Why 64: real tool arguments and results nest fewer than 15 levels (JSON Schema documents, the
 * deepest we see, about 12), so 64 leaves room while every recursive walk on the way — V8's
 * JSON.stringify, ajv, pino's serializers, structuredClone — stays thousands of frames below
 * the stack limit, with headroom for a wire wrapper (a NATS frame or stdio line adds one
 * level, an error's details two). The guardrail's repair stops at 128 (`MAX_REPAIR_DEPTH`);
 * a model's decision deeper than 64 is refused when it crosses a boundary.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Deepest nesting accepted in a wire frame that carries such a value: a stdio module's line
 * (`{"type":"result","result":…}`) or a NATS envelope (`[2, …, payload, {code, message, details}]`).
 * The wrapper adds up to two levels, so anything within {@link MAX_JSON_DEPTH} passes every wire.
 */
export const MAX_WIRE_JSON_DEPTH = MAX_JSON_DEPTH + 2;

/** Keys refused in request bodies (prototype pollution), as fastify's secure-json-parse refuses them. */
const PROTO_KEY = '__proto__';

/** What {@link jsonLimitProblem} found: the first offending place, with its path segments. */
export interface JsonLimitProblem {
  kind: 'depth' | 'key';
  /** Path segments from the root to the offending container (depth) or key (key). */
  path: Array<string | number>;
  /** The refused key (`__proto__` or `constructor`) for `kind: 'key'`. */
  key?: string;
}

/** Options of {@link jsonLimitProblem} and {@link jsonLimitError}. */
export interface JsonLimitOptions {
  /** The deepest nesting accepted; {@link MAX_JSON_DEPTH} by default. */
  maxDepth?: number;
  /**
   * The level of `value` itself (1 by default): 2 for a value that travels as a member of a
   * message, so it is held to the limit the whole message would be (`/hub`'s payload).
   */
  base?: number;
  /** Also refuse `__proto__` keys and `constructor` keys holding a `prototype` (request bodies). */
  protoKeys?: boolean;
}

interface Frame {
  value: object;
  depth: number;
  parent: Frame | undefined;
  at: string | number;
}

function pathOf(f: Frame | undefined, last?: string | number): Array<string | number> {
  const out: Array<string | number> = last === undefined ? [] : [last];
  for (let x = f; x?.parent !== undefined; x = x.parent) out.push(x.at);
  return out.reverse();
}

/**
 * The first place where `value` nests deeper than `maxDepth` or (with `protoKeys`) holds a
 * `__proto__` key or a `constructor` key whose value has a `prototype` key; undefined when there
 * is none. Walks with an explicit stack, never recursion, so any depth is safe to inspect; stops at
 * the first container past the limit, so a deep value costs at most `maxDepth` frames per branch.
 */
export function jsonLimitProblem(value: unknown, options: JsonLimitOptions = {}): JsonLimitProblem | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const max = options.maxDepth ?? MAX_JSON_DEPTH;
  const protoKeys = options.protoKeys ?? false;
  const base = options.base ?? 1;
  if (max <= MAX_RECURSIVE_DEPTH) {
    // the walk goes no deeper than the limit + 1 whatever the value's depth: a bounded recursion,
    // several times cheaper than the explicit stack (no frame object per container)
    const p = problemIn(value, base, max, protoKeys);
    if (p !== undefined) p.path.reverse();
    return p;
  }
  const stack: Frame[] = [{ value, depth: base, parent: undefined, at: '' }];
  while (stack.length > 0) {
    const f = stack.pop()!;
    if (f.depth > max) return { kind: 'depth', path: pathOf(f) };
    if (Array.isArray(f.value)) {
      const a = f.value as unknown[];
      for (let i = a.length - 1; i >= 0; i--) {
        const v = a[i];
        if (v !== null && typeof v === 'object') stack.push({ value: v, depth: f.depth + 1, parent: f, at: i });
      }
      continue;
    }
    const o = f.value as Record<string, unknown>;
    const keys = Object.keys(o);
    for (let i = keys.length - 1; i >= 0; i--) {
      const k = keys[i]!;
      const v = o[k];
      if (protoKeys) {
        if (k === PROTO_KEY) return { kind: 'key', path: pathOf(f, k), key: k };
        if (
          k === 'constructor' &&
          v !== null &&
          typeof v === 'object' &&
          Object.prototype.hasOwnProperty.call(v, 'prototype')
        )
          return { kind: 'key', path: pathOf(f, k), key: k };
      }
      if (v !== null && typeof v === 'object') stack.push({ value: v, depth: f.depth + 1, parent: f, at: k });
    }
  }
  return undefined;
}

/** Limits up to which {@link jsonLimitProblem} recurses (beyond, it walks with an explicit stack). */
const MAX_RECURSIVE_DEPTH = 256;

/** A refused key of `o` when `protoKeys` (the last one in key order, as the stack walk finds it). */
function refusedKey(o: Record<string, unknown>, keys: string[]): string | undefined {
  for (let i = keys.length - 1; i >= 0; i--) {
    const k = keys[i]!;
    if (k === PROTO_KEY) return k;
    if (k === 'constructor') {
      const v = o[k];
      if (v !== null && typeof v === 'object' && Object.prototype.hasOwnProperty.call(v, 'prototype')) return k;
    }
  }
  return undefined;
}

/**
 * The stack walk's answer by recursion, the same first problem in the same order (an object's
 * keys checked before its members are entered, members in order), its path from the problem up
 * (the caller reverses it). Called only while `max` is small: recursion stops one level past it.
 */
function problemIn(v: object, depth: number, max: number, protoKeys: boolean): JsonLimitProblem | undefined {
  if (depth > max) return { kind: 'depth', path: [] };
  if (Array.isArray(v)) {
    const a = v as unknown[];
    for (let i = 0; i < a.length; i++) {
      const x = a[i];
      if (x === null || typeof x !== 'object') continue;
      const p = problemIn(x, depth + 1, max, protoKeys);
      if (p !== undefined) {
        p.path.push(i);
        return p;
      }
    }
    return undefined;
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o);
  if (protoKeys) {
    const k = refusedKey(o, keys);
    if (k !== undefined) return { kind: 'key', path: [k], key: k };
  }
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const x = o[k];
    if (x === null || typeof x !== 'object') continue;
    const p = problemIn(x, depth + 1, max, protoKeys);
    if (p !== undefined) {
      p.path.push(k);
      return p;
    }
  }
  return undefined;
}

/** `body.a[0].b` for `where` `body` and segments `['a', 0, 'b']`; long paths keep their first 16 segments. */
export function formatJsonPath(where: string, path: ReadonlyArray<string | number>): string {
  let out = where;
  const shown = path.length > 16 ? path.slice(0, 16) : path;
  for (const s of shown)
    out += typeof s === 'number' ? `[${s}]` : /^[A-Za-z_$][\w$]*$/.test(s) ? `.${s}` : `[${JSON.stringify(s)}]`;
  return path.length > 16 ? `${out}…` : out;
}

/**
 * An E_INVALID_ARGS FingerError for JSON that passes the nesting limit (`details.limit`,
 * `details.path`, `details.issues`) or holds a refused key (`details.key`, `details.path`); undefined
 * when `value` is within the limits. `where` names the value in messages and paths (`body`,
 * `payload`, `message`, `line`). Non-recursive: see {@link jsonLimitProblem}.
 */
export function jsonLimitError(value: unknown, where: string, options: JsonLimitOptions = {}): FingerError | undefined {
  const max = options.maxDepth ?? MAX_JSON_DEPTH;
  const p = jsonLimitProblem(value, options);
  if (p === undefined) return undefined;
  const path = formatJsonPath(where, p.path);
  if (p.kind === 'key') {
    const message = `key ${p.key} is not accepted (keys __proto__/constructor could change object prototypes)`;
    return new FingerError('E_INVALID_ARGS', `${where}: ${message} at ${path}`, {
      key: p.key,
      path,
      issues: [{ path, message }],
    });
  }
  const message = `nests deeper than the JSON nesting limit of ${max} levels`;
  return new FingerError('E_INVALID_ARGS', `${where} ${message}`, { limit: max, path, issues: [{ path, message }] });
}
