import type { ErrorCode } from '@finger/protocol';

/**
 * Process exit codes of `myfinger`, one per class of failure, so scripts can branch on the class
 * without parsing messages. Documented in packages/cli/README.md; keep both in step.
 */
export const EXIT = {
  /** Success. */
  OK: 0,
  /** Generic or internal failure (anything not in a class below). */
  GENERIC: 1,
  /** Usage: bad CLI arguments, bad `/hub` syntax, invalid args or manifest. */
  USAGE: 2,
  /** The daemon is not running or cannot be reached. */
  NOT_RUNNING: 3,
  /** Authentication or authorisation failed. */
  AUTH: 4,
  /** The target, request, module or token does not exist. */
  NOT_FOUND: 5,
  /** A deadline passed (call timeout, lease, approval, or a CLI wait). */
  TIMEOUT: 6,
  /** The module failed (unhealthy, crashed, closed, or answered with an error). */
  MODULE: 7,
  /** Refused: denied by policy or by a person, locked, halted, budget or loop breaker. */
  DENIED: 8,
} as const;

/** One of the exit codes in {@link EXIT}. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * The class of each registered error code that is not generic. Codes missing here (E_CONFLICT,
 * E_ROUTE_FAILED, E_INTERNAL, …) exit with {@link EXIT.GENERIC}.
 */
export const EXIT_BY_ERROR_CODE = {
  E_BAD_HUB_SYNTAX: EXIT.USAGE,
  E_INVALID_ARGS: EXIT.USAGE,
  E_INVALID_MANIFEST: EXIT.USAGE,
  E_INVALID_ENVELOPE: EXIT.USAGE,
  E_UNAUTHENTICATED: EXIT.AUTH,
  E_FORBIDDEN: EXIT.AUTH,
  E_NO_TARGET: EXIT.NOT_FOUND,
  E_NOT_FOUND: EXIT.NOT_FOUND,
  E_TIMEOUT: EXIT.TIMEOUT,
  E_LEASE_EXPIRED: EXIT.TIMEOUT,
  E_APPROVAL_TIMEOUT: EXIT.TIMEOUT,
  E_MODULE_UNHEALTHY: EXIT.MODULE,
  E_MODULE_CRASHED: EXIT.MODULE,
  E_MODULE_ERROR: EXIT.MODULE,
  E_PROVIDER_CLOSED: EXIT.MODULE,
  E_DENIED_BY_POLICY: EXIT.DENIED,
  E_REJECTED_BY_HUMAN: EXIT.DENIED,
  E_SAFETY_LOCKOUT: EXIT.DENIED,
  E_HALTED: EXIT.DENIED,
  E_BUDGET_EXHAUSTED: EXIT.DENIED,
  E_LOOP_DETECTED: EXIT.DENIED,
  E_CALL_CYCLE: EXIT.DENIED,
  E_NESTING_DEPTH: EXIT.DENIED,
} as const satisfies Partial<Record<ErrorCode, ExitCode>>;

/**
 * Codes the CLI itself reports (never sent by the daemon): printed in `--json` error objects so
 * scripts see a code for every failure.
 */
export const CLI_ERROR_CODES = {
  /** Bad command line (unknown option, missing argument, unreadable file). */
  E_USAGE: EXIT.USAGE,
  /** No daemon answers at the resolved URL. */
  E_DAEMON_NOT_RUNNING: EXIT.NOT_RUNNING,
} as const;

/**
 * Exit code for an error code from the daemon or the CLI. Unknown `E_MODULE_*` codes count as
 * module failures; anything else unknown is generic.
 */
export function exitCodeFor(code: string): ExitCode {
  const known =
    (EXIT_BY_ERROR_CODE as Record<string, ExitCode>)[code] ?? (CLI_ERROR_CODES as Record<string, ExitCode>)[code];
  if (known !== undefined) return known;
  if (code.startsWith('E_MODULE_')) return EXIT.MODULE;
  return EXIT.GENERIC;
}
