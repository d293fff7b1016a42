import { FingerError, type ValidationIssue } from '@finger/protocol';

/** Arguments of `shell.exec`. Exactly one of `argv` and `command`. */
export interface ExecParams {
  /** Program and arguments, run directly (no shell). */
  argv?: string[];
  /** A shell command line, run as `/bin/sh -c <command>`. */
  command?: string;
  /** Working directory: relative to the first workspace root, or absolute inside a root. */
  cwd?: string;
  timeout_ms?: number;
  /** Extra variables for the child (names on the deny list are refused). */
  env?: Record<string, string>;
  stdin?: string;
}

/** Arguments of `shell.run_code`. */
export interface RunCodeParams {
  language: 'python' | 'node';
  code: string;
  timeout_ms?: number;
  stdin?: string;
}

/** Longest `command`, `code` and `stdin` accepted, in characters. */
export const MAX_TEXT_CHARS = 1_000_000;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function noNul(s: string): boolean {
  return !s.includes('\0');
}

function fail(issues: ValidationIssue[]): never {
  throw new FingerError(
    'E_INVALID_ARGS',
    `invalid arguments: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
    {
      issues,
    },
  );
}

function checkCommon(a: Record<string, unknown>, issues: ValidationIssue[], max_timeout_ms: number): void {
  const t = a.timeout_ms;
  if (t !== undefined && (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > max_timeout_ms)) {
    issues.push({
      path: '$.timeout_ms',
      message: `must be an integer from 1 to ${max_timeout_ms} (settings max_timeout_ms)`,
    });
  }
  const s = a.stdin;
  if (s !== undefined && (typeof s !== 'string' || s.length > MAX_TEXT_CHARS)) {
    issues.push({ path: '$.stdin', message: `must be a string of at most ${MAX_TEXT_CHARS} characters` });
  }
}

function checkKeys(a: Record<string, unknown>, allowed: readonly string[], issues: ValidationIssue[]): void {
  for (const k of Object.keys(a)) {
    if (!allowed.includes(k)) issues.push({ path: `$.${k}`, message: `unknown property "${k}"` });
  }
}

/**
 * Checks `shell.exec` arguments (the hub validates the input_schema too; this is the module's
 * own guard for direct calls) and throws E_INVALID_ARGS listing every problem.
 */
export function parseExecParams(a: unknown, max_timeout_ms: number): ExecParams {
  if (!isObject(a)) fail([{ path: '$', message: 'must be an object' }]);
  const issues: ValidationIssue[] = [];
  checkKeys(a, ['argv', 'command', 'cwd', 'timeout_ms', 'env', 'stdin'], issues);
  if ((a.argv === undefined) === (a.command === undefined)) {
    issues.push({ path: '$', message: 'exactly one of "argv" and "command" is required' });
  }
  if (a.argv !== undefined) {
    const v = a.argv;
    if (!Array.isArray(v) || v.length === 0 || v.length > 4096) {
      issues.push({ path: '$.argv', message: 'must be a non-empty array of at most 4096 strings' });
    } else {
      v.forEach((x, i) => {
        if (typeof x !== 'string' || !noNul(x) || (i === 0 && x.length === 0)) {
          issues.push({
            path: `$.argv[${i}]`,
            message: i === 0 ? 'must be a non-empty string without NUL' : 'must be a string without NUL',
          });
        }
      });
    }
  }
  if (a.command !== undefined) {
    const c = a.command;
    if (typeof c !== 'string' || c.trim().length === 0 || c.length > MAX_TEXT_CHARS || !noNul(c)) {
      issues.push({
        path: '$.command',
        message: `must be a non-blank string of at most ${MAX_TEXT_CHARS} characters without NUL`,
      });
    }
  }
  if (a.cwd !== undefined && (typeof a.cwd !== 'string' || a.cwd.length === 0 || !noNul(a.cwd))) {
    issues.push({ path: '$.cwd', message: 'must be a non-empty path' });
  }
  if (a.env !== undefined && !isObject(a.env)) issues.push({ path: '$.env', message: 'must be an object of strings' });
  checkCommon(a, issues, max_timeout_ms);
  if (issues.length > 0) fail(issues);
  return a as ExecParams;
}

/** Checks `shell.run_code` arguments; throws E_INVALID_ARGS listing every problem. */
export function parseRunCodeParams(a: unknown, max_timeout_ms: number): RunCodeParams {
  if (!isObject(a)) fail([{ path: '$', message: 'must be an object' }]);
  const issues: ValidationIssue[] = [];
  checkKeys(a, ['language', 'code', 'timeout_ms', 'stdin'], issues);
  if (a.language !== 'python' && a.language !== 'node') {
    issues.push({ path: '$.language', message: 'must be "python" or "node"' });
  }
  if (typeof a.code !== 'string' || a.code.length > MAX_TEXT_CHARS) {
    issues.push({ path: '$.code', message: `must be a string of at most ${MAX_TEXT_CHARS} characters` });
  }
  checkCommon(a, issues, max_timeout_ms);
  if (issues.length > 0) fail(issues);
  return a as unknown as RunCodeParams;
}
