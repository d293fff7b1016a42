import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

import { FingerError, isErrorCode } from '@finger/protocol';

import { type Clock, systemClock } from '../clock.js';
import type { Logger } from '../logger.js';
import { LineReader } from './jsonl-reader.js';
import { childEnv, killProcessGroup } from './process-tree.js';
import type { ModuleRuntime, RuntimeHealth, RuntimeNotice, RuntimeOptions, ToolCallContext } from './runtime.js';

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
/** If stdio does not close this long after 'exit' (a grandchild holds the pipe), treat the child as gone. */
const EXIT_CLOSE_GRACE_MS = 1000;
const SAMPLE_CHARS = 200;

type State = 'idle' | 'starting' | 'running' | 'restarting' | 'closed';

interface Pending {
  resolve(v: unknown): void;
  reject(e: unknown): void;
  ctx: ToolCallContext;
  /** Cancel-grace timer, once cancel() was called. */
  grace: unknown;
}

interface Proc {
  child: ChildProcess;
  pid: number;
  startedAt: number;
  spawned: boolean;
  gone: boolean;
  exitTimer: unknown;
  onGone: (() => void) | null;
}

interface Waiter {
  resolve(): void;
  reject(e: unknown): void;
  timer: unknown;
}

/**
 * Runs a module as a child process speaking JSON lines on stdin/stdout (§3.4), in any language.
 *
 * The child leads its own process group (`detached`), so a kill reaches everything it started. Its
 * environment is minimal (PATH, HOME, LANG, … from `baseEnv`) plus the manifest's `env`; the
 * daemon's environment never passes whole. Bad stdout lines are counted and reported, never
 * fatal. When the child dies, in-flight calls reject E_MODULE_CRASHED and it is restarted with
 * exponential backoff; calls arriving meanwhile wait for the restart until their deadline
 * (E_TIMEOUT). A cancelled call left unanswered for `cancel_grace_ms` gets the whole group killed.
 */
export class StdioRuntime implements ModuleRuntime {
  readonly type = 'stdio';
  readonly #opts: RuntimeOptions;
  readonly #id: string;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #maxLine: number;
  readonly #cancelGrace: number;
  readonly #backoffMin: number;
  readonly #backoffMax: number;
  #backoff: number;
  #state: State = 'idle';
  #proc: Proc | null = null;
  readonly #pending = new Map<string, Pending>();
  readonly #pings = new Map<string, (h: RuntimeHealth) => void>();
  #pingSeq = 0;
  readonly #waiters = new Set<Waiter>();
  #garbage = 0;
  #restarts = 0;
  #restartTimer: unknown = null;
  #starting: Promise<void> | null = null;
  #closing: Promise<void> | null = null;

  constructor(opts: RuntimeOptions) {
    this.#opts = opts;
    this.#id = opts.manifest.id;
    this.#clock = opts.clock ?? systemClock;
    this.#log = opts.logger.child({ module: opts.manifest.id, runtime: 'stdio' });
    const l = opts.limits ?? {};
    this.#maxLine = l.max_line_bytes ?? DEFAULT_MAX_LINE;
    this.#cancelGrace = l.cancel_grace_ms ?? DEFAULT_CANCEL_GRACE_MS;
    [this.#backoffMin, this.#backoffMax] = l.restart_backoff_ms ?? DEFAULT_BACKOFF;
    this.#backoff = this.#backoffMin;
  }

  /**
   * Spawns the child (and, with `limits.start_timeout_ms`, waits for its first pong). Rejects
   * E_MODULE_UNHEALTHY when it cannot be spawned or does not answer, E_INVALID_MANIFEST for a
   * non-stdio manifest, E_PROVIDER_CLOSED after close(). A failed start may be retried.
   */
  start(): Promise<void> {
    if (this.#state === 'closed') return Promise.reject(this.#closedError());
    if (this.#starting) return this.#starting;
    this.#state = 'starting';
    this.#starting = this.#spawnReady().then(
      () => {
        if (this.#state === 'closed') throw this.#closedError();
        this.#state = 'running';
        this.#wakeWaiters();
      },
      (e: unknown) => {
        if (this.#state === 'starting') {
          this.#state = 'idle';
          this.#starting = null;
          this.#failWaiters(e);
        }
        throw e;
      },
    );
    return this.#starting;
  }

  /**
   * Sends `{"type":"call"}` with `ctx.call_id` as the line id and resolves with the module's
   * result. Rejects with the module's error (a registered code passes, others become
   * E_MODULE_ERROR with `details.module_code`), E_MODULE_CRASHED when the child dies first,
   * E_TIMEOUT when a restart outlasts `ctx.deadline`, E_PROVIDER_CLOSED after close().
   */
  invoke(tool: string, args: unknown, ctx: ToolCallContext): Promise<unknown> {
    switch (this.#state) {
      case 'running':
        return this.#call(tool, args, ctx);
      case 'closed':
        return Promise.reject(this.#closedError());
      case 'idle':
        return Promise.reject(new FingerError('E_MODULE_UNHEALTHY', `module "${this.#id}" is not started`));
      default:
        return this.#waitReady(ctx).then(() => this.invoke(tool, args, ctx));
    }
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
    this.#write(proc, JSON.stringify({ type: 'cancel', id: call_id }) + '\n');
    p.grace = this.#clock.setTimeout(() => {
      p.grace = null;
      if (this.#pending.get(call_id) !== p || this.#proc !== proc || proc.gone) return;
      this.#log.warn(
        { call_id, reason, pid: proc.pid, grace_ms: this.#cancelGrace },
        'module did not answer a cancel in time; killing its process group',
      );
      this.#killTree(proc);
    }, this.#cancelGrace);
  }

  /** Ping → pong within `timeout_ms` is healthy; not running (starting, restarting, closed) is not. */
  health(timeout_ms: number): Promise<RuntimeHealth> {
    const proc = this.#proc;
    if (this.#state !== 'running' || proc === null) return Promise.resolve({ ok: false, detail: this.#state });
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
    if (this.#state === 'running' && this.#proc !== null) s.pid = this.#proc.pid;
    return s;
  }

  // ---- process lifecycle -------------------------------------------------------------------

  async #spawnReady(): Promise<void> {
    const proc = await this.#spawn();
    const t = this.#opts.limits?.start_timeout_ms;
    if (t === undefined) return;
    const h = await this.#ping(proc, t);
    if (!h.ok) {
      this.#killTree(proc);
      throw new FingerError(
        'E_MODULE_UNHEALTHY',
        `module "${this.#id}" did not answer a ping after start: ${h.detail}`,
      );
    }
  }

  #spawn(): Promise<Proc> {
    const { manifest, baseDir } = this.#opts;
    const rt = manifest.runtime;
    if (rt.type !== 'stdio') {
      return Promise.reject(
        new FingerError('E_INVALID_MANIFEST', `module "${this.#id}" is not a stdio module`, {
          issues: [{ path: '$.runtime.type', message: `expected "stdio", got "${rt.type}"` }],
        }),
      );
    }
    const [cmd, ...args] = rt.command;
    const cwd = path.resolve(baseDir, rt.cwd ?? '.');
    // process.env is only read to pick the minimal names; the composition root should pass baseEnv.
    const env = childEnv(this.#opts.baseEnv ?? process.env, rt.env);
    const unhealthy = (e: unknown) =>
      new FingerError(
        'E_MODULE_UNHEALTHY',
        `module "${this.#id}": cannot start ${JSON.stringify(rt.command)}: ${e instanceof Error ? e.message : String(e)}`,
        { command: rt.command, cwd },
      );
    let child: ChildProcess;
    try {
      child = spawn(cmd as string, args, { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    } catch (e) {
      return Promise.reject(unhealthy(e));
    }
    const proc: Proc = {
      child,
      pid: child.pid ?? 0,
      startedAt: this.#clock.now(),
      spawned: false,
      gone: false,
      exitTimer: null,
      onGone: null,
    };
    this.#proc = proc;
    const out = new LineReader(
      this.#maxLine,
      (line) => this.#onLine(proc, line),
      (bytes) => this.#onGarbage(proc, `line longer than ${this.#maxLine} bytes discarded`, undefined, bytes),
    );
    const err = new LineReader(
      STDERR_MAX_LINE,
      (line) => this.#log.info({ stream: 'stderr', pid: proc.pid }, line),
      (bytes) => this.#log.warn({ stream: 'stderr', pid: proc.pid, bytes }, 'over-long stderr line dropped'),
    );
    child.stdout?.on('data', (c: Buffer) => out.push(c));
    child.stdout?.on('end', () => out.end());
    child.stderr?.on('data', (c: Buffer) => err.push(c));
    child.stderr?.on('end', () => err.end());
    // EPIPE and friends when the child is dying: the exit path handles the consequences.
    const ignore = (e: Error) => this.#log.debug({ pid: proc.pid, err: e.message }, 'module pipe error');
    child.stdin?.on('error', ignore);
    child.stdout?.on('error', ignore);
    child.stderr?.on('error', ignore);
    return new Promise<Proc>((resolve, reject) => {
      child.once('spawn', () => {
        proc.spawned = true;
        proc.pid = child.pid ?? 0;
        this.#log.debug({ pid: proc.pid, command: rt.command, cwd }, 'module process started');
        if (this.#state === 'closed' && this.#proc === proc) this.#killTree(proc, CLOSE_KILL_MS);
        resolve(proc);
      });
      child.on('error', (e) => {
        if (!proc.spawned) {
          reject(unhealthy(e));
          this.#gone(proc, null, null);
        } else {
          this.#log.warn({ pid: proc.pid, err: e.message }, 'module process error');
        }
      });
      child.once('exit', (code, signal) => {
        proc.exitTimer = this.#clock.setTimeout(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          this.#gone(proc, code, signal);
        }, EXIT_CLOSE_GRACE_MS);
      });
      child.once('close', (code, signal) => this.#gone(proc, code, signal));
    });
  }

  /** The child is gone (exit + pipes closed, or spawn failure). Runs once per process. */
  #gone(proc: Proc, code: number | null, signal: NodeJS.Signals | null): void {
    if (proc.gone) return;
    proc.gone = true;
    if (proc.exitTimer !== null) this.#clock.clearTimeout(proc.exitTimer);
    // Whatever it left behind in its group goes with it.
    if (proc.spawned) killProcessGroup(proc.pid, 'SIGKILL');
    proc.onGone?.();
    if (this.#proc !== proc) return;
    this.#proc = null;
    if (this.#state === 'closed') return;
    const details = { exit_code: code, signal };
    const inflight = this.#pending.size;
    for (const p of this.#pending.values()) {
      if (p.grace !== null) this.#clock.clearTimeout(p.grace);
      p.reject(
        new FingerError('E_MODULE_CRASHED', `module "${this.#id}" exited (code ${code}, signal ${signal})`, details),
      );
    }
    this.#pending.clear();
    this.#resolvePings({ ok: false, detail: 'module process exited' });
    if (this.#state !== 'running') return; // a (re)start attempt: its own code handles the failure
    this.#log.warn({ pid: proc.pid, exit_code: code, signal, inflight }, 'module process exited');
    this.#notice({
      type: 'crashed',
      message: `module "${this.#id}" exited (code ${code}, signal ${signal})`,
      data: { module: this.#id, pid: proc.pid, exit_code: code, signal, inflight },
    });
    if (this.#clock.now() - proc.startedAt >= STABLE_UPTIME_MS) this.#backoff = this.#backoffMin;
    this.#state = 'restarting';
    this.#scheduleRestart();
  }

  #scheduleRestart(): void {
    const delay = this.#backoff;
    this.#backoff = Math.min(this.#backoff * 2, this.#backoffMax);
    this.#restartTimer = this.#clock.setTimeout(() => {
      this.#restartTimer = null;
      void this.#restart();
    }, delay);
  }

  async #restart(): Promise<void> {
    if (this.#state !== 'restarting') return;
    try {
      await this.#spawnReady();
    } catch (e) {
      if (this.#state !== 'restarting') return;
      this.#log.warn({ err: e instanceof Error ? e.message : String(e) }, 'module restart failed');
      this.#scheduleRestart();
      return;
    }
    const proc = this.#proc;
    if (this.#state !== 'restarting' || proc === null) {
      // Closed meanwhile (close() takes care of the process), or it died already (retry).
      if (this.#state === 'restarting') this.#scheduleRestart();
      return;
    }
    this.#state = 'running';
    this.#restarts++;
    this.#log.info({ pid: proc.pid, restarts: this.#restarts }, 'module process restarted');
    this.#notice({
      type: 'restarted',
      message: `module "${this.#id}" restarted`,
      data: { module: this.#id, pid: proc.pid, restarts: this.#restarts },
    });
    this.#wakeWaiters();
  }

  /** SIGTERM the group now, SIGKILL it after a short grace if the leader is still there. */
  #killTree(proc: Proc, graceMs = KILL_GRACE_MS): void {
    if (proc.gone || !proc.spawned) return;
    killProcessGroup(proc.pid, 'SIGTERM');
    this.#clock.setTimeout(() => {
      if (!proc.gone) killProcessGroup(proc.pid, 'SIGKILL');
    }, graceMs);
  }

  async #close(): Promise<void> {
    this.#state = 'closed';
    if (this.#restartTimer !== null) this.#clock.clearTimeout(this.#restartTimer);
    this.#restartTimer = null;
    const closed = this.#closedError();
    this.#failWaiters(closed);
    for (const p of this.#pending.values()) {
      if (p.grace !== null) this.#clock.clearTimeout(p.grace);
      p.reject(closed);
    }
    this.#pending.clear();
    this.#resolvePings({ ok: false, detail: 'closed' });
    const proc = this.#proc;
    if (proc === null || proc.gone) return;
    await new Promise<void>((resolve) => {
      proc.onGone = resolve;
      try {
        proc.child.stdin?.end();
      } catch {
        // already closed
      }
      if (!proc.spawned) return; // spawn pending: its 'error' or 'spawn'/'exit' will settle it
      this.#killTree(proc, CLOSE_KILL_MS);
    });
    this.#proc = null;
  }

  // ---- lines from the module ---------------------------------------------------------------

  #onLine(proc: Proc, line: string): void {
    if (proc !== this.#proc || this.#state === 'closed') return;
    if (line.trim() === '') return;
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      this.#onGarbage(proc, 'not JSON', line);
      return;
    }
    if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
      this.#onGarbage(proc, 'not a JSON object', line);
      return;
    }
    const m = msg as Record<string, unknown>;
    const id = m.id;
    switch (m.type) {
      case 'result': {
        const p = typeof id === 'string' ? this.#take(id) : undefined;
        if (p === undefined) return this.#onGarbage(proc, 'result for an unknown id', line);
        p.resolve(m.result);
        return;
      }
      case 'error': {
        const p = typeof id === 'string' ? this.#take(id) : undefined;
        if (p === undefined) return this.#onGarbage(proc, 'error for an unknown id', line);
        p.reject(this.#moduleError(m));
        return;
      }
      case 'progress': {
        const p = typeof id === 'string' ? this.#pending.get(id) : undefined;
        if (p === undefined) return this.#onGarbage(proc, 'progress for an unknown id', line);
        const fraction = typeof m.fraction === 'number' && Number.isFinite(m.fraction) ? m.fraction : undefined;
        this.#safely(() => p.ctx.progress(typeof m.message === 'string' ? m.message : '', fraction));
        return;
      }
      case 'lease.extend': {
        const p = typeof id === 'string' ? this.#pending.get(id) : undefined;
        const ttl = m.ttl_ms;
        if (p === undefined) return this.#onGarbage(proc, 'lease.extend for an unknown id', line);
        if (typeof ttl !== 'number' || !(ttl > 0) || !Number.isFinite(ttl)) {
          return this.#onGarbage(proc, 'lease.extend without a positive ttl_ms', line);
        }
        this.#safely(() => p.ctx.extendLease(ttl));
        return;
      }
      case 'pong': {
        const r = typeof id === 'string' ? this.#pings.get(id) : undefined;
        if (r !== undefined) r({ ok: true });
        else if (!this.#isLatePong(id)) this.#onGarbage(proc, 'pong for an unknown id', line);
        return;
      }
      case 'event': {
        if (typeof m.name !== 'string') return this.#onGarbage(proc, 'event without a name', line);
        this.#notice({
          type: 'event',
          message: m.name,
          data: { module: this.#id, name: m.name, data: m.data ?? null },
        });
        return;
      }
      default:
        this.#onGarbage(proc, 'unknown line type', line);
    }
  }

  #moduleError(m: Record<string, unknown>): FingerError {
    const message = typeof m.message === 'string' ? m.message : 'module error';
    if (isErrorCode(m.code)) return new FingerError(m.code, message, m.details);
    return new FingerError('E_MODULE_ERROR', message, { module_code: m.code ?? null });
  }

  #take(id: string): Pending | undefined {
    const p = this.#pending.get(id);
    if (p === undefined) return undefined;
    this.#pending.delete(id);
    if (p.grace !== null) this.#clock.clearTimeout(p.grace);
    return p;
  }

  #onGarbage(proc: Proc, reason: string, line?: string, bytes?: number): void {
    if (proc !== this.#proc) return;
    this.#garbage++;
    const data: Record<string, unknown> = { module: this.#id, reason };
    if (line !== undefined) data.sample = line.length > SAMPLE_CHARS ? line.slice(0, SAMPLE_CHARS) : line;
    if (bytes !== undefined) data.bytes = bytes;
    this.#log.warn(data, 'garbage line from module');
    this.#notice({ type: 'garbage', message: `module "${this.#id}": ${reason}`, data });
  }

  // ---- small helpers -------------------------------------------------------------------------

  #call(tool: string, args: unknown, ctx: ToolCallContext): Promise<unknown> {
    const proc = this.#proc as Proc;
    const id = ctx.call_id;
    if (this.#pending.has(id)) {
      return Promise.reject(new FingerError('E_INTERNAL', `call id ${id} is already in flight on "${this.#id}"`));
    }
    let line: string;
    try {
      line =
        JSON.stringify({
          type: 'call',
          id,
          tool,
          args: args === undefined ? null : args,
          meta: {
            request_id: ctx.request_id,
            session_id: ctx.session_id,
            lease_id: ctx.lease_id,
            deadline: ctx.deadline,
          },
        }) + '\n';
    } catch (e) {
      return Promise.reject(
        new FingerError(
          'E_INVALID_ARGS',
          `arguments are not serialisable: ${e instanceof Error ? e.message : String(e)}`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, ctx, grace: null });
      this.#write(proc, line);
    });
  }

  #write(proc: Proc, line: string): void {
    const stdin = proc.child.stdin;
    if (proc.gone || stdin === null || !stdin.writable) return; // the exit path fails the call
    stdin.write(line);
  }

  #ping(proc: Proc, timeout_ms: number): Promise<RuntimeHealth> {
    const id = `ping-${++this.#pingSeq}`;
    return new Promise((resolve) => {
      const timer = this.#clock.setTimeout(() => {
        this.#pings.delete(id);
        resolve({ ok: false, detail: `no pong within ${timeout_ms} ms` });
      }, timeout_ms);
      this.#pings.set(id, (h) => {
        this.#clock.clearTimeout(timer);
        this.#pings.delete(id);
        resolve(h);
      });
      this.#write(proc, JSON.stringify({ type: 'ping', id }) + '\n');
    });
  }

  #isLatePong(id: unknown): boolean {
    if (typeof id !== 'string' || !id.startsWith('ping-')) return false;
    const n = Number(id.slice(5));
    return Number.isInteger(n) && n > 0 && n <= this.#pingSeq;
  }

  #resolvePings(h: RuntimeHealth): void {
    for (const r of [...this.#pings.values()]) r(h);
  }

  #waitReady(ctx: ToolCallContext): Promise<void> {
    const remaining = ctx.deadline - this.#clock.now();
    if (!(remaining > 0)) return Promise.reject(this.#restartTimeout());
    return new Promise((resolve, reject) => {
      const w: Waiter = { resolve, reject, timer: null };
      w.timer = this.#clock.setTimeout(() => {
        this.#waiters.delete(w);
        reject(this.#restartTimeout());
      }, remaining);
      this.#waiters.add(w);
    });
  }

  #wakeWaiters(): void {
    for (const w of this.#waiters) {
      this.#clock.clearTimeout(w.timer);
      w.resolve();
    }
    this.#waiters.clear();
  }

  #failWaiters(e: unknown): void {
    for (const w of this.#waiters) {
      this.#clock.clearTimeout(w.timer);
      w.reject(e);
    }
    this.#waiters.clear();
  }

  #restartTimeout(): FingerError {
    return new FingerError('E_TIMEOUT', `module "${this.#id}" was not ready before the call's deadline`);
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
