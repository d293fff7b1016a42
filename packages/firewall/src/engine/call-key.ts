// One string per call that names its arguments exactly: the behaviour layer counts calls by it
// (per tool), and the verdict cache looks verdicts up by it (per tool; policy, tool metadata and
// principal compared apart). Built once per call; the same string object serves both maps, so
// its hash is computed once, and the tool id (the registry's own string) is never concatenated.

import { internId } from '@finger/protocol';

import { canonicalJson, sha256Hex } from '../audit/canonical-json.js';

/** Argument keys longer than this are hashed (sha256) before the behaviour layer remembers them. */
export const MAX_KEY = 512;
const MAX_FLAT_KEYS = 16;

/**
 * An injective key for a plain object of scalars (strings, finite or not numbers, booleans, null,
 * undefined) — the arguments of most tool calls — without the general canonical walk; null for
 * anything else (nested values, arrays, class instances, more than 16 keys). Keys are sorted
 * (the same arguments in another order give the same key) and every key and string value is
 * length-prefixed, so two different argument objects never share a key: the verdict cache may
 * rely on it. `-0` is told apart from `0`.
 */
export function argsKey(args: unknown): string | null {
  if (typeof args !== 'object' || args === null) return null;
  const proto: unknown = Object.getPrototypeOf(args);
  if (proto !== Object.prototype && proto !== null) return null;
  const keys = Object.keys(args);
  if (keys.length > MAX_FLAT_KEYS) return null;
  if (keys.length > 1) keys.sort();
  let out = '';
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const v = (args as Record<string, unknown>)[k];
    switch (typeof v) {
      case 'string':
        out += `${k.length}:${k}s${v.length}:${v}`;
        break;
      case 'number':
        out += `${k.length}:${k}n${Object.is(v, -0) ? '-0' : String(v)};`;
        break;
      case 'boolean':
        out += `${k.length}:${k}${v ? 't' : 'f'}`;
        break;
      case 'undefined':
        out += `${k.length}:${k}u`;
        break;
      default:
        if (v !== null) return null;
        out += `${k.length}:${k}z`;
    }
  }
  return out;
}

/**
 * Arguments interned by {@link ArgsKeys}: their {@link argsKey}, and a slot for the verdict cache
 * (verdict-cache.ts), so that a cached verdict is found on the object the trie walk ends at — no
 * map lookup by the key string.
 */
export class InternedArgs {
  /** The verdict cache's entries for these arguments (only VerdictCache reads or writes it). */
  verdicts: unknown = undefined;
  constructor(readonly key: string) {}
}

/** A trie node: the next nodes by argument name, then value; the interned arguments of a path that ends here. */
interface Node {
  /** The values of every argument name added here after the first (made when a second one comes). */
  next: Map<string, Map<unknown, Node>> | undefined;
  /** The first argument name added here and its values (no map look-up by name for it). */
  firstKey: string | undefined;
  firstValues: Map<unknown, Node> | undefined;
  leaf: InternedArgs | undefined;
}

function node(): Node {
  // no map until a second argument name needs one: most nodes are leaves of one-argument calls
  return { next: undefined, firstKey: undefined, firstValues: undefined, leaf: undefined };
}

/** The values that follow argument name `k` at `at`. */
function valuesAt(at: Node, k: string): Map<unknown, Node> | undefined {
  return k === at.firstKey ? at.firstValues : at.next?.get(k);
}

/** Bounds of an {@link ArgsKeys} table. */
export interface ArgsKeysOptions {
  /** Distinct argument objects remembered before the table is dropped whole (default 10,000). */
  max_keys?: number;
  /** Characters of string values remembered before the table is dropped whole (default 4 M). */
  max_chars?: number;
  /** String values longer than this are not interned (default {@link MAX_KEY}). */
  max_value?: number;
}

/**
 * Interns {@link argsKey}: the same arguments (by content, in any key order) give the same
 * {@link InternedArgs} (and key string object), found through a trie of maps keyed by the
 * arguments' own names and values — no string is built or hashed whole per call. Maps tell `1` from `"1"` and `null` from `undefined`; `-0`, which a map does not tell
 * from `0`, and long strings are not interned (null). Dropped whole when a bound is reached.
 */
export class ArgsKeys {
  readonly #maxKeys: number;
  readonly #maxChars: number;
  readonly #maxValue: number;
  #root: Node = node();
  #keys = 0;
  #chars = 0;

  constructor(options: ArgsKeysOptions = {}) {
    this.#maxKeys = options.max_keys ?? 10_000;
    this.#maxChars = options.max_chars ?? 4_000_000;
    this.#maxValue = options.max_value ?? MAX_KEY;
  }

  /** The interned `args`, or null when they are not a small flat plain object. */
  intern(args: unknown): InternedArgs | null {
    if (typeof args !== 'object' || args === null) return null;
    // `constructor` first: its inline cache hands the optimizing compiler the object's map, so the
    // exact prototype check that follows is a constant instead of a runtime call (≈ 100
    // instructions per call in the hub, counted with callgrind); null-prototype objects go the general way
    if ((args as { constructor?: unknown }).constructor !== Object || Object.getPrototypeOf(args) !== Object.prototype)
      return Object.getPrototypeOf(args) === null ? this.#lookup(args) : null;
    // fast path, no allocation: own keys already in order, every step already in the trie
    let at = this.#root;
    let prev: string | undefined;
    let n = 0;
    for (const k in args) {
      // `hasOwnProperty.call` inside for-in over the same object compiles to a map check (Object.hasOwn is a call)
      if (++n > MAX_FLAT_KEYS || (prev !== undefined && prev > k) || !Object.prototype.hasOwnProperty.call(args, k))
        return this.#lookup(args);
      prev = k;
      const v = (args as Record<string, unknown>)[k];
      // a map does not tell -0 from 0; nothing else that is not interned can be found
      if (typeof v === 'number' && v === 0 && 1 / v < 0) return null;
      const next = valuesAt(at, k)?.get(v);
      if (next === undefined) return this.#lookup(args);
      at = next;
    }
    return at.leaf ?? this.#lookup(args);
  }

  /** The general path: sorted own keys, checked values; adds what is missing. */
  #lookup(args: object): InternedArgs | null {
    const keys = Object.keys(args);
    const n = keys.length;
    if (n > MAX_FLAT_KEYS) return null;
    for (let i = 1; i < n; i++)
      if (keys[i - 1]! > keys[i]!) {
        keys.sort();
        break;
      }
    let at = this.#root;
    let chars = 0;
    let missing = false;
    for (let i = 0; i < n; i++) {
      const k = keys[i]!;
      const v = (args as Record<string, unknown>)[k];
      switch (typeof v) {
        case 'string':
          if (v.length > this.#maxValue) return null;
          chars += v.length;
          break;
        case 'number':
          if (Object.is(v, -0)) return null;
          break;
        case 'boolean':
        case 'undefined':
          break;
        default:
          if (v !== null) return null;
      }
      if (missing) continue;
      const next = valuesAt(at, k)?.get(v);
      if (next === undefined) missing = true;
      else at = next;
    }
    if (!missing && at.leaf !== undefined) return at.leaf;
    return this.#add(args as Record<string, unknown>, keys, chars);
  }

  #add(args: Record<string, unknown>, keys: string[], chars: number): InternedArgs | null {
    const key = argsKey(args);
    if (key === null) return null;
    if (this.#keys >= this.#maxKeys || this.#chars + chars > this.#maxChars) {
      this.#root = node();
      this.#keys = 0;
      this.#chars = 0;
    }
    let at = this.#root;
    for (const k of keys) {
      let byValue = valuesAt(at, k);
      if (byValue === undefined) {
        byValue = new Map();
        // keys are the engine's own copies (internalized): compared by pointer on the fast path
        if (at.firstKey === undefined) {
          at.firstKey = internId(k);
          at.firstValues = byValue;
        } else (at.next ??= new Map()).set(k, byValue);
      }
      let next = byValue.get(args[k]);
      if (next === undefined) byValue.set(args[k], (next = node()));
      at = next;
    }
    // Not internalized: a call that comes again finds this object (and this key string, compared by
    // pointer) through the trie, and most distinct arguments never come again — internalizing each
    // one (a string-table insert, ≈ 2 µs a call in bench/http's /v1/messages) bought nothing there.
    const interned = new InternedArgs(key);
    at.leaf = interned;
    this.#keys++;
    this.#chars += chars;
    return interned;
  }
}

/**
 * The behaviour layer's key for a call's arguments within its tool: {@link argsKey}, or canonical
 * JSON for other arguments; sha256 of it when longer than {@link MAX_KEY} (bounded memory).
 * Identical arguments always give identical keys, whatever the order of their keys.
 */
export function argsFingerprint(args: unknown, key: string | null = argsKey(args)): string {
  let a = key;
  if (a === null) {
    try {
      a = canonicalJson(args ?? null);
    } catch {
      a = String(args);
    }
  }
  return a.length > MAX_KEY ? `#${sha256Hex(a)}` : a;
}

/** The fingerprint of a call across tools: tool id and {@link argsFingerprint}. */
export function callFingerprint(tool_id: string, args: unknown): string {
  return `${tool_id}\u0000${argsFingerprint(args)}`;
}
