import { ERROR_CODES, type ErrorCode, isErrorCode } from './error-codes.js';

/** The wire shape of an error: what crosses HTTP, WebSocket, NATS and stdio. Never a stack. */
export interface ErrorInfo {
  code: string;
  message: string;
  details?: unknown;
}

const BRAND = Symbol.for('finger.error');

/**
 * The one error type of finger. Branch on `code`, never on `instanceof` across package or wire
 * boundaries; use {@link isFingerError} which checks a brand.
 */
export class FingerError extends Error {
  readonly code: ErrorCode;
  readonly details?: unknown;
  readonly retryable: boolean;
  readonly [BRAND] = true;

  constructor(code: ErrorCode, message: string, details?: unknown, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FingerError';
    this.code = code;
    if (details !== undefined) this.details = details;
    this.retryable = ERROR_CODES[code].retryable;
  }

  /** HTTP status of this error's code. */
  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  /** The wire shape: `{code, message, details?}` without stack or cause. */
  toJSON(): ErrorInfo {
    const out: ErrorInfo = { code: this.code, message: this.message };
    if (this.details !== undefined) out.details = this.details;
    return out;
  }

  /** Rebuilds a FingerError from its wire shape; unknown codes become E_INTERNAL. */
  static fromInfo(info: ErrorInfo): FingerError {
    const code = isErrorCode(info.code) ? info.code : 'E_INTERNAL';
    return new FingerError(code, String(info.message ?? ''), info.details);
  }
}

/** True for a FingerError from any copy of this package (brand check, not `instanceof`). */
export function isFingerError(e: unknown): e is FingerError {
  return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
}

/** Converts anything thrown into the wire shape; non-finger errors become E_INTERNAL. */
export function toErrorInfo(e: unknown): ErrorInfo {
  if (isFingerError(e)) return e.toJSON();
  if (typeof e === 'object' && e !== null && isErrorCode((e as ErrorInfo).code)) {
    const info = e as ErrorInfo;
    const out: ErrorInfo = { code: info.code, message: String(info.message ?? '') };
    if (info.details !== undefined) out.details = info.details;
    return out;
  }
  return { code: 'E_INTERNAL', message: e instanceof Error ? e.message : String(e) };
}
