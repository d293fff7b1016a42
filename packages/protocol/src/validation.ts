import { createRequire } from 'node:module';

import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';

/** One schema violation: a JSON path (`$.tools[0].name`) and what is wrong there. */
export interface ValidationIssue {
  path: string;
  message: string;
}

type AjvClass = new (options: object) => Ajv;
type AddFormats = (ajv: Ajv) => Ajv;
let loaded: { Ajv: AjvClass; addFormats: AddFormats } | undefined;

/**
 * ajv and ajv-formats (both CJS), loaded on the first {@link createAjv}: importing this package
 * costs no ajv (≈ 100-600 ms of a CLI process's start-up), only compiling a schema does.
 */
function ajvModules(): { Ajv: AjvClass; addFormats: AddFormats } {
  if (loaded === undefined) {
    const require = createRequire(import.meta.url);
    const ajv = require('ajv') as { Ajv?: AjvClass; default?: AjvClass };
    const formats = require('ajv-formats') as AddFormats & { default?: AddFormats };
    loaded = { Ajv: (ajv.Ajv ?? ajv.default ?? ajv) as AjvClass, addFormats: formats.default ?? formats };
  }
  return loaded;
}

/** A fresh ajv configured as finger uses it everywhere: all errors, strict off for user schemas. */
export function createAjv(): Ajv {
  const { Ajv: AjvCtor, addFormats } = ajvModules();
  const ajv = new AjvCtor({ allErrors: true, strict: false, allowUnionTypes: true });
  addFormats(ajv);
  // finger's own annotation of a path argument: judged by the firewall's path checks, any string here
  ajv.addFormat('path', true);
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
