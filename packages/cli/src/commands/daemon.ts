import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import type { Command } from 'commander';

import type { HealthResult } from '../api-types.js';
import { DaemonClient, readDaemonInfo, readToken } from '../client.js';
import { action, type CommandContext, type RunState } from '../context.js';
import { CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { formatDuration } from '../output.js';
import { EXIT_INTERRUPTED, pause } from '../wait.js';
import { type SafetyHealth, safetyLines } from './safety.js';
import { type SignInLink, signInLink } from './ui.js';

/**
 * V8 flags the daemon runs with: a bounded young generation keeps the idle daemon's resident
 * memory low (the default, 16 MB semi-spaces, costs ≈ 20 MB more at idle). 8 MB, not 1: with
 * 1 MB the state of 100 calls in flight (each waiting for its audit fsync) outgrew the young
 * generation, so nearly all of it was promoted and collected by full GCs — 40–47 % of the
 * daemon's CPU under `bench/http` load against 22–26 % with 8 MB, at the same idle RSS (±2 MB,
 * measured side by side). `--heap-growing-percent=100`: the old generation may grow to twice
 * what was live after its last full GC before the next one, not the up to four times V8 allows
 * a busy heap — under sustained `/hub` load (≈ 45 MB live) the daemon peaked at 176–185 MB
 * resident instead of 268–294 MB, at the same CPU per call (110–134 µs against 116–122, rounds
 * alternating). Keep in step with bin/myfinger.js and the benches' daemon launchers
 * (bench/lib/http-load.mjs, bench/daemon-rss, bench/hook).
 */
export const DAEMON_NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=100'];

/** How long `daemon start` waits for a new daemon to answer, and `daemon stop` for it to exit. */
export const DAEMON_WAIT_MS = 15_000;

/** The module specifier of the daemon entry; kept in a variable so tsc does not need its build. */
const DAEMON_MAIN = '@finger/daemon/main';

/** Options `runDaemon` of `@finger/daemon/main` is called with by `daemon start --foreground`. */
export interface RunDaemonOptions {
  foreground: true;
  home: string;
  port?: number;
  host?: string;
  /** The CLI's environment (FINGER_* overrides), so an injected env reaches the daemon too. */
  env: Record<string, string | undefined>;
}

interface DaemonMainModule {
  runDaemon(opts: RunDaemonOptions): Promise<void>;
}

interface StartOptions {
  foreground?: boolean;
  port?: string;
  host?: string;
}

/** The daemon's health at `url` (whole with a valid `token`), or undefined when nothing answers there. */
async function probe(url: string, token?: string, timeoutMs = 2_000): Promise<HealthResult | undefined> {
  try {
    return await new DaemonClient({ url, token }).health(timeoutMs);
  } catch {
    return undefined;
  }
}

/** True while a process with this pid exists (EPERM means it exists but is not ours). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parsePort(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n > 65_535) throw new CliError('E_USAGE', `--port must be an integer 0..65535, got ${raw}`);
  return n;
}

/** Path of the daemon's main script: RunOptions.daemonEntry, else `@finger/daemon/main` resolved. */
function daemonEntry(ctx: CommandContext): string {
  if (ctx.io.daemonEntry) return path.resolve(ctx.io.daemonEntry);
  try {
    return fileURLToPath(import.meta.resolve(DAEMON_MAIN));
  } catch (e) {
    throw new CliError('E_INTERNAL', `cannot find the daemon package (${DAEMON_MAIN}): ${(e as Error).message}`);
  }
}

async function loadDaemonMain(ctx: CommandContext): Promise<DaemonMainModule> {
  const spec = ctx.io.daemonEntry ? pathToFileURL(path.resolve(ctx.io.daemonEntry)).href : DAEMON_MAIN;
  let m: Partial<DaemonMainModule>;
  try {
    m = (await import(spec)) as Partial<DaemonMainModule>;
  } catch (e) {
    throw new CliError('E_INTERNAL', `cannot load the daemon (${spec}): ${(e as Error).message}`, {
      notes: ['is it built? run npm install (or npm run build) in the repo'],
    });
  }
  if (typeof m.runDaemon !== 'function') throw new CliError('E_INTERNAL', `${spec} does not export runDaemon()`);
  return m as DaemonMainModule;
}

/** The lines `file` gained after byte `from` (at most the last `max`), for start failures. */
function logTail(file: string, from: number, max = 20): string[] {
  try {
    const text = readFileSync(file).subarray(from).toString('utf8');
    const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
    return lines.slice(-max);
  } catch {
    return [];
  }
}

/**
 * The file a background daemon writes its start error to (`{code, message, details}`), named to it
 * by this environment variable (START_ERROR_FILE_ENV of @finger/daemon's main; keep in step).
 */
const START_ERROR_FILE_ENV = 'FINGER_START_ERROR_FILE';

/** The start error the daemon wrote to `file`, or undefined when it wrote none (or an unreadable one). */
export function readStartError(file: string): { code: string; message: string } | undefined {
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
  const o = v as { code?: unknown; message?: unknown } | null;
  if (typeof o !== 'object' || o === null || typeof o.code !== 'string' || !/^E_[A-Z0-9_]+$/.test(o.code))
    return undefined;
  if (typeof o.message !== 'string') return undefined;
  return { code: o.code, message: o.message };
}

/** `finger daemon: <message> [E_CODE]`: how the daemon prints the error it refused to start with (describeStartError). */
const START_ERROR_RE = /^finger daemon: (.+) \[(E_[A-Z0-9_]+)\]$/;

/** The last start error the daemon printed in `lines`, with its code. */
export function startErrorOf(lines: string[]): { code: string; message: string } | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = START_ERROR_RE.exec(lines[i]!.trim());
    if (m) return { code: m[2]!, message: m[1]! };
  }
  return undefined;
}

/** A one-time sign-in link to the web console for the admin token, or undefined when the daemon gives none. */
async function consoleLink(url: string, token: string | undefined): Promise<SignInLink | undefined> {
  if (!token) return undefined;
  try {
    return await signInLink(new DaemonClient({ url, token }));
  } catch {
    return undefined; // an older daemon, or a token it does not know: the start itself succeeded
  }
}

/** FINGER_PORT as a number, or undefined when unset or not a port (the daemon reports a bad value itself). */
function envPort(raw: string | undefined): number | undefined {
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  const n = Number(raw);
  return n <= 65_535 ? n : undefined;
}

/**
 * What `daemon start` asked for that the daemon running at `url` does not have: `port N` or
 * `host H`, or undefined when it asked for nothing else (no port, port 0 — any port —, the same).
 */
export function otherAddress(url: string, port: number | undefined, host: string | undefined): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  const runningPort = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
  if (port !== undefined && port !== 0 && port !== runningPort) return `port ${port}`;
  const runningHost = u.hostname.replace(/^\[|\]$/g, '');
  if (host !== undefined && host !== '' && host !== runningHost) return `host ${host}`;
  return undefined;
}

async function start(ctx: CommandContext, opts: StartOptions): Promise<number> {
  const { out, home } = ctx;
  const port = parsePort(opts.port);
  const running = await readDaemonInfo(home);
  const health = running ? await probe(running.url, await readToken(home, ctx.io.env, running)) : undefined;
  if (running && health) {
    // without a valid token health names no pid: daemon.json's is the one that answered there
    const pid = health.pid ?? running.pid;
    const other = otherAddress(
      running.url,
      port ?? envPort(ctx.io.env.FINGER_PORT),
      opts.host ?? ctx.io.env.FINGER_HOST,
    );
    if (other !== undefined) {
      // a second daemon was asked for: say which one runs here, and how to run another beside it
      throw new CliError(
        'E_CONFLICT',
        `a finger daemon is already running in FINGER_HOME ${home} (pid ${pid}) at ${running.url}; it was not started again on ${other}`,
        {
          notes: [
            'one FINGER_HOME runs one daemon; to run a second one, give it its own home:',
            `  FINGER_HOME=${home}-2 ${other.startsWith('port ') ? `FINGER_PORT=${other.slice(5)} ` : ''}myfinger daemon start`,
            'or stop this one first: myfinger daemon stop',
          ],
        },
      );
    }
    if (out.json) out.printJson({ running: true, started: false, pid, url: running.url, home });
    else out.line(`finger daemon is already running (pid ${pid}) at ${running.url}`);
    return EXIT.OK;
  }
  if (opts.foreground) {
    const m = await loadDaemonMain(ctx);
    const runOpts: RunDaemonOptions = { foreground: true, home, env: ctx.io.env };
    if (port !== undefined) runOpts.port = port;
    if (opts.host) runOpts.host = opts.host;
    await m.runDaemon(runOpts);
    return EXIT.OK;
  }

  const entry = daemonEntry(ctx);
  if (!existsSync(entry)) {
    throw new CliError('E_INTERNAL', `the daemon is not built (missing ${entry})`, {
      notes: ['run npm install (or npm run build) in the repo'],
    });
  }
  await mkdir(home, { recursive: true, mode: 0o700 });
  const logFile = path.join(home, 'daemon.log');
  const fd = openSync(logFile, 'a', 0o600);
  const logStart = statSync(logFile).size;
  const errorFile = path.join(home, 'daemon.start-error.json');
  rmSync(errorFile, { force: true });
  const env: Record<string, string | undefined> = {
    ...ctx.io.env,
    FINGER_HOME: home,
    [START_ERROR_FILE_ENV]: errorFile,
  };
  if (port !== undefined) env.FINGER_PORT = String(port);
  if (opts.host) env.FINGER_HOST = opts.host;
  let exited: string | undefined;
  let child;
  try {
    child = spawn(process.execPath, [...DAEMON_NODE_FLAGS, entry], { detached: true, stdio: ['ignore', fd, fd], env });
  } finally {
    closeSync(fd);
  }
  child.on('exit', (code, signal) => (exited = signal ? `killed by ${signal}` : `exit code ${code}`));
  child.on('error', (e) => (exited = `could not start: ${e.message}`));
  child.unref();
  const pid = child.pid;
  const failNotes = (): string[] => {
    const tail = logTail(logFile, logStart);
    return tail.length ? [`last lines of ${logFile}:`, ...tail.map((l) => `  ${l}`)] : [`see ${logFile}`];
  };

  const signal = ctx.interrupt();
  const deadline = Date.now() + DAEMON_WAIT_MS;
  for (;;) {
    if (exited !== undefined || pid === undefined || !pidAlive(pid)) {
      // the daemon said why it refused to start, with its code: report that, not E_INTERNAL
      const written = readStartError(errorFile);
      if (written) {
        rmSync(errorFile, { force: true });
        throw new CliError(written.code, written.message, { notes: [`the whole log: ${logFile}`] });
      }
      const refused = startErrorOf(logTail(logFile, logStart));
      if (refused) throw new CliError(refused.code, refused.message, { notes: failNotes() });
      throw new CliError('E_INTERNAL', `the daemon stopped before answering (${exited ?? 'exited'})`, {
        notes: failNotes(),
      });
    }
    const info = await readDaemonInfo(home);
    if (info && info.pid === pid && (await probe(info.url, undefined, 1_000))) {
      const link = await consoleLink(info.url, await readToken(home, ctx.io.env, info));
      if (out.json)
        out.printJson({
          ...{ running: true, started: true, pid, url: info.url, home, log: logFile },
          ...(link ? { console_url: link.url } : {}),
        });
      else {
        out.line(
          `finger daemon started (pid ${pid}) at ${info.url}; token in ${info.token_file ?? path.join(home, 'token')}`,
        );
        if (link) out.line(`web console: ${link.url} (one-time sign-in link, valid 120 s; myfinger ui prints another)`);
      }
      return EXIT.OK;
    }
    if (Date.now() >= deadline) {
      throw new CliError('E_TIMEOUT', `the daemon (pid ${pid}) did not answer within ${DAEMON_WAIT_MS / 1000} s`, {
        notes: failNotes(),
      });
    }
    if (!(await pause(ctx.io.pollIntervalMs, signal))) {
      out.errLine(`stopped waiting; the daemon (pid ${pid}) may still be starting — see ${logFile}`);
      return EXIT_INTERRUPTED;
    }
  }
}

async function stop(ctx: CommandContext): Promise<number> {
  const { out, home } = ctx;
  const info = await readDaemonInfo(home);
  if (!info)
    throw new CliError(
      'E_DAEMON_NOT_RUNNING',
      `the finger daemon is not running (no daemon.json in ${home}); nothing to stop`,
    );
  const { pid } = info;
  if (!pidAlive(pid)) {
    throw new CliError(
      'E_DAEMON_NOT_RUNNING',
      `the finger daemon is not running (pid ${pid} from daemon.json is gone); nothing to stop`,
    );
  }
  try {
    process.kill(pid, 'SIGTERM');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ESRCH')
      throw new CliError(
        'E_DAEMON_NOT_RUNNING',
        `the finger daemon is not running (pid ${pid} is gone); nothing to stop`,
      );
    throw new CliError('E_FORBIDDEN', `cannot signal the daemon (pid ${pid}): ${code ?? (e as Error).message}`);
  }
  const signal = ctx.interrupt();
  const deadline = Date.now() + DAEMON_WAIT_MS;
  while (pidAlive(pid)) {
    if (Date.now() >= deadline) {
      throw new CliError(
        'E_TIMEOUT',
        `the daemon (pid ${pid}) did not exit within ${DAEMON_WAIT_MS / 1000} s of SIGTERM`,
        {
          notes: [`it may still be draining; see ${path.join(home, 'daemon.log')}`],
        },
      );
    }
    if (!(await pause(ctx.io.pollIntervalMs, signal))) {
      out.errLine(`stopped waiting; SIGTERM was sent to pid ${pid}`);
      return EXIT_INTERRUPTED;
    }
  }
  if (out.json) out.printJson({ stopped: true, pid });
  else out.line(`finger daemon stopped (pid ${pid})`);
  return EXIT.OK;
}

async function status(ctx: CommandContext): Promise<number> {
  const { out } = ctx;
  const client = await ctx.client();
  const h = await client.health();
  if (out.json) {
    out.printJson({ ...h, url: client.url });
    return EXIT.OK;
  }
  const c = out.c;
  const safety = (h as { safety?: SafetyHealth }).safety;
  // running is not the same as taking work: a halted or locked daemon says so in its first line
  const locked = safety !== undefined && safety.state !== 'open' ? ` — ${c.red(safety.state)}, refusing work` : '';
  out.line(`finger daemon ${h.status === 'ok' ? c.green(h.status) : c.yellow(h.status)}${locked}`);
  const reasons = (h as { reasons?: string[] }).reasons ?? [];
  for (const r of reasons) out.line(`  ${c.yellow(r)}`);
  // without a valid token the daemon answers no pid, version, uptime or home: those rows are left out
  const rows: Array<[string, string | undefined]> = [
    ['pid', h.pid?.toString()],
    ['url', client.url],
    ['version', h.version],
    ['uptime', h.uptime_s === undefined ? undefined : formatDuration(h.uptime_s)],
    ['modules', String(h.modules)],
    ['home', h.home],
  ];
  // distributed mode: where this daemon's cluster is, and whether it reaches it
  const { nats, redis } = h as {
    nats?: { cluster?: string; url?: string; node?: string; connected?: boolean; remote_modules?: number };
    redis?: { prefix?: string; connected?: boolean };
  };
  if (nats)
    rows.push([
      'nats',
      `${nats.connected ? 'connected' : 'disconnected'} — cluster ${nats.cluster ?? '?'} on ${nats.url ?? '?'}, node ${nats.node ?? '?'}, ${nats.remote_modules ?? 0} remote module(s)`,
    ]);
  if (redis) rows.push(['redis', `${redis.connected ? 'connected' : 'unreachable'} — keys ${redis.prefix ?? '?'}*`]);
  for (const [k, v] of rows) if (v !== undefined) out.line(`  ${k.padEnd(8)} ${v}`);
  if (safety) {
    const [first = '', ...rest] = safetyLines(safety);
    out.line(`  ${'safety'.padEnd(8)} ${safety.state === 'open' ? c.green(first) : c.red(first)}`);
    for (const l of rest) out.line(`  ${''.padEnd(8)} ${c.yellow(l)}`);
  }
  return EXIT.OK;
}

/** `daemon start [--foreground] [--port N] [--host H] | stop | status`. */
export function registerDaemon(program: Command, state: RunState): void {
  const daemon = program.command('daemon').description('start, stop and inspect the finger daemon');

  daemon
    .command('start')
    .description('start the daemon in the background (or in this terminal with --foreground)')
    .option('--foreground', 'run in this process until stopped (Ctrl-C)')
    .option('--port <n>', 'port to listen on (0 picks a free one; default 7770 or config)')
    .option('--host <host>', 'address to listen on (default 127.0.0.1 or config)')
    .action(action<StartOptions>(state, (ctx, _args, opts) => start(ctx, opts)));

  daemon
    .command('stop')
    .description('stop the daemon (SIGTERM, then wait for it to exit)')
    .action(action(state, (ctx) => stop(ctx)));

  daemon
    .command('status')
    .description('show whether the daemon answers, and its pid, url, uptime and modules')
    .action(action(state, (ctx) => status(ctx)));
}
