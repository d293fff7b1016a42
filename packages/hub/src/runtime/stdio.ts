import path from 'node:path';

import type { StdioCallLine, StdioCancelLine } from '@finger/module-sdk';
import { FingerError } from '@finger/protocol';

import { type Clock, systemClock } from '../clock.js';
import type { Logger } from '../logger.js';
import { ModuleProcess } from './module-process.js';
import { childEnv } from './process-tree.js';
import { RestartLifecycle } from './restart-lifecycle.js';
import type { ModuleRuntime, RuntimeHealth, RuntimeNotice, RuntimeOptions, ToolCallContext } from './runtime.js';
import { sandboxCommand } from './sandbox-spawn.js';
import { PingTracker } from './stdio-pings.js';
import { parseModuleLine } from './stdio-protocol.js';

/** Counters of a stdio runtime, for metrics and tests. */
export interface StdioRuntimeStats {
  /** Lines from stdout that were not valid protocol lines (bad JSON, bad shape, unknown id, too long). */
  garbage_lines: number;
  /** Successful restarts after a crash. */
  restarts: number;
  /** Calls sent and not yet answered. */
  inflight: number;
  /** Pid of the running child, when there is one. */
  pid?: number;
}

const DEFAULT_MAX_LINE = 1024 * 1024;
const DEFAULT_CANCEL_GRACE_MS = 2000;
const DEFAULT_BACKOFF: [number, number] = [100, 10_000];
const STDERR_MAX_LINE = 16 * 1024;
/** After SIGTERM from a cancel timeout, SIGKILL follows after this long. */
const KILL_GRACE_MS = 1000;
/** close(): SIGKILL this long after SIGTERM. */
const CLOSE_KILL_MS = 2000;
/** A child up this long counts as stable: the restart backoff starts over at its minimum. */
const STABLE_UPTIME_MS = 10_000;
const SAMPLE_CHARS = 200;

interface Pending {
  resolve(v: unknown): void;
  reject(e: unknown): void;
  ctx: ToolCallContext;
  /** Cancel-grace timer, once cancel() was called. */
  grace: unknown;
}

/**
 * Runs a module as a child process speaking JSON lines on stdin/stdout (§3.4), in any language.
 *
 * The child leads its own process group, so a kill reaches everything it started. Its environment
 * is minimal (PATH, HOME, LANG, … from `baseEnv`) plus the manifest's `env`; the daemon's
 * environment never passes whole. Bad stdout lines are counted and reported, never fatal. When
 * the child dies, in-flight calls reject E_MODULE_CRASHED and it is restarted with exponential
 * backoff; calls arriving meanwhile wait for the restart until their deadline (E_TIMEOUT). A
 * cancelled call left unanswered for `cancel_grace_ms` gets the whole group killed.
 */
export class StdioRuntime implements ModuleRuntime {
  readonly type = 'stdio';
  readonly #opts: RuntimeOptions;
  readonly #id: string;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #maxLine: number;
  readonly #cancelGrace: number;
  readonly #life: RestartLifecycle;
  #proc: ModuleProcess | null = null;
  readonly #pending = new Map<string, Pending>();
  readonly #pings: PingTracker;
  #garbage = 0;
  #restarts = 0;
  #closing: Promise<void> | null = null;

  constructor(opts: RuntimeOptions) {
    this.#opts = opts;
    this.#id = opts.manifest.id;
    this.#clock = opts.clock ?? systemClock;
    this.#log = opts.logger.child({ runtime: 'stdio' }); // the registry's logger names the module
    this.#pings = new PingTracker(this.#clock);
    const l = opts.limits ?? {};
    this.#maxLine = l.max_line_bytes ?? DEFAULT_MAX_LINE;
    this.#cancelGrace = l.cancel_grace_ms ?? DEFAULT_CANCEL_GRACE_MS;
    this.#life = new RestartLifecycle({
      id: this.#id,
      clock: this.#clock,
      backoff: l.restart_backoff_ms ?? DEFAULT_BACKOFF,
      connect: () => this.#spawnReady(),
      alive: () => this.#proc !== null,
      onRestartFailed: (e) =>
        this.#log.warn({ err: e instanceof Error ? e.message : String(e) }, 'module restart failed'),
      onRestarted: () => this.#onRestarted(),
      closedError: () => this.#closedError(),
      notReady: () => this.#notReady(),
    });
  }

  /**
   * Spawns the child (and, with `limits.start_timeout_ms`, waits for its first pong). Rejects
   * E_MODULE_UNHEALTHY when it cannot be spawned or does not answer, E_INVALID_MANIFEST for a
   * non-stdio manifest, E_PROVIDER_CLOSED after close(). A failed start may be retried.
   */
  start(): Promise<void> {
    return this.#life.start();
  }

  /**
   * Sends `{"type":"call"}` with `ctx.call_id` as the line id and resolves with the module's
   * result. Rejects with the module's error (a registered code passes, others become
   * E_MODULE_ERROR with `details.module_code`), E_MODULE_CRASHED when the child dies first,
   * E_TIMEOUT when a restart outlasts `ctx.deadline`, E_PROVIDER_CLOSED after close(),
   * E_MODULE_UNHEALTHY before start().
   */
  invoke(tool: string, args: unknown, ctx: ToolCallContext): Promise<unknown> {
    return this.#life.whenRunning(ctx.deadline, () => this.#call(this.#proc as ModuleProcess, tool, args, ctx));
  }

  /**
   * Sends `{"type":"cancel"}` for an in-flight call. The hub settles the call itself; if the module
   * has not answered within `cancel_grace_ms` its process group is killed (SIGTERM, then SIGKILL),
   * which fails the other in-flight calls with E_MODULE_CRASHED and restarts the module.
   */
  cancel(call_id: string, reason: string): void {
    const p = this.#pending.get(call_id);
    const proc = this.#proc;
    if (p === undefined || p.grace !== null || proc === null) return;
    const cancel: StdioCancelLine = { type: 'cancel', id: call_id };
    proc.write(JSON.stringify(cancel) + '\n');
    p.grace = this.#clock.setTimeout(() => {
      p.grace = null;
      if (this.#pending.get(call_id) !== p || this.#proc !== proc || proc.gone) return;
      this.#log.warn(
        { call_id, reason, pid: proc.pid, grace_ms: this.#cancelGrace },
        'module did not answer a cancel in time; killing its process group',
      );
      proc.terminate(KILL_GRACE_MS);
    }, this.#cancelGrace);
  }

  /** Kill switch: SIGKILLs the child's process group now (in-flight calls fail E_MODULE_CRASHED; it restarts). */
  kill(): Promise<void> {
    const proc = this.#proc;
    if (proc === null || proc.gone) return Promise.resolve();
    this.#log.warn({ pid: proc.pid }, 'killing the module process group (halt)');
    return proc.kill();
  }

  /** Ping → pong within `timeout_ms` is healthy; not running (idle, restarting, closed) is not. */
  health(timeout_ms: number): Promise<RuntimeHealth> {
    const proc = this.#proc;
    if (this.#life.state !== 'running' || proc === null)
      return Promise.resolve({ ok: false, detail: this.#life.state });
    return this.#ping(proc, timeout_ms);
  }

  /**
   * Stops restarting, fails in-flight and waiting calls with E_PROVIDER_CLOSED, ends stdin and
   * SIGTERMs the process group (SIGKILL after 2 s). Resolves when the child is gone. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  /** Counters and the current pid. */
  stats(): StdioRuntimeStats {
    const s: StdioRuntimeStats = {
      garbage_lines: this.#garbage,
      restarts: this.#restarts,
      inflight: this.#pending.size,
    };
    if (this.#life.state === 'running' && this.#proc !== null) s.pid = this.#proc.pid;
    return s;
  }

  // ---- process lifecycle -------------------------------------------------------------------

  async #spawnReady(): Promise<void> {
    const proc = this.#spawn();
    await proc.ready.catch((e: unknown) => {
      throw this.#cannotStart(e);
    });
    this.#log.debug({ pid: proc.pid }, 'module process started');
    if (this.#life.state === 'closed' && this.#proc === proc) proc.terminate(CLOSE_KILL_MS);
    const t = this.#opts.limits?.start_timeout_ms;
    if (t === undefined) return;
    const h = await this.#ping(proc, t);
    if (!h.ok) {
      proc.terminate(KILL_GRACE_MS);
      throw new FingerError(
        'E_MODULE_UNHEALTHY',
        `module "${this.#id}" did not answer a ping after start: ${h.detail}`,
      );
    }
  }

  #spawn(): ModuleProcess {
    const rt = this.#opts.manifest.runtime;
    if (rt.type !== 'stdio') {
      throw new FingerError('E_INVALID_MANIFEST', `module "${this.#id}" is not a stdio module`, {
        issues: [{ path: '$.runtime.type', message: `expected "stdio", got "${rt.type}"` }],
      });
    }
    const cwd = path.resolve(this.#opts.baseDir, rt.cwd ?? '.');
    // process.env is only read to pick the minimal names; the composition root should pass baseEnv.
    const env = childEnv(this.#opts.baseEnv ?? process.env, rt.env);
    const settings = this.#opts.settings;
    if (settings !== undefined && Object.keys(settings).length > 0)
      env.FINGER_MODULE_SETTINGS = JSON.stringify(settings);
    let proc: ModuleProcess;
    try {
      const { command, sandboxed } = sandboxCommand(this.#opts, rt.command, cwd, env);
      proc = new ModuleProcess({
        command,
        sandboxed,
        cwd,
        env,
        maxLineBytes: this.#maxLine,
        stderrMaxLineBytes: STDERR_MAX_LINE,
        clock: this.#clock,
        hooks: {
          onLine: (line) => this.#onLine(proc, line),
          onOversize: (bytes) =>
            this.#onGarbage(proc, `line longer than ${this.#maxLine} bytes discarded`, undefined, bytes),
          onStderr: (line, bytes) => {
            if (line !== null) this.#log.info({ stream: 'stderr', pid: proc.pid }, line);
            else this.#log.warn({ stream: 'stderr', pid: proc.pid, bytes }, 'over-long stderr line dropped');
          },
          onGone: (code, signal) => this.#gone(proc, code, signal),
          onError: (e) => this.#log.debug({ pid: proc.pid, err: e.message }, 'module process or pipe error'),
        },
      });
    } catch (e) {
      throw this.#cannotStart(e);
    }
    this.#proc = proc;
    return proc;
  }

  /** The child is gone (exited and pipes closed, or it never started). */
  #gone(proc: ModuleProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#proc !== proc) return;
    this.#proc = null;
    if (this.#life.state === 'closed') return;
    const message = `module "${this.#id}" exited (code ${code}, signal ${signal})`;
    const inflight = this.#pending.size;
    for (const p of this.#pending.values()) {
      if (p.grace !== null) this.#clock.clearTimeout(p.grace);
      p.reject(new FingerError('E_MODULE_CRASHED', message, { exit_code: code, signal }));
    }
    this.#pending.clear();
    this.#pings.settleAll({ ok: false, detail: 'module process exited' });
    if (this.#life.state !== 'running') return; // a (re)start attempt: its own code handles the failure
    this.#log.warn({ pid: proc.pid, exit_code: code, signal, inflight }, 'module process exited');
    this.#notice({
      type: 'crashed',
      message,
      data: { module: this.#id, pid: proc.pid, exit_code: code, signal, inflight },
    });
    if (this.#clock.now() - proc.startedAt >= STABLE_UPTIME_MS) this.#life.resetBackoff();
    this.#life.crashed();
  }

  #onRestarted(): void {
    const proc = this.#proc as ModuleProcess;
    this.#restarts++;
    this.#log.info({ pid: proc.pid, restarts: this.#restarts }, 'module process restarted');
    this.#notice({
      type: 'restarted',
      message: `module "${this.#id}" restarted`,
      data: { module: this.#id, pid: proc.pid, restarts: this.#restarts },
    });
  }

  async #close(): Promise<void> {
    const closed = this.#closedError();
    this.#life.close(closed);
    for (const p of this.#pending.values()) {
      if (p.grace !== null) this.#clock.clearTimeout(p.grace);
      p.reject(closed);
    }
    this.#pending.clear();
    this.#pings.settleAll({ ok: false, detail: 'closed' });
    const proc = this.#proc;
    if (proc === null) return;
    proc.endInput();
    // Not spawned yet: #spawnReady terminates it once it is (or the spawn fails).
    proc.terminate(CLOSE_KILL_MS);
    await proc.exited;
    this.#proc = null;
  }

  // ---- lines from the module ---------------------------------------------------------------

  #onLine(proc: ModuleProcess, line: string): void {
    if (proc !== this.#proc || this.#life.state === 'closed') return;
    const m = parseModuleLine(line);
    if (m === null) return;
    switch (m.type) {
      case 'garbage':
        return this.#onGarbage(proc, m.reason, line);
      case 'result':
      case 'error': {
        const p = this.#take(m.id);
        if (p === undefined) return this.#onGarbage(proc, `${m.type} for an unknown id`, line);
        if (m.type === 'result') p.resolve(m.result);
        else p.reject(m.error);
        return;
      }
      case 'progress': {
        const p = this.#pending.get(m.id);
        if (p === undefined) return this.#onGarbage(proc, 'progress for an unknown id', line);
        return this.#safely(() => p.ctx.progress(m.message, m.fraction));
      }
      case 'lease.extend': {
        const p = this.#pending.get(m.id);
        if (p === undefined) return this.#onGarbage(proc, 'lease.extend for an unknown id', line);
        return this.#safely(() => p.ctx.extendLease(m.ttl_ms));
      }
      case 'pong': {
        if (!this.#pings.pong(m.id)) this.#onGarbage(proc, 'pong for an unknown id', line);
        return;
      }
      case 'event':
        return this.#notice({
          type: 'event',
          message: m.name,
          data: { module: this.#id, name: m.name, data: m.data },
        });
    }
  }

  #take(id: string): Pending | undefined {
    const p = this.#pending.get(id);
    if (p === undefined) return undefined;
    this.#pending.delete(id);
    if (p.grace !== null) this.#clock.clearTimeout(p.grace);
    return p;
  }

  #onGarbage(proc: ModuleProcess, reason: string, line?: string, bytes?: number): void {
    if (proc !== this.#proc) return;
    this.#garbage++;
    const data: Record<string, unknown> = { module: this.#id, reason };
    if (line !== undefined) data.sample = line.length > SAMPLE_CHARS ? line.slice(0, SAMPLE_CHARS) : line;
    if (bytes !== undefined) data.bytes = bytes;
    this.#log.warn(data, 'garbage line from module');
    this.#notice({ type: 'garbage', message: `module "${this.#id}": ${reason}`, data });
  }

  // ---- small helpers -------------------------------------------------------------------------

  #call(proc: ModuleProcess, tool: string, args: unknown, ctx: ToolCallContext): Promise<unknown> {
    const id = ctx.call_id;
    if (this.#pending.has(id)) {
      return Promise.reject(new FingerError('E_INTERNAL', `call id ${id} is already in flight on "${this.#id}"`));
    }
    let line: string;
    try {
      const meta = {
        request_id: ctx.request_id,
        session_id: ctx.session_id,
        lease_id: ctx.lease_id,
        deadline: ctx.deadline,
      };
      const call: StdioCallLine = { type: 'call', id, tool, args: args === undefined ? null : args, meta };
      line = JSON.stringify(call) + '\n';
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      return Promise.reject(new FingerError('E_INVALID_ARGS', `arguments are not serialisable: ${why}`));
    }
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, ctx, grace: null });
      proc.write(line); // a dead pipe is a no-op: the exit path fails the call
    });
  }

  #ping(proc: ModuleProcess, timeout_ms: number): Promise<RuntimeHealth> {
    return this.#pings.ping((line) => proc.write(line), timeout_ms);
  }

  #notReady(): FingerError {
    return new FingerError('E_TIMEOUT', `module "${this.#id}" was not ready before the call's deadline`);
  }

  #cannotStart(e: unknown): FingerError {
    const rt = this.#opts.manifest.runtime;
    const command = rt.type === 'stdio' ? rt.command : [];
    const why = e instanceof Error ? e.message : String(e);
    return new FingerError(
      'E_MODULE_UNHEALTHY',
      `module "${this.#id}": cannot start ${JSON.stringify(command)}: ${why}`,
      {
        command,
      },
    );
  }

  #closedError(): FingerError {
    return new FingerError('E_PROVIDER_CLOSED', `module "${this.#id}" runtime is closed`);
  }

  #notice(n: RuntimeNotice): void {
    this.#safely(() => this.#opts.onNotice?.(n));
  }

  #safely(fn: () => void): void {
    try {
      fn();
    } catch (e) {
      this.#log.error({ err: e instanceof Error ? e.message : String(e) }, 'runtime callback threw');
    }
  }
}
