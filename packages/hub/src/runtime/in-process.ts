import path from 'node:path';
import { pathToFileURL } from 'node:url';

import type { InProcessModuleFactoryOptions } from '@finger/module-sdk';
import { FingerError, isFingerError } from '@finger/protocol';

import { type Clock, systemClock } from '../clock.js';
import type { InProcessModule, ModuleRuntime, RuntimeHealth, RuntimeOptions, ToolCallContext } from './runtime.js';

type ToolFn = InProcessModule['tools'][string];

/** What an in-process entry's factory receives: @finger/module-sdk's type, re-exported for the hub's callers. */
export type { InProcessModuleFactoryOptions };

const CLOSED = (id: string) => new FingerError('E_PROVIDER_CLOSED', `module "${id}" runtime is closed`);

/** Rejection handler for async tools: FingerErrors pass, anything else becomes E_MODULE_ERROR. */
function toModuleError(e: unknown): never {
  if (isFingerError(e)) throw e;
  throw new FingerError('E_MODULE_ERROR', e instanceof Error ? e.message : String(e));
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === 'object' && v !== null && typeof (v as PromiseLike<unknown>).then === 'function';
}

function isModule(v: unknown): v is InProcessModule {
  return typeof v === 'object' && v !== null && typeof (v as InProcessModule).tools === 'object';
}

/**
 * Runs a JavaScript module inside the hub's process. The entry (`manifest.runtime.entry`, resolved
 * against `baseDir`) exports `default` or `createModule`: an {@link InProcessModule} or a (sync or
 * async) factory `({manifest, logger}) => InProcessModule`.
 *
 * invoke() is the hub's hot path: one lookup, one call, no per-call closures or timers
 * (invokeNow(): not even a promise for a tool that answers at once). Tool errors: a thrown
 * FingerError passes through, anything else becomes E_MODULE_ERROR (message only, no stack). Cancellation is cooperative: the hub aborts `ctx.signal`, which the tool reads;
 * in-flight calls are not interrupted by close() (they are promises of this process; the hub
 * stops awaiting them).
 */
export class InProcessRuntime implements ModuleRuntime {
  readonly type = 'inprocess';
  readonly #opts: RuntimeOptions;
  readonly #clock: Clock;
  #module: InProcessModule | null = null;
  /** Own, function-valued tools only (no prototype lookups such as `constructor`). */
  #tools: Map<string, ToolFn> | null = null;
  #starting: Promise<void> | null = null;
  #closed = false;
  #closing: Promise<void> | null = null;
  /**
   * Kill switch, present when the module has one (`InProcessModule.kill`: the shell module kills
   * every process tree it started and resolves once they are gone); the module stays loaded.
   */
  kill?: () => Promise<void>;

  constructor(opts: RuntimeOptions) {
    this.#opts = opts;
    this.#clock = opts.clock ?? systemClock;
  }

  /**
   * Imports the entry and builds the module. Rejects with E_MODULE_UNHEALTHY when the entry cannot
   * be imported or exports no module, E_INVALID_MANIFEST when the runtime is not `inprocess`,
   * E_PROVIDER_CLOSED after close(). Calling it twice returns the same start.
   */
  start(): Promise<void> {
    if (this.#closed) return Promise.reject(CLOSED(this.#opts.manifest.id));
    this.#starting ??= this.#load();
    return this.#starting;
  }

  async #load(): Promise<void> {
    const { manifest, baseDir, logger } = this.#opts;
    const rt = manifest.runtime;
    if (rt.type !== 'inprocess') {
      throw new FingerError('E_INVALID_MANIFEST', `module "${manifest.id}" is not an inprocess module`, {
        issues: [{ path: '$.runtime.type', message: `expected "inprocess", got "${rt.type}"` }],
      });
    }
    const file = path.resolve(baseDir, rt.entry);
    let ns: Record<string, unknown>;
    try {
      ns = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (e) {
      throw new FingerError(
        'E_MODULE_UNHEALTHY',
        `module "${manifest.id}": cannot import ${file}: ${e instanceof Error ? e.message : String(e)}`,
        { entry: file },
      );
    }
    let exp = ns.default ?? ns.createModule;
    if (typeof exp === 'function') {
      try {
        exp = await (exp as (o: InProcessModuleFactoryOptions) => unknown)({
          manifest,
          logger,
          settings: this.#opts.settings ?? {},
          baseDir,
        });
      } catch (e) {
        if (isFingerError(e)) throw e;
        throw new FingerError(
          'E_MODULE_UNHEALTHY',
          `module "${manifest.id}": factory failed: ${e instanceof Error ? e.message : String(e)}`,
          { entry: file },
        );
      }
    }
    if (!isModule(exp)) {
      throw new FingerError(
        'E_MODULE_UNHEALTHY',
        `module "${manifest.id}": ${file} exports neither a module ({tools}) nor a factory as default or createModule`,
        { entry: file },
      );
    }
    const tools = new Map<string, ToolFn>();
    for (const name of Object.keys(exp.tools)) {
      const fn = exp.tools[name];
      if (typeof fn === 'function') tools.set(name, fn);
    }
    if (this.#closed) {
      // close() raced the import: give the module its close() and stay closed.
      await exp.close?.();
      throw CLOSED(manifest.id);
    }
    this.#module = exp;
    this.#tools = tools;
    const mod = exp;
    if (typeof mod.kill === 'function') this.kill = async () => mod.kill?.();
  }

  /**
   * Runs `tools[tool](args, ctx)`. Rejects E_NO_TARGET for an unknown tool, E_PROVIDER_CLOSED
   * after close(), E_MODULE_UNHEALTHY before start(), E_MODULE_ERROR for a non-finger throw.
   */
  invoke(tool: string, args: unknown, ctx: ToolCallContext): Promise<unknown> {
    let out: unknown;
    try {
      out = this.invokeNow(tool, args, ctx);
    } catch (e) {
      return Promise.reject(e);
    }
    return out instanceof Promise ? out : Promise.resolve(out);
  }

  /**
   * invoke() without its promise for a tool that answers at once: its result as it is; an async
   * tool's outcome as invoke()'s promise. Throws what invoke() rejects with.
   */
  invokeNow(tool: string, args: unknown, ctx: ToolCallContext): unknown {
    const tools = this.#tools;
    if (tools === null) {
      throw this.#closed
        ? CLOSED(this.#opts.manifest.id)
        : new FingerError('E_MODULE_UNHEALTHY', `module "${this.#opts.manifest.id}" is not started`);
    }
    const fn = tools.get(tool);
    if (fn === undefined) {
      throw new FingerError('E_NO_TARGET', `module "${this.#opts.manifest.id}" has no tool "${tool}"`);
    }
    let out: unknown;
    try {
      out = fn(args, ctx);
    } catch (e) {
      throw isFingerError(e) ? e : new FingerError('E_MODULE_ERROR', e instanceof Error ? e.message : String(e));
    }
    return isThenable(out) ? Promise.resolve(out).then(undefined, toModuleError) : out;
  }

  /**
   * No-op: in-process cancellation is the hub aborting `ctx.signal`, which the tool observes.
   * Nothing here can stop a running JavaScript function.
   */
  cancel(_call_id: string, _reason: string): void {}

  /**
   * The module's own health() bounded by `timeout_ms` (late, throwing or malformed → unhealthy);
   * `{ok: true}` when the module has none; `{ok: false}` before start or after close.
   */
  async health(timeout_ms: number): Promise<RuntimeHealth> {
    const mod = this.#module;
    if (mod === null || this.#closed) return { ok: false, detail: this.#closed ? 'closed' : 'not started' };
    if (typeof mod.health !== 'function') return { ok: true };
    let timer: unknown;
    const timeout = new Promise<RuntimeHealth>((resolve) => {
      timer = this.#clock.setTimeout(
        () => resolve({ ok: false, detail: `health check did not answer within ${timeout_ms} ms` }),
        timeout_ms,
      );
    });
    try {
      const h = await Promise.race([Promise.resolve(mod.health()), timeout]);
      if (typeof h !== 'object' || h === null || typeof h.ok !== 'boolean') {
        return { ok: false, detail: 'health check returned no {ok}' };
      }
      return h.detail === undefined ? { ok: h.ok } : { ok: h.ok, detail: String(h.detail) };
    } catch (e) {
      return { ok: false, detail: e instanceof Error ? e.message : String(e) };
    } finally {
      this.#clock.clearTimeout(timer);
    }
  }

  /**
   * Calls the module's close() once (its failure is logged, not thrown); afterwards invoke()
   * rejects E_PROVIDER_CLOSED. Idempotent: every call returns the same promise.
   */
  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#closed = true;
    this.#tools = null;
    const mod = this.#module;
    this.#module = null;
    if (mod?.close === undefined) return;
    try {
      await mod.close();
    } catch (e) {
      this.#opts.logger.warn(
        { module: this.#opts.manifest.id, err: e instanceof Error ? e.message : String(e) },
        'module close() failed',
      );
    }
  }
}
