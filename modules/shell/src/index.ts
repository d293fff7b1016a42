/**
 * shell: the module that executes. `exec` runs a program or a shell command line inside the
 * workspace; `run_code` runs a python or node snippet in a fresh run directory under resource
 * limits. Both kill the whole process group on timeout, cancellation and module close, cap their
 * output with an explicit marker and the true byte count, and scrub secrets from the child's
 * environment. Whether a caller may use them is the firewall's decision, not this module's.
 */
import type { Sandbox } from '@finger/hub';
import type { InProcessModuleFactoryOptions, RuntimeHealth, ToolCallContext } from '@finger/module-sdk';

import { compileEnvDeny } from './env-scrub.js';
import { createExec, type ExecResult, type ShellDeps } from './exec.js';
import { createRunCode, type RunCodeResult } from './run-code.js';
import { type RunningProcess, type RunSpec, startProcess } from './run-process.js';
import { parseSettings } from './settings.js';

/** The in-process module object (structurally `InProcessModule` of `@finger/module-sdk`). */
export interface ShellModule {
  tools: {
    exec: (args: unknown, ctx?: ToolCallContext) => Promise<ExecResult>;
    run_code: (args: unknown, ctx?: ToolCallContext) => Promise<RunCodeResult>;
  };
  health: () => RuntimeHealth;
  /** Kills every running process group and waits for them (bounded by the kill grace). */
  close: () => Promise<void>;
  /**
   * Kill switch (halt): SIGKILLs every running process tree at once (in a sandbox its whole PID
   * namespace) and resolves once none is left; the module stays usable.
   */
  kill: () => Promise<void>;
}

/** What the factory reads: `settings` (see README for every key); the rest is ignored. */
export type ShellModuleOptions = Pick<InProcessModuleFactoryOptions, 'settings'> &
  Partial<InProcessModuleFactoryOptions>;

/**
 * Builds the module from its operator settings (defaults applied, bad values rejected with the
 * key named). The children's environment is the daemon's `process.env` at call time minus the
 * deny list — the one place below the composition root that reads it, because the commands the
 * operator runs by hand see the same environment.
 */
export function createShellModule(opts: ShellModuleOptions): ShellModule {
  const settings = parseSettings(opts.settings);
  const running = new Set<RunningProcess>();
  let closed = false;
  const deps: ShellDeps = {
    settings,
    deny: compileEnvDeny(settings.env_deny),
    baseEnv: () => process.env,
    ...(isSandbox(opts.settings.sandbox) ? { sandbox: opts.settings.sandbox } : {}),
    ...(typeof opts.settings.undo_snapshot === 'function'
      ? { undoSnapshot: opts.settings.undo_snapshot as NonNullable<ShellDeps['undoSnapshot']> }
      : {}),
    ...(typeof opts.settings.workspace_for === 'function'
      ? { workspaceFor: opts.settings.workspace_for as NonNullable<ShellDeps['workspaceFor']> }
      : {}),
    run: async (spec: RunSpec) => {
      const rp = startProcess(spec);
      running.add(rp);
      if (closed) rp.terminate();
      try {
        return await rp.done;
      } finally {
        running.delete(rp);
      }
    },
  };
  return {
    tools: { exec: createExec(deps), run_code: createRunCode(deps) },
    health: () => ({ ok: true }),
    close: async () => {
      closed = true;
      const all = [...running];
      for (const rp of all) rp.terminate();
      await Promise.allSettled(all.map((rp) => rp.done));
    },
    kill: async () => {
      const all = [...running];
      for (const rp of all) rp.kill();
      await Promise.allSettled(all.map((rp) => rp.done));
    },
  };
}

/** The daemon hands its `Sandbox` in the settings (an object, not config: in-process modules only). */
function isSandbox(v: unknown): v is NonNullable<ShellDeps['sandbox']> {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as Sandbox).wrap === 'function' &&
    typeof (v as Sandbox).appliesTo === 'function'
  );
}

export default createShellModule;

export type { ExecParams, RunCodeParams } from './args.js';
export type { EnvDenyList } from './env-scrub.js';
export { buildChildEnv, compileEnvDeny } from './env-scrub.js';
export type { ExecResult } from './exec.js';
export type { CapturedOutput } from './output-cap.js';
export { OutputCap, truncationMarker } from './output-cap.js';
export type { RunCodeResult, WrittenFile } from './run-code.js';
export type { RunCodeSettings, ShellSettings } from './settings.js';
export { DEFAULT_ENV_DENY, parseSettings } from './settings.js';
