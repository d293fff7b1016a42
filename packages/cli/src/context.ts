import type { Command } from 'commander';

import { DaemonClient, type DaemonLocation, type Env, locateDaemon, resolveHome } from './client.js';
import { Output, type OutputStream } from './output.js';
import { type ErrorContext, reportError } from './render-error.js';

/** How `run()` is wired to the world; every field has a process default. */
export interface RunOptions {
  stdout?: OutputStream;
  stderr?: OutputStream;
  /** Environment (default `process.env`). */
  env?: Env;
  /**
   * Ends long-running commands (`events tail`, `request --wait`, waits of `daemon start|stop`).
   * Default: SIGINT or SIGTERM while such a command runs.
   */
  signal?: AbortSignal;
  /** The daemon's main script for `daemon start` (default: `@finger/daemon/main` resolved). */
  daemonEntry?: string;
  /** Poll period of waits (`request --wait`, `daemon start|stop`), ms. Default 250. */
  pollIntervalMs?: number;
}

/** RunOptions with the defaults applied. */
export interface CliIo {
  stdout: OutputStream;
  stderr: OutputStream;
  env: Env;
  signal?: AbortSignal;
  daemonEntry?: string;
  pollIntervalMs: number;
}

/** The options every command accepts (`--json`, `--home`, `--url`). */
export interface GlobalOptions {
  json?: boolean;
  home?: string;
  url?: string;
}

/** What a command action gets: output, globals, and lazy access to the daemon. */
export interface CommandContext {
  io: CliIo;
  out: Output;
  globals: GlobalOptions;
  /** FINGER_HOME in effect. */
  home: string;
  /** Set by a command before it may fail, to enrich the error report (e.g. the `/hub` text). */
  errorContext: ErrorContext;
  /** Where the daemon is (URL, token, daemon.json). */
  locate(): Promise<DaemonLocation>;
  /** An authenticated client for the located daemon. */
  client(): Promise<DaemonClient>;
  /** A signal that aborts on interrupt (RunOptions.signal, or SIGINT/SIGTERM). */
  interrupt(): AbortSignal;
}

/** Mutable state of one `run()`: the exit code chosen by the action and cleanups to run. */
export interface RunState {
  io: CliIo;
  exitCode: number;
  cleanups: Array<() => void>;
}

function makeInterrupt(state: RunState): () => AbortSignal {
  let ac: AbortController | undefined;
  return () => {
    if (state.io.signal) return state.io.signal;
    if (!ac) {
      const ctl = new AbortController();
      ac = ctl;
      const onSignal = (): void => ctl.abort(new Error('interrupted'));
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      state.cleanups.push(() => {
        process.removeListener('SIGINT', onSignal);
        process.removeListener('SIGTERM', onSignal);
      });
    }
    return ac.signal;
  };
}

/** Builds the context of one command invocation from its commander Command. */
export function commandContext(state: RunState, cmd: Command): CommandContext {
  const globals = cmd.optsWithGlobals<GlobalOptions>();
  const io = state.io;
  const out = new Output(io, globals.json === true);
  const home = resolveHome(globals.home, io.env);
  let located: Promise<DaemonLocation> | undefined;
  const errorContext: ErrorContext = { home };
  const locate = (): Promise<DaemonLocation> =>
    (located ??= locateDaemon({ home, url: globals.url }, io.env).then((loc) => {
      errorContext.tokenFile = loc.tokenFile;
      return loc;
    }));
  return {
    io,
    out,
    globals,
    home,
    errorContext,
    locate,
    async client() {
      const loc = await locate();
      return new DaemonClient({ url: loc.url, token: loc.token });
    },
    interrupt: makeInterrupt(state),
  };
}

/** A command body: gets the context, positional arguments and the command's own options. */
export type ActionBody<O> = (ctx: CommandContext, args: string[], opts: O) => Promise<number>;

/**
 * Adapts a command body to commander: builds the context, runs the body, turns a thrown error
 * into its report and exit code, and records the exit code in `state`.
 */
export function action<O = Record<string, unknown>>(
  state: RunState,
  body: ActionBody<O>,
): (...raw: unknown[]) => Promise<void> {
  return async (...raw: unknown[]) => {
    const cmd = raw[raw.length - 1] as Command;
    const opts = raw[raw.length - 2] as O;
    const args = raw.slice(0, -2).map((a) => a as string);
    const ctx = commandContext(state, cmd);
    try {
      state.exitCode = await body(ctx, args, opts);
    } catch (err) {
      state.exitCode = reportError(ctx.out, err, ctx.errorContext);
    }
  };
}
