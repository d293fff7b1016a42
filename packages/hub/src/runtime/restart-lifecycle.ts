import { FingerError } from '@finger/protocol';

import type { Clock } from '../clock.js';
import { ReadyGate } from './ready-gate.js';

/** Where a child-backed runtime is: not started, starting, serving, waiting to restart, closed. */
export type RuntimeState = 'idle' | 'starting' | 'running' | 'restarting' | 'closed';

/** What a {@link RestartLifecycle} needs from its runtime. */
export interface RestartLifecycleOptions {
  /** Module id, for the "not started" error. */
  id: string;
  clock: Clock;
  /** Restart delays: the first is `min`, each failure doubles it up to `max`. */
  backoff: readonly [number, number];
  /** Spawns / connects (`first` on start(), false on a restart); rejects when that failed. */
  connect(first: boolean): Promise<void>;
  /** After a connect that resolved during a restart: false when the child died meanwhile (restart again). */
  alive(): boolean;
  /** A restart attempt failed (the next one is scheduled). */
  onRestartFailed(err: unknown): void;
  /** A restart succeeded: the state is `running` again; waiting calls are let through right after. */
  onRestarted(): void;
  /** E_PROVIDER_CLOSED for this runtime. */
  closedError(): FingerError;
  /** E_TIMEOUT for a call whose deadline passed while the runtime was not ready. */
  notReady(): FingerError;
}

/**
 * The start / crash / restart-with-backoff / close state machine shared by the stdio and MCP
 * runtimes, and the gate where calls wait while a (re)start is under way (each until its own
 * deadline). The runtime keeps its child (process or connection); this keeps the state.
 */
export class RestartLifecycle {
  readonly #o: RestartLifecycleOptions;
  readonly #gate: ReadyGate;
  #state: RuntimeState = 'idle';
  #backoff: number;
  #restartTimer: unknown = null;
  #starting: Promise<void> | null = null;

  constructor(options: RestartLifecycleOptions) {
    this.#o = options;
    this.#gate = new ReadyGate(options.clock);
    this.#backoff = options.backoff[0];
  }

  get state(): RuntimeState {
    return this.#state;
  }

  /**
   * Connects once (concurrent calls share the attempt). Rejects with connect()'s error (the state
   * goes back to `idle`, so start() may be retried), E_PROVIDER_CLOSED when closed.
   */
  start(): Promise<void> {
    if (this.#state === 'closed') return Promise.reject(this.#o.closedError());
    if (this.#starting) return this.#starting;
    this.#state = 'starting';
    this.#starting = this.#o.connect(true).then(
      () => {
        if (this.#state === 'closed') throw this.#o.closedError();
        this.#state = 'running';
        this.#gate.open();
      },
      (e: unknown) => {
        if (this.#state === 'starting') {
          this.#state = 'idle';
          this.#starting = null;
          this.#gate.fail(e);
        }
        throw e;
      },
    );
    return this.#starting;
  }

  /**
   * Runs `call` when running; while (re)starting waits until `deadline` (E_TIMEOUT via notReady)
   * and tries again; rejects E_PROVIDER_CLOSED when closed, E_MODULE_UNHEALTHY before start().
   */
  whenRunning<T>(deadline: number, call: () => Promise<T>): Promise<T> {
    switch (this.#state) {
      case 'running':
        return call();
      case 'closed':
        return Promise.reject(this.#o.closedError());
      case 'idle':
        return Promise.reject(new FingerError('E_MODULE_UNHEALTHY', `module "${this.#o.id}" is not started`));
      default:
        return this.#gate.wait(deadline, this.#o.notReady).then(() => this.whenRunning(deadline, call));
    }
  }

  /** The running child died: restart it after the current backoff. */
  crashed(): void {
    this.#state = 'restarting';
    this.#scheduleRestart();
  }

  /** The next restart waits the minimum delay again. */
  resetBackoff(): void {
    this.#backoff = this.#o.backoff[0];
  }

  /** Stops restarting and fails waiting calls with `err`. The runtime then stops its child. */
  close(err: FingerError): void {
    this.#state = 'closed';
    if (this.#restartTimer !== null) this.#o.clock.clearTimeout(this.#restartTimer);
    this.#restartTimer = null;
    this.#gate.fail(err);
  }

  #scheduleRestart(): void {
    const delay = this.#backoff;
    this.#backoff = Math.min(this.#backoff * 2, this.#o.backoff[1]);
    this.#restartTimer = this.#o.clock.setTimeout(() => {
      this.#restartTimer = null;
      void this.#restart();
    }, delay);
  }

  async #restart(): Promise<void> {
    if (this.#state !== 'restarting') return;
    try {
      await this.#o.connect(false);
    } catch (e) {
      if (this.#state !== 'restarting') return;
      this.#o.onRestartFailed(e);
      this.#scheduleRestart();
      return;
    }
    if (this.#state !== 'restarting') return; // closed meanwhile: close() stops the child
    if (!this.#o.alive()) return this.#scheduleRestart(); // died already
    this.#state = 'running';
    this.#o.onRestarted();
    this.#gate.open();
  }
}
