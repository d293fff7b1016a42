import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';

/** One schema violation: a JSON path (`$.tools[0].name`) and what is wrong there. */
export interface ValidationIssue {
  path: string;
  message: string;
}

// ajv-formats ships CJS with a default export; normalise across interop modes.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv,
) => Ajv;

/** A fresh ajv configured as finger uses it everywhere: all errors, strict off for user schemas. */
export function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, strict: false, allowUnionTypes: true });
  addFormats(ajv);
  return ajv;
}

function pointerToPath(pointer: string): string {
  if (!pointer) return '$';
  let out = '$';
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^\d+$/.test(seg) ? `[${seg}]` : /^[A-Za-z_$][\w$]*$/.test(seg) ? `.${seg}` : `[${JSON.stringify(seg)}]`;
  }
  return out;
}

/**
 * Turns ajv errors into readable issues, one per real problem: the `if`/`then` wrapper errors
 * that only say "must match then schema" are dropped, unknown keys name the key.
 */
export function formatAjvErrors(errors: ErrorObject[] | null | undefined): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    if (e.keyword === 'if') continue;
    let path = pointerToPath(e.instancePath);
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      const key = String((e.params as { additionalProperty: string }).additionalProperty);
      path = pointerToPath(`${e.instancePath}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
      message = 'is not an allowed key';
    } else if (e.keyword === 'required') {
      const key = String((e.params as { missingProperty: string }).missingProperty);
      path = pointerToPath(`${e.instancePath}/${key}`);
      message = 'is required';
    } else if (e.keyword === 'enum') {
      message = `must be one of ${((e.params as { allowedValues: unknown[] }).allowedValues ?? []).map((v) => JSON.stringify(v)).join(', ')}`;
    }
    const k = `${path}|${message}`;
    if (seen.has(k)) continue;
    seen.add(k);
    out.push({ path, message });
  }
  return out;
}

/** Compiles `schema` once and returns a checker giving issues (empty when valid). */
export function compileChecker(ajv: Ajv, schema: object): (value: unknown) => ValidationIssue[] {
  const validate: ValidateFunction = ajv.compile(schema);
  return (value) => (validate(value) ? [] : formatAjvErrors(validate.errors));
}
