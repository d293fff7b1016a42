import { type ExitCode, exitCodeFor } from './exit-codes.js';

/** The wire shape of an error as the daemon sends it (`{"error":{…}}`). */
export interface ErrorBody {
  code: string;
  message: string;
  details?: unknown;
}

/**
 * An error the daemon answered with (`{"error":{code,message,details}}`) and the HTTP status it
 * came with. Thrown by the client for every non-2xx answer; branch on `code`.
 */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  readonly details?: unknown;

  constructor(status: number, body: ErrorBody) {
    super(body.message);
    this.name = 'ApiError';
    this.code = body.code;
    this.status = status;
    if (body.details !== undefined) this.details = body.details;
  }
}

/**
 * Nothing answered at the daemon's URL (connection refused, host unknown, no answer in time).
 * Printed as the "daemon is not running" message and exit code 3.
 */
export class DaemonNotRunningError extends Error {
  readonly code = 'E_DAEMON_NOT_RUNNING';
  readonly url: string;

  constructor(url: string) {
    super(`the finger daemon is not running (no answer at ${url}). Start it with: myfinger daemon start`);
    this.name = 'DaemonNotRunningError';
    this.url = url;
  }
}

/**
 * A failure the CLI detected itself (unreadable file, wait timed out, daemon failed to start).
 * `code` is a registry code or a CLI code (E_USAGE, E_DAEMON_NOT_RUNNING); `exitCode` defaults to
 * the code's class.
 */
export class CliError extends Error {
  readonly code: string;
  readonly details?: unknown;
  readonly exitCode: ExitCode;
  /** Extra lines printed under the error (log tail, hints). */
  readonly notes: string[];

  constructor(
    code: string,
    message: string,
    options: { details?: unknown; exitCode?: ExitCode; notes?: string[] } = {},
  ) {
    super(message);
    this.name = 'CliError';
    this.code = code;
    if (options.details !== undefined) this.details = options.details;
    this.exitCode = options.exitCode ?? exitCodeFor(code);
    this.notes = options.notes ?? [];
  }
}
