// A supervised task's workspace (§3.13): the directory `myfinger run` was started in. When it lies
// outside the configured `workspace.roots`, it becomes an extra read/write root for that task's
// own calls only. The daemon is the only source of that fact: the TaskService binds the task's
// agent principal (an object only it holds) to the workspace, and the firewall's PathSandbox and
// the fs/shell modules ask `workspaceFor(call.source)` — a payload can never name a root.

import { realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative } from 'node:path';

import { FingerError, type Principal } from '@finger/protocol';

/** True when `p` is `root` or below it (both absolute, normalised). */
function within(p: string, root: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Realpath of `p`, or `p` itself when it cannot be resolved (a FINGER_HOME not created yet). */
function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/** What {@link checkTaskWorkspace} holds a workspace against. */
export interface TaskWorkspacePolicy {
  /** Realpath'd configured workspace roots: a workspace inside one needs no task root. */
  roots: readonly string[];
  /** FINGER_HOME: neither it, anything inside it nor a directory holding it may be a task root. */
  home: string;
  /** The user's home directory: it (and a directory holding it) may not be a task root. */
  homeDir: string;
  /** The admin token file (when it lives outside FINGER_HOME): a directory holding it may not be a workspace. */
  tokenFile?: string;
}

/** A checked workspace: its real path, and whether it lies outside the configured roots. */
export interface CheckedWorkspace {
  path: string;
  /** True when the task needs its own root (outside every configured root). */
  own_root: boolean;
}

/**
 * Checks a task's workspace as sent by the client (`myfinger run` sends its working directory):
 * absolute (E_INVALID_ARGS), an existing directory after realpath (E_INVALID_ARGS). It is refused
 * with E_FORBIDDEN — whatever the configured roots say — when it is `/`, the user's home
 * directory, FINGER_HOME or inside it, or a directory holding FINGER_HOME or the admin token file
 * (the task could then read the daemon's token, policy and audit log); outside the configured
 * roots, also when it holds the user's home directory. Inside a configured root it is accepted as is; any other
 * directory becomes the task's own root.
 */
export function checkTaskWorkspace(input: string, o: TaskWorkspacePolicy): CheckedWorkspace {
  if (!isAbsolute(input))
    throw new FingerError('E_INVALID_ARGS', `workspace must be an absolute path, got ${JSON.stringify(input)}`);
  let real: string;
  try {
    real = realpathSync(input);
    if (!statSync(real).isDirectory()) throw new Error('not a directory');
  } catch (e) {
    throw new FingerError('E_INVALID_ARGS', `workspace ${input} is not a directory: ${(e as Error).message}`, {
      workspace: input,
    });
  }
  const home = realOr(o.home);
  const homeDir = realOr(o.homeDir);
  const refuse = (why: string): never => {
    throw new FingerError(
      'E_FORBIDDEN',
      `a task cannot work in ${real}: ${why}. Start \`myfinger run\` in a project directory (or add one to config workspace.roots)`,
      { workspace: real, reason: why },
    );
  };
  if (real === '/') refuse('it is the root directory');
  if (real === homeDir) refuse('it is your home directory');
  if (real === home) refuse(`it is FINGER_HOME, the daemon's own state`);
  if (within(real, home)) refuse(`it is inside FINGER_HOME (${home}), the daemon's own state`);
  if (within(home, real)) refuse(`it holds FINGER_HOME (${home}), the daemon's own state`);
  if (o.tokenFile !== undefined && within(realOr(o.tokenFile), real))
    refuse(`it holds the admin token file (${o.tokenFile})`);
  if (o.roots.some((r) => within(real, r))) return { path: real, own_root: false };
  if (within(homeDir, real)) refuse('it holds your home directory');
  return { path: real, own_root: true };
}

/**
 * Which task principal works in which workspace, for the task's lifetime. Keyed by the principal
 * OBJECT the TaskService made for the run (the hub hands that very object to the interceptors and
 * to in-process modules as `source`): a token, an HTTP client or a payload naming the same id
 * gets nothing. A call that crossed a process boundary (a module served over NATS) arrives with
 * a copy and so keeps the configured roots only — fail safe.
 */
export class TaskWorkspaces {
  readonly #byPrincipal = new WeakMap<Principal, string>();
  readonly #byTask = new Map<string, Principal>();

  /**
   * The principal a task's calls carry: frozen, bound to `workspace` when `own_root` (else the
   * configured roots already cover it). Binding a task again (a resume) replaces its principal.
   */
  bind(task_id: string, workspace: CheckedWorkspace): Principal {
    const roles = Object.freeze(['agent:executor']) as unknown as string[];
    const principal: Principal = Object.freeze({ kind: 'agent', id: `executor-${task_id}`, roles });
    this.release(task_id);
    if (workspace.own_root) this.#byPrincipal.set(principal, workspace.path);
    this.#byTask.set(task_id, principal);
    return principal;
  }

  /** The principal bound to a running task, if any. */
  principalOf(task_id: string): Principal | undefined {
    return this.#byTask.get(task_id);
  }

  /** Forgets a task (it left the loop): its principal no longer has a root, even if held somewhere. */
  release(task_id: string): void {
    const p = this.#byTask.get(task_id);
    if (p === undefined) return;
    this.#byPrincipal.delete(p);
    this.#byTask.delete(task_id);
  }

  /** The task root of `principal` — only the exact object {@link bind} returned, while bound. */
  readonly workspaceFor = (principal: Principal | undefined): string | undefined =>
    principal === undefined || principal === null || typeof principal !== 'object'
      ? undefined
      : this.#byPrincipal.get(principal);
}
