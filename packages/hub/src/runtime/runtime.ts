import type { RuntimeHealth, ToolCallContext } from '@finger/module-sdk';
import type { ModuleManifest, ToolSpec } from '@finger/protocol';

import type { Clock } from '../clock.js';
import type { Sandbox } from './sandbox.js';

// The module-facing types are @finger/module-sdk's (issue 26 item 3); re-exported for the hub's files.
export type { InProcessModule, RuntimeHealth, ToolCallContext } from '@finger/module-sdk';

/** Emitted by a runtime when something worth an event happens (crash, restart, garbage line). */
export interface RuntimeNotice {
  type: 'crashed' | 'restarted' | 'garbage' | 'log' | 'event';
  message: string;
  data?: Record<string, unknown>;
}

/**
 * Executes one module's tools. Implementations: in-process (a JS entry), stdio (JSON lines, any
 * language). Tool failures reject with a FingerError (the module's own errors as E_MODULE_ERROR
 * unless they carry a registered code); a dead process rejects in-flight calls with E_MODULE_CRASHED.
 */
export interface ModuleRuntime {
  readonly type: string;
  /** Starts the runtime (spawn, import). Rejects with a FingerError when it cannot. */
  start(): Promise<void>;
  /** Runs one tool call. */
  invoke(tool: string, args: unknown, ctx: ToolCallContext): Promise<unknown>;
  /**
   * invoke() without a promise when the tool answers at once (the module host's in-process
   * path): returns the tool's result, or a Promise of it while the tool still runs (a
   * thenable result is adopted, as invoke() does, so a returned Promise is always that); throws
   * what invoke() would reject with. Runtimes whose calls always wait omit it.
   */
  invokeNow?(tool: string, args: unknown, ctx: ToolCallContext): unknown;
  /** Cancels an in-flight call by its `call_id`. */
  cancel(call_id: string, reason: string): void;
  /** Health check; must answer within `timeout_ms` or counts as unhealthy. */
  health(timeout_ms: number): Promise<RuntimeHealth>;
  /** Stops the runtime; in-flight calls reject with E_PROVIDER_CLOSED. Idempotent. */
  close(): Promise<void>;
  /**
   * Kill switch: kills the runtime's processes at once (the whole process group); in-flight
   * calls fail, and the runtime restarts as after a crash. Resolves when the process is gone.
   * Runtimes without processes omit it.
   */
  kill?(): Promise<void>;
  /**
   * Tools discovered at start() (MCP servers list theirs); when present, the registry uses them
   * instead of the manifest's `tools` once start() resolved.
   */
  describeTools?(): ToolSpec[];
  /** Tools the runtime refuses to run for now (a changed MCP definition), by tool name. */
  quarantined?(): Record<string, { reason: string; [key: string]: unknown }>;
}

/** Limits of process-based runtimes (stdio); every field has a default. */
export interface RuntimeLimits {
  /** Longest stdout line accepted from a module; longer lines are discarded as garbage. Default 1 MiB. */
  max_line_bytes?: number;
  /** How long a cancelled call may stay unanswered before the process group is killed. Default 2000. */
  cancel_grace_ms?: number;
  /** Restart backoff `[min, max]` in ms, doubling per consecutive crash. Default `[100, 10000]`. */
  restart_backoff_ms?: [number, number];
  /** When set, start() and restarts also wait for a pong within this many ms. */
  start_timeout_ms?: number;
}

/** Options every runtime factory receives. */
export interface RuntimeOptions {
  manifest: ModuleManifest;
  /** Directory holding the module.json (relative paths resolve against it). */
  baseDir: string;
  logger: import('../logger.js').Logger;
  onNotice?: (notice: RuntimeNotice) => void;
  /** Time source for timers (grace, backoff, health); default the system clock. */
  clock?: Clock;
  /**
   * Environment the minimal child environment is picked from (PATH, HOME, LANG, …); never passed
   * whole. Default `process.env`; the composition root should pass it explicitly.
   */
  baseEnv?: Record<string, string | undefined>;
  /** Limits of process-based runtimes. */
  limits?: RuntimeLimits;
  /**
   * Operator settings for this module (from the daemon config: workspace roots, limits, API
   * keys…). In-process modules receive them in their factory; stdio modules get them as the
   * `FINGER_MODULE_SETTINGS` JSON environment variable.
   */
  settings?: Record<string, unknown>;
  /**
   * The daemon's sandbox policy: stdio and MCP (stdio transport) children run inside it (see
   * sandbox.ts); absent means no sandbox (library use, tests).
   */
  sandbox?: Sandbox;
}
