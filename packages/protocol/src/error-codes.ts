/**
 * The registry of every stable error code: its HTTP status, whether a retry may help, and when
 * it is thrown. `docs/errors.md` is kept identical to this table by a test.
 */
export const ERROR_CODES = {
  E_INVALID_ENVELOPE: {
    status: 400,
    retryable: false,
    when: 'an envelope from outside the process fails the envelope schema',
  },
  E_BAD_HUB_SYNTAX: {
    status: 400,
    retryable: false,
    when: 'a `/hub` command is malformed; details give the position and what was expected',
  },
  E_NO_TARGET: {
    status: 404,
    retryable: false,
    when: 'the target is not registered, or a bare module id is ambiguous',
  },
  E_NESTING_DEPTH: {
    status: 409,
    retryable: false,
    when: 'a call would nest deeper than `max_nesting_depth` (default 4)',
  },
  E_CALL_CYCLE: { status: 409, retryable: false, when: 'the target is already on the execution chain (A → B → A)' },
  E_TIMEOUT: { status: 504, retryable: true, when: 'a blocking call passed its deadline' },
  E_LEASE_EXPIRED: { status: 504, retryable: true, when: 'the module did not answer before its lease expired' },
  E_MODULE_UNHEALTHY: { status: 503, retryable: true, when: 'the target module failed its health checks' },
  E_MODULE_CRASHED: { status: 503, retryable: true, when: 'the module process died while the call was in flight' },
  E_PROVIDER_CLOSED: { status: 503, retryable: false, when: 'the provider (module runtime, MCP client) was closed' },
  E_INVALID_MANIFEST: {
    status: 400,
    retryable: false,
    when: 'a module.json fails validation; details list every error with its path',
  },
  E_INVALID_ARGS: {
    status: 400,
    retryable: false,
    when: 'arguments fail the tool input schema, or a request body is invalid',
  },
  E_PAYLOAD_TOO_LARGE: {
    status: 413,
    retryable: false,
    when: 'a request body is larger than the body limit; details give `limit_bytes`',
  },
  E_UNAUTHENTICATED: { status: 401, retryable: false, when: 'no valid bearer token was presented' },
  E_FORBIDDEN: { status: 403, retryable: false, when: 'the principal lacks the role or grant for this action' },
  E_DENIED_BY_POLICY: { status: 403, retryable: false, when: 'a policy rule denies the call' },
  E_REJECTED_BY_HUMAN: { status: 403, retryable: false, when: 'a person rejected the call' },
  E_APPROVAL_TIMEOUT: { status: 408, retryable: false, when: 'nobody answered an approval request in time' },
  E_BUDGET_EXHAUSTED: { status: 429, retryable: false, when: 'a token, time or step budget is spent' },
  E_LOOP_DETECTED: {
    status: 429,
    retryable: false,
    when: 'the same failing action repeats past the breaker threshold',
  },
  E_SAFETY_LOCKOUT: { status: 423, retryable: false, when: 'the system or agent is locked until an admin unlocks it' },
  E_HALTED: { status: 423, retryable: false, when: 'the kill switch stopped the call' },
  E_WITHDRAWN: {
    status: 409,
    retryable: false,
    when: 'the caller withdrew its held call before a person answered (MCP tasks/cancel)',
  },
  E_ROUTE_FAILED: { status: 503, retryable: false, when: 'the router refused the input (reject, unreachable target)' },
  E_LLM_UNAVAILABLE: {
    status: 503,
    retryable: true,
    when: 'the model endpoint cannot be reached or answered with an error',
  },
  E_STORE_UNAVAILABLE: { status: 503, retryable: true, when: 'a state store cannot be read or written' },
  E_AUDIT_BROKEN: {
    status: 503,
    retryable: false,
    when: 'the audit log does not reach its recorded head (emptied, cut or rolled back)',
  },
  E_NO_SANDBOX: {
    status: 503,
    retryable: false,
    when: '`sandbox.mode` is `required` and no sandbox can run here',
  },
  E_NOT_FOUND: { status: 404, retryable: false, when: 'a requested resource (request, module, token) does not exist' },
  E_CONFLICT: { status: 409, retryable: false, when: 'the resource already exists (duplicate module id, token name)' },
  E_OVERLOADED: { status: 429, retryable: true, when: 'a module concurrency limit or a bounded queue is full' },
  E_MODULE_ERROR: { status: 502, retryable: false, when: 'the module answered the call with an error of its own' },
  E_INTERNAL: { status: 500, retryable: false, when: 'an unexpected failure inside finger (a bug: please report it)' },
} as const satisfies Record<string, { status: number; retryable: boolean; when: string }>;

/** A stable error code string. */
export type ErrorCode = keyof typeof ERROR_CODES;

/** Every error code, in registry order. */
export const ERROR_CODE_LIST = Object.keys(ERROR_CODES) as ErrorCode[];

/** HTTP status for a code; unknown codes map to 500. */
export function httpStatusFor(code: string): number {
  return (ERROR_CODES as Record<string, { status: number }>)[code]?.status ?? 500;
}

/** True when `code` is one of the registered codes. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(ERROR_CODES, code);
}
