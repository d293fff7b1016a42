import { type ChildProcess, spawn } from 'node:child_process';

import type { Clock } from '../clock.js';
import { LineReader } from './jsonl-reader.js';
import { killProcessGroup } from './process-tree.js';
import { killSandbox, type ProcRef, sandboxInit, signalSandboxMembers, waitGone } from './sandbox-tree.js';

/** What a {@link ModuleProcess} reports to its owner. */
export interface ModuleProcessHooks {
  /** One stdout line (without the newline). */
  onLine(line: string): void;
  /** A stdout line longer than the limit was discarded. */
  onOversize(bytes: number): void;
  /** One stderr line (the module's log); over-long stderr lines arrive as `null` with their size. */
  onStderr(line: string | null, bytes: number): void;
  /** The process is gone (exited and its pipes closed, or it never started). Called once. */
  onGone(code: number | null, signal: NodeJS.Signals | null): void;
  /** A pipe or process error after start (EPIPE while dying, a failed kill): informational. */
  onError(err: Error): void;
}

/** Spawn parameters of a {@link ModuleProcess}. */
export interface ModuleProcessOptions {
  command: readonly string[];
  cwd: string;
  env: Record<string, string>;
  maxLineBytes: number;
  stderrMaxLineBytes: number;
  clock: Clock;
  hooks: ModuleProcessHooks;
  /**
   * `command` is a bubblewrap sandbox (see sandbox.ts): killing goes through its PID namespace, so
   * every descendant dies with it, also those that left the process group.
   */
  sandboxed?: boolean;
}

/** How long a kill waits for a sandbox's PID namespace to be empty. */
const SANDBOX_GONE_MS = 5000;

/** If stdio does not close this long after 'exit' (a grandchild holds a pipe), the child counts as gone. */
const EXIT_CLOSE_GRACE_MS = 1000;

/**
 * One child process of a stdio module: spawned as the leader of its own process group
 * (`detached`), its stdout split into bounded lines, its death reported once. Writing to it after
 * it died is a silent no-op (EPIPE never throws); killing targets the whole group.
 */
export class ModuleProcess {
  readonly child: ChildProcess;
  /** 0 until spawned. */
  pid: number;
  readonly startedAt: number;
  spawned = false;
  gone = false;
  /** Resolves once spawned; rejects with the spawn error (ENOENT, EACCES, …). */
  readonly ready: Promise<void>;
  /** Resolves when the process is gone. */
  readonly exited: Promise<void>;
  readonly #clock: Clock;
  readonly #hooks: ModuleProcessHooks;
  #exitTimer: unknown = null;
  #resolveExited!: () => void;
  readonly #sandboxed: boolean;
  /** The sandbox's init, once looked up (a kill needs it after bubblewrap itself is gone). */
  #init: ProcRef | undefined;
  /** The child was reaped: its pid may be reused, so no sandbox lookup by it any more. */
  #exited = false;

  /** Spawns at once; throws what `child_process.spawn` throws synchronously (bad arguments). */
  constructor(o: ModuleProcessOptions) {
    this.#clock = o.clock;
    this.#hooks = o.hooks;
    this.#sandboxed = o.sandboxed === true;
    this.startedAt = o.clock.now();
    this.exited = new Promise((r) => (this.#resolveExited = r));
    const [cmd, ...args] = o.command;
    const child = spawn(cmd as string, args, { cwd: o.cwd, env: o.env, detached: true, stdio: 'pipe' });
    this.child = child;
    this.pid = child.pid ?? 0;
    const out = new LineReader(
      o.maxLineBytes,
      (l) => o.hooks.onLine(l),
      (n) => o.hooks.onOversize(n),
    );
    const err = new LineReader(
      o.stderrMaxLineBytes,
      (l) => o.hooks.onStderr(l, Buffer.byteLength(l)),
      (n) => o.hooks.onStderr(null, n),
    );
    child.stdout?.on('data', (c: Buffer) => out.push(c));
    child.stdout?.on('end', () => out.end());
    child.stderr?.on('data', (c: Buffer) => err.push(c));
    child.stderr?.on('end', () => err.end());
    const onPipeError = (e: Error) => o.hooks.onError(e);
    child.stdin?.on('error', onPipeError);
    child.stdout?.on('error', onPipeError);
    child.stderr?.on('error', onPipeError);
    this.ready = new Promise<void>((resolve, reject) => {
      child.once('spawn', () => {
        this.spawned = true;
        this.pid = child.pid ?? 0;
        resolve();
      });
      child.on('error', (e) => {
        if (this.spawned) return o.hooks.onError(e);
        reject(e);
        this.#markGone(null, null);
      });
    });
    // The owner learns of a failed spawn through onGone; nobody need await `ready`.
    this.ready.catch(() => {});
    child.once('exit', (code, signal) => {
      this.#exited = true;
      this.#exitTimer = this.#clock.setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        this.#markGone(code, signal);
      }, EXIT_CLOSE_GRACE_MS);
    });
    child.once('close', (code, signal) => this.#markGone(code, signal));
  }

  /** Writes one line to stdin; a no-op once the process is gone or its stdin closed. */
  write(line: string): void {
    const stdin = this.child.stdin;
    if (this.gone || stdin === null || !stdin.writable) return;
    stdin.write(line);
  }

  /** Closes stdin (the module's cue to exit). */
  endInput(): void {
    try {
      this.child.stdin?.end();
    } catch {
      // already closed
    }
  }

  /**
   * SIGTERM the group now (in a sandbox: every process inside but its init), SIGKILL it after
   * `graceMs` unless the process is gone by then (in a sandbox: its init, which takes the whole
   * PID namespace along).
   */
  terminate(graceMs: number): void {
    if (this.gone || !this.spawned) return;
    if (this.#sandboxed && !this.#exited) {
      const init = this.#sandboxInit();
      if (init === undefined || signalSandboxMembers(init, 'SIGTERM') === 0) killProcessGroup(this.pid, 'SIGTERM');
    } else killProcessGroup(this.pid, 'SIGTERM');
    this.#clock.setTimeout(() => {
      if (!this.gone) this.#killNow();
    }, graceMs);
  }

  /**
   * Kill switch: SIGKILLs everything the process started (its group; in a sandbox its whole PID
   * namespace) and resolves once the process is gone and, in a sandbox, nothing inside runs any
   * more (bounded: 5 s).
   */
  async kill(): Promise<void> {
    if (!this.spawned || this.gone || this.#exited) return this.exited;
    const init = this.#killNow();
    await this.exited;
    if (init !== undefined) await waitGone([init], SANDBOX_GONE_MS);
  }

  #sandboxInit(): ProcRef | undefined {
    if (this.#init === undefined && this.#sandboxed && !this.#exited) this.#init = sandboxInit(this.pid);
    return this.#init;
  }

  #killNow(): ProcRef | undefined {
    const init = this.#sandboxInit();
    if (!this.#sandboxed || init === undefined) {
      // without a sandbox, or bubblewrap already exited (its PID namespace went with it)
      killProcessGroup(this.pid, 'SIGKILL');
      return undefined;
    }
    return killSandbox(this.pid, init);
  }

  #markGone(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.gone) return;
    this.gone = true;
    if (this.#exitTimer !== null) this.#clock.clearTimeout(this.#exitTimer);
    // Whatever the module left behind in its group goes with it (a sandbox's PID namespace is gone
    // already: bubblewrap exits only after its init, whose exit kills every process inside).
    if (this.spawned) killProcessGroup(this.pid, 'SIGKILL');
    this.#resolveExited();
    this.#hooks.onGone(code, signal);
  }
}
