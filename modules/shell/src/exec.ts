import path from 'node:path';

import { findProgram, type Sandbox } from '@finger/hub';
import type { ToolCallContext } from '@finger/module-sdk';
import { FingerError, type Principal } from '@finger/protocol';

import { parseExecParams } from './args.js';
import { buildChildEnv, type EnvDenyList } from './env-scrub.js';
import { withGitHardening } from './git-hardening.js';
import type { RunOutcome, RunSpec } from './run-process.js';
import { sandboxHint, type SandboxReport } from './sandbox-hint.js';
import type { ShellSettings } from './settings.js';
import { realRoots, resolveCwd } from './workspace.js';

/** What both tools need from the module: settings, the deny list, the daemon env, run tracking. */
export interface ShellDeps {
  settings: ShellSettings;
  deny: EnvDenyList;
  /** The environment children are scrubbed from (the daemon's, read at call time). */
  baseEnv: () => Record<string, string | undefined>;
  /** Runs `spec`, registered so module close() can kill it. */
  run: (spec: RunSpec) => Promise<RunOutcome>;
  /** The calling task's own workspace (setting `workspace_for`, from the daemon; never the payload). */
  workspaceFor?: (source: Principal) => string | undefined;
  /**
   * The daemon's sandbox (setting `sandbox`, from the daemon): every child runs inside it when
   * active; `profileOf` says which calls the firewall let through to run in the workspace-write profile.
   */
  sandbox?: Pick<Sandbox, 'appliesTo' | 'wrap'> & Partial<Pick<Sandbox, 'profileOf' | 'undoSnapshotOf' | 'networkOf'>>;
  /**
   * The undo store's hard-link snapshot (setting `undo_snapshot`, from the daemon): takes it before
   * a deleting command the firewall let through on the strength of it, and resolves with the
   * function to call once the command has ended (it keeps only what was deleted).
   */
  undoSnapshot?: UndoSnapshotPort;
}

/** See {@link ShellDeps.undoSnapshot}. */
export type UndoSnapshotPort = (
  paths: readonly string[],
  meta: { source: Principal; request_id: string },
) => Promise<() => Promise<void>>;

/**
 * Puts `spec` into the daemon's sandbox when there is one for the shell module: the roots and the
 * cwd stay writable (also below a mask such as FINGER_HOME), everything else as the sandbox says.
 * Rejects E_NOT_FOUND for a program that does not exist (bubblewrap would only exit 1) and
 * E_NO_SANDBOX in mode `required` where no sandbox can run.
 */
export function sandboxSpec(
  deps: ShellDeps,
  spec: RunSpec,
  roots: readonly string[],
  profile?: 'workspace-write',
  network?: 'registries',
): void {
  const sb = deps.sandbox;
  if (profile !== undefined && (sb === undefined || !sb.appliesTo('shell')))
    throw new FingerError(
      'E_NO_SANDBOX',
      'the call may run only in the workspace-write sandbox, which the shell module has not',
      {
        profile,
      },
    );
  if (sb === undefined || !sb.appliesTo('shell')) return;
  const keep = [...roots, spec.cwd].map((p) => ({ path: p, writable: true }));
  const wrapped =
    profile !== undefined
      ? sb.wrap([spec.file, ...spec.args], [], {
          profile,
          writable: roots,
          cwd: spec.cwd,
          ...(network !== undefined ? { network } : {}),
        })
      : sb.wrap([spec.file, ...spec.args], keep);
  if (wrapped === undefined) return;
  const program =
    spec.file.includes('/') && !path.isAbsolute(spec.file) ? path.resolve(spec.cwd, spec.file) : spec.file;
  if (findProgram(program, spec.env.PATH) === undefined) {
    throw new FingerError('E_NOT_FOUND', `cannot start "${spec.file}": no such program`, {
      program: spec.file,
      errno: 'ENOENT',
    });
  }
  const [file, ...args] = wrapped;
  spec.file = file!;
  spec.args = args;
  spec.sandboxed = true;
}

/**
 * The roots of one call: the configured ones, preceded by the calling task's own workspace when
 * the daemon gave it one (so it is the default cwd and holds that call's run directory).
 */
export function callRoots(deps: ShellDeps, ctx?: Pick<ToolCallContext, 'source'>): readonly string[] {
  const ws = deps.workspaceFor !== undefined && ctx?.source !== undefined ? deps.workspaceFor(ctx.source) : undefined;
  return ws === undefined ? deps.settings.workspace_roots : [ws, ...deps.settings.workspace_roots];
}

/** Result of `shell.exec`. A timeout is not a result: it fails with E_TIMEOUT (see {@link timeoutError}). */
export interface ExecResult {
  exit_code: number | null;
  signal: string | null;
  /** Always false in a result; true in the details of E_TIMEOUT. */
  timed_out: boolean;
  /** The call was cancelled (ctx.signal aborted) and the group was killed. */
  cancelled: boolean;
  stdout: string;
  stderr: string;
  stdout_bytes: number;
  stderr_bytes: number;
  truncated: { stdout: boolean; stderr: boolean };
  duration_ms: number;
  /** Present when the call ran in a stricter sandbox profile (the firewall's choice), with a hint when it failed for want of something. */
  sandbox?: SandboxReport;
}

/** The common part of both tools' results, in a fixed key order. */
export function execResult(o: RunOutcome): ExecResult {
  return {
    exit_code: o.exit_code,
    signal: o.signal,
    timed_out: o.timed_out,
    cancelled: o.cancelled,
    stdout: o.stdout,
    stderr: o.stderr,
    stdout_bytes: o.stdout_bytes,
    stderr_bytes: o.stderr_bytes,
    truncated: o.truncated,
    duration_ms: o.duration_ms,
  };
}

/**
 * E_TIMEOUT for a run past its timeout. The process group has been killed by then; `details`
 * is the whole would-be result (`timed_out: true`, partial output, true byte counts) plus
 * `timeout_ms` and whatever `extra` the tool adds.
 */
export function timeoutError(what: string, timeout_ms: number, details: Record<string, unknown>): FingerError {
  return new FingerError(
    'E_TIMEOUT',
    `${what} timed out after ${timeout_ms} ms; its process group was killed ` +
      `(partial output in details: stdout ${String(details.stdout_bytes)} bytes, stderr ${String(details.stderr_bytes)} bytes)`,
    { ...details, timeout_ms },
  );
}

/** Margin left before the call's deadline so the timeout's E_TIMEOUT (with partial output) still reaches the caller. */
const DEADLINE_MARGIN_MS = 100;

/**
 * The wall-clock limit of a run: the requested (or default) timeout, shortened to end just before
 * the call's deadline when that comes first.
 */
export function effectiveTimeout(requested: number, ctx: ToolCallContext | undefined): number {
  if (ctx === undefined || !Number.isFinite(ctx.deadline)) return requested;
  return Math.max(1, Math.min(requested, ctx.deadline - Date.now() - DEADLINE_MARGIN_MS));
}

/** Adds the lease heartbeat (extend by 3 periods, every period) to `spec`; a failing extend is ignored. */
export function addLeaseHeartbeat(spec: RunSpec, ctx: ToolCallContext | undefined, period_ms: number): void {
  if (ctx === undefined) return;
  spec.heartbeat_ms = period_ms;
  spec.heartbeat = () => {
    try {
      ctx.extendLease(3 * period_ms);
    } catch {
      // The hub no longer tracks the call; its signal ends the run.
    }
  };
}

/**
 * `shell.exec`: runs `argv` directly or `command` through the configured shell, in a cwd inside
 * the workspace, with a scrubbed environment, capped output and a timeout that kills the whole
 * process group. Resolves with an {@link ExecResult} whatever the exit status (also when
 * cancelled); rejects E_TIMEOUT on timeout, E_FORBIDDEN for a cwd outside the roots,
 * E_INVALID_ARGS for bad arguments or a denied env name, E_NOT_FOUND for a missing program or cwd.
 */
export function createExec(deps: ShellDeps): (args: unknown, ctx?: ToolCallContext) => Promise<ExecResult> {
  const { settings } = deps;
  return async (args, ctx) => {
    const p = parseExecParams(args, settings.max_timeout_ms);
    const env = withGitHardening(buildChildEnv(deps.baseEnv(), deps.deny, p.env));
    const cwd = await resolveCwd(p.cwd, callRoots(deps, ctx));
    const timeout_ms = effectiveTimeout(p.timeout_ms ?? settings.default_timeout_ms, ctx);
    const [file, ...rest] = p.argv ?? [settings.shell, '-c', p.command!];
    const spec: RunSpec = {
      file: file!,
      args: rest,
      cwd,
      env,
      timeout_ms,
      max_output_bytes: settings.max_output_bytes,
      kill_grace_ms: settings.kill_grace_ms,
    };
    if (p.stdin !== undefined) spec.stdin = p.stdin;
    if (ctx !== undefined) spec.signal = ctx.signal;
    addLeaseHeartbeat(spec, ctx, settings.lease_heartbeat_ms);
    // the firewall's choice, handed over by the hub's execution id: never the payload's
    const profile = ctx !== undefined ? deps.sandbox?.profileOf?.(ctx.call_id) : undefined;
    // with the profile, whether the firewall let the package registries through its proxy
    const network = profile !== undefined && ctx !== undefined ? deps.sandbox?.networkOf?.(ctx.call_id) : undefined;
    const roots = callRoots(deps, ctx);
    sandboxSpec(deps, spec, profile !== undefined ? await realRoots(roots) : roots, profile, network);
    // a delete let through because it is undoable: its snapshot first, or it does not run
    const snapshot =
      profile !== undefined && ctx !== undefined ? deps.sandbox?.undoSnapshotOf?.(ctx.call_id) : undefined;
    let settle: (() => Promise<void>) | undefined;
    if (snapshot !== undefined) {
      if (deps.undoSnapshot === undefined)
        throw new FingerError(
          'E_NO_SANDBOX',
          'the delete was let through because a snapshot makes it undoable, and the shell module has no undo store: not run',
          { profile },
        );
      settle = await deps.undoSnapshot(snapshot, { source: ctx!.source, request_id: ctx!.request_id });
    }
    let outcome: RunOutcome;
    try {
      outcome = await deps.run(spec);
    } finally {
      await settle?.();
    }
    const result = execResult(outcome);
    if (profile !== undefined) {
      const hint = sandboxHint(result.exit_code, `${result.stderr}\n${result.stdout}`);
      result.sandbox = hint === undefined ? { profile } : { profile, hint };
    }
    if (result.timed_out) {
      throw timeoutError(p.argv ? `"${p.argv[0]}"` : 'command', timeout_ms, { ...result, cwd });
    }
    return result;
  };
}
