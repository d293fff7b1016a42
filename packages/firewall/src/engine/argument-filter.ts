// Layer 1, the argument filter: unknown (hallucinated) top-level arguments are stripped with a
// warning, then the arguments are validated against the tool's input_schema. Schemas are
// compiled once per schema object.

import { createAjv, formatAjvErrors, type ValidationIssue } from '@finger/protocol';

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
   * the rest. A schema that does not compile fails closed: every call is refused.
   */
  filter(schema: Record<string, unknown> | undefined, args: unknown): FilterResult {
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
