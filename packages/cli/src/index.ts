/**
 * `@finger/cli`: the `myfinger` command as a library. `run(argv, options)` is what the bin shim
 * calls; the rest is exported for tests and for tools that embed the CLI.
 */
export type { DaemonLocation, Env } from './client.js';
export {
  DaemonClient,
  DEFAULT_URL,
  locateDaemon,
  readDaemonInfo,
  readToken,
  resolveHome,
  tokenFilePath,
} from './client.js';
export type { RunDaemonOptions } from './commands/daemon.js';
export type { RunOptions } from './context.js';
export { ApiError, CliError, DaemonNotRunningError } from './errors.js';
export type { ExitCode } from './exit-codes.js';
export { CLI_ERROR_CODES, EXIT, EXIT_BY_ERROR_CODE, exitCodeFor } from './exit-codes.js';
export { buildProgram, run } from './main.js';
export type { OutputStream } from './output.js';
