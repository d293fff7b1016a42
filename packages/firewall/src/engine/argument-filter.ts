// Layer 1, the argument filter: unknown (hallucinated) top-level arguments are stripped with a
// warning, then the arguments are validated against the tool's input_schema. Schemas are
// compiled once per schema object. A path argument holding a NUL byte is refused here too, so it is
// never held for a person (no file system takes it; it was refused only after approval).

import { createAjv, formatAjvErrors, type ValidationIssue } from '@finger/protocol';

import { isPathArg, pathValues } from '../sandbox/path-args.js';

/**
 * Issues for path arguments (a well-known name or `format: "path"` in `schema`) whose value, or an
 * item of it, contains a NUL byte: `$.path must not contain a NUL byte`.
 */
export function nulPathIssues(schema: Record<string, unknown> | undefined, args: unknown): ValidationIssue[] {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return [];
  let out: ValidationIssue[] | undefined;
  for (const key in args) {
    if (!Object.hasOwn(args, key) || !isPathArg(key, schema)) continue;
    const value = (args as Record<string, unknown>)[key];
    if (!pathValues(value).some((v) => v.includes('\0'))) continue;
    (out ??= []).push({
      path: `$.${key}${Array.isArray(value) ? `[${value.findIndex((v) => typeof v === 'string' && v.includes('\0'))}]` : ''}`,
      message: 'must not contain a NUL byte',
    });
  }
  return out ?? [];
}

/** Outcome of {@link ArgumentFilter.filter}. */
export type FilterResult =
  | { ok: true; args: unknown; stripped: string[] }
  | { ok: false; args: unknown; stripped: string[]; issues: ValidationIssue[] };

interface CompiledSchema {
  validate: ((v: unknown) => boolean) & { errors?: unknown };
  /** Top-level names the schema declares, or null when it admits any key. */
  known: ReadonlySet<string> | null;
}

const NO_STRIP: string[] = [];

/**
 * A top-level `$schema` of another dialect is dropped, as the hub does, so its common keywords
 * still apply; a top-level `$id` too (one ajv compiles many tools' schemas, and ids may repeat).
 */
function normalized(schema: Record<string, unknown>): Record<string, unknown> {
  const foreign = typeof schema.$schema === 'string' && !/draft-07\/schema#?$/.test(schema.$schema);
  if (!foreign && schema.$id === undefined) return schema;
  const { $schema, $id: _id, ...rest } = schema;
  return foreign || $schema === undefined ? rest : { $schema, ...rest };
}

function declaredKeys(schema: Record<string, unknown>): ReadonlySet<string> | null {
  const ap = schema.additionalProperties;
  if (ap === true || (typeof ap === 'object' && ap !== null) || schema.patternProperties !== undefined) return null;
  const keys = new Set<string>();
  const take = (s: unknown): boolean => {
    if (typeof s !== 'object' || s === null) return true;
    const o = s as Record<string, unknown>;
    if (typeof o.properties === 'object' && o.properties !== null)
      for (const k of Object.keys(o.properties)) keys.add(k);
    if (
      o.additionalProperties === true ||
      typeof o.additionalProperties === 'object' ||
      o.patternProperties !== undefined
    )
      return false;
    return true;
  };
  if (!take(schema)) return null;
  for (const comb of ['allOf', 'anyOf', 'oneOf'] as const) {
    const branches = schema[comb];
    if (Array.isArray(branches)) for (const b of branches) if (!take(b)) return null;
  }
  return keys.size === 0 && schema.properties === undefined ? null : keys;
}

/** The argument filter; one per engine. */
export class ArgumentFilter {
  readonly #ajv = createAjv();
  readonly #compiled = new WeakMap<object, CompiledSchema | Error>();

  /**
   * Strips unknown top-level keys (a copy is made only when something is stripped) and validates
   * the rest. A schema that does not compile fails closed: every call is refused. A path argument
   * with a NUL byte is refused, with or without a schema.
   */
  filter(schema: Record<string, unknown> | undefined, args: unknown): FilterResult {
    const r = this.#filter(schema, args);
    if (!r.ok) return r;
    const nul = nulPathIssues(schema, r.args);
    return nul.length === 0 ? r : { ok: false, args: r.args, stripped: r.stripped, issues: nul };
  }

  #filter(schema: Record<string, unknown> | undefined, args: unknown): FilterResult {
    if (schema === undefined) return { ok: true, args, stripped: NO_STRIP };
    const c = this.#compile(schema);
    if (c instanceof Error)
      return {
        ok: false,
        args,
        stripped: NO_STRIP,
        issues: [{ path: '$', message: `the tool's input_schema does not compile: ${c.message}` }],
      };
    let out = args;
    let stripped = NO_STRIP;
    if (c.known !== null && typeof args === 'object' && args !== null && !Array.isArray(args)) {
      for (const k in args) {
        if (!c.known.has(k) && Object.hasOwn(args, k)) {
          if (stripped === NO_STRIP) stripped = [];
          stripped.push(k);
        }
      }
      if (stripped.length > 0) {
        const copy: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(args)) if (c.known.has(k)) copy[k] = v;
        out = copy;
      }
    }
    if (c.validate(out)) return { ok: true, args: out, stripped };
    return { ok: false, args: out, stripped, issues: formatAjvErrors(c.validate.errors as never) };
  }

  #compile(schema: Record<string, unknown>): CompiledSchema | Error {
    let c = this.#compiled.get(schema);
    if (c === undefined) {
      try {
        c = { validate: this.#ajv.compile(normalized(schema)), known: declaredKeys(schema) };
      } catch (e) {
        c = e instanceof Error ? e : new Error(String(e));
      }
      this.#compiled.set(schema, c);
    }
    return c;
  }
}
