import { readFileSync, realpathSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { type SandboxStatus, sandboxWarning } from '@finger/hub';
import { isFingerError, toErrorInfo, type ValidationIssue } from '@finger/protocol';

import { build, type FingerApp } from './app.js';
import { type DaemonConfigInput, resolveHome } from './config.js';
import { LogDestination } from './log-destination.js';

/** Options of {@link runDaemon}. */
export interface RunDaemonOptions {
  /** FINGER_HOME (else env FINGER_HOME, else ~/.finger). */
  home?: string;
  port?: number;
  host?: string;
  /** Informational: the CLI's `daemon start --foreground`; backgrounding is the CLI's job. */
  foreground?: boolean;
  /** Environment for `FINGER_*` overrides; defaults to `process.env` (this is the composition root). */
  env?: Record<string, string | undefined>;
  /** Where the banner and start errors go (default process.stdout / process.stderr). */
  out?: (text: string) => void;
  err?: (text: string) => void;
  /** Exit function for start errors and a second signal (default `process.exit`). */
  exit?: (code: number) => void;
  /** Where the daemon's log lines go (default a {@link LogDestination} on stdout, flushed before an exit). */
  logDestination?: LogDestination;
}

/** How long the last log lines may take to be written before the process exits anyway. */
const LOG_FLUSH_MS = 2000;

/** The lines printed once the daemon listens. */
export function banner(app: FingerApp, url: string): string {
  const modules = app.hub.registry.list().map((m) => m.id);
  return [
    `finger daemon listening on ${url} (pid ${process.pid})`,
    `  home: ${app.home}`,
    `  admin token: ${app.tokenFile}`,
    `  workspace: ${app.workspaceRoots.join(', ')}`,
    `  modules: ${modules.length ? modules.join(', ') : '(none)'}`,
    sandboxLine(app.sandbox.status()),
    `  API docs: ${url}/docs`,
    '',
  ].join('\n');
}

/** The banner's sandbox line: what runs AI-initiated processes, or the loud warning that nothing does. */
function sandboxLine(s: SandboxStatus): string {
  const warning = sandboxWarning(s);
  if (warning !== undefined) return `  WARNING ${warning}`;
  return `  sandbox: bubblewrap (${s.bwrap ?? 'bwrap'}, mode ${s.mode}): FINGER_HOME, the admin token and credential places are hidden from AI-initiated processes`;
}

/** Formats a start error for a person: the message, then each config issue on its own line. */
export function describeStartError(e: unknown): string {
  if (isFingerError(e)) {
    const issues = (e.details as { issues?: ValidationIssue[] } | undefined)?.issues;
    const lines = [`finger daemon: ${e.message} [${e.code}]`];
    if (Array.isArray(issues) && issues.length > 1) for (const i of issues) lines.push(`  ${i.path} ${i.message}`);
    return `${lines.join('\n')}\n`;
  }
  return `finger daemon: failed to start: ${e instanceof Error ? e.message : String(e)}\n`;
}

/**
 * Environment variable naming the file a start error is written to as `{code, message, details}`
 * JSON (one object): how `myfinger daemon start` learns the real code of a background daemon that
 * refused to start, instead of reading it back from the log.
 */
export const START_ERROR_FILE_ENV = 'FINGER_START_ERROR_FILE';

/** Writes `e` to the start-error file when the environment names one (best effort: the log has it too). */
function writeStartError(file: string | undefined, e: unknown): void {
  if (!file) return;
  const info = isFingerError(e)
    ? toErrorInfo(e)
    : { code: 'E_INTERNAL', message: `failed to start: ${e instanceof Error ? e.message : String(e)}` };
  try {
    writeFileSync(file, `${JSON.stringify(info)}\n`, { mode: 0o600 });
  } catch {
    // the CLI falls back to the log's last lines
  }
}

/**
 * Builds and starts the daemon, prints the banner, and resolves once a SIGINT/SIGTERM has
 * stopped it (stop accepting, drain in-flight calls up to `shutdown.drain_ms`, close modules,
 * flush the stores). A second signal exits at once with code 1. A start error (bad config, port
 * in use) is printed and exits with code 1.
 */
export async function runDaemon(opts: RunDaemonOptions = {}): Promise<void> {
  const env = opts.env ?? process.env;
  const out = opts.out ?? ((t: string) => void process.stdout.write(t));
  const err = opts.err ?? ((t: string) => void process.stderr.write(t));
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  // the last lines (a start error's warnings, 'shutting down') are written before the process ends,
  // for at most LOG_FLUSH_MS: a full disk never keeps the process from exiting
  const logDestination = opts.logDestination ?? new LogDestination();
  const overrides: DaemonConfigInput = {};
  if (opts.host !== undefined || opts.port !== undefined) {
    overrides.server = {};
    if (opts.host !== undefined) overrides.server.host = opts.host;
    if (opts.port !== undefined) overrides.server.port = opts.port;
  }
  let app: FingerApp | undefined;
  let url: string;
  try {
    app = await build({ home: opts.home, env, config: overrides, logDestination });
    url = (await app.listen()).url;
  } catch (e) {
    err(describeStartError(e));
    writeStartError(env[START_ERROR_FILE_ENV], e);
    await app?.close().catch(() => undefined);
    await logDestination.flush(LOG_FLUSH_MS);
    exit(1);
    return;
  }
  const running = app;
  out(banner(running, url));

  await new Promise<void>((resolve) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) {
        err(`finger daemon: second ${signal}, exiting now\n`);
        exit(1);
        return;
      }
      stopping = true;
      running.logger.info({ signal }, 'shutting down');
      running
        .close()
        .catch((e: unknown) => running.logger.error({ err: e }, 'shutdown failed'))
        .finally(() => {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
          void logDestination.flush(LOG_FLUSH_MS).then(() => resolve());
        });
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

function isMain(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(entry)).href;
  } catch {
    return import.meta.url === pathToFileURL(entry).href;
  }
}

/**
 * At exit, whatever the cause (an uncaught error included), removes `<home>/daemon.json` when it
 * still names this process: the CLI must never find a stale one (close() removes it on a clean stop).
 */
function removeDaemonFileAtExit(home: string): void {
  process.once('exit', () => {
    const file = join(home, 'daemon.json');
    try {
      const info = JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown };
      if (info.pid === process.pid) unlinkSync(file);
    } catch {
      // none, or another daemon's
    }
  });
}

if (isMain()) {
  removeDaemonFileAtExit(resolveHome(undefined, process.env));
  runDaemon({ foreground: true }).then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(describeStartError(e));
      writeStartError(process.env[START_ERROR_FILE_ENV], e);
      process.exit(1);
    },
  );
}
