import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join, relative, sep } from 'node:path';

import { FingerError } from '@finger/protocol';

import { bridgeSocketInside, SANDBOX_BRIDGE_CODE } from './sandbox-bridge.js';
import { credentialPaths, resolveMasks, type SandboxMask } from './sandbox-paths.js';
import { WORKSPACE_WRITE_BASE_ARGS, type WorkspaceWriteArgs, workspaceWriteArgs } from './sandbox-profile.js';

/**
 * How the daemon sandboxes the processes it starts for AI-initiated calls (config `sandbox.mode`):
 * `auto` sandboxes where bubblewrap can run and says loudly where it cannot; `required` refuses to
 * start the daemon without a sandbox; `off` never sandboxes (operator's choice).
 */
export type SandboxMode = 'auto' | 'required' | 'off';

/** A directory kept visible inside the sandbox although it lies below a mask (a workspace root, a module's folder). */
export interface SandboxKeep {
  path: string;
  writable: boolean;
}

/** Input of {@link sandboxArgv}. */
export interface SandboxArgvOptions {
  /** The bubblewrap binary. */
  bwrap: string;
  /** What to hide (already resolved: existing paths, symlinks followed). */
  masks: readonly SandboxMask[];
  /** What to keep visible below a mask; ignored where no mask covers it. */
  keep?: readonly SandboxKeep[];
  /** The program and its arguments, run inside. */
  command: readonly string[];
  /**
   * The workspace-write profile (sandbox-profile.ts): read-only file system but for the writable
   * roots (always bound, `keep` ignored), private /tmp and caches, no network. Absent: the default profile.
   */
  profile?: WorkspaceWriteArgs;
}

/**
 * The fixed part of every sandbox: the host's file system as it is (`--dev-bind / /`, so the
 * workspace stays writable and the network stays), a new user namespace with every capability
 * dropped (nothing inside can unmount, remount or regain what was hidden, even as root), a new
 * PID namespace with its own /proc (killing its init kills every descendant, `setsid` and
 * double-forked ones included; the daemon's processes are not visible), the sandbox dies with the
 * process that started it, and a new session (no controlling terminal to inject input into).
 */
export const SANDBOX_BASE_ARGS: readonly string[] = [
  '--dev-bind',
  '/',
  '/',
  '--unshare-user',
  '--unshare-pid',
  '--die-with-parent',
  '--new-session',
  '--cap-drop',
  'ALL',
  '--proc',
  '/proc',
];

/** True when `p` is strictly below `dir`. */
function below(p: string, dir: string): boolean {
  const r = relative(dir, p);
  return r !== '' && !r.startsWith('..') && !isAbsolute(r);
}

function depth(p: string): number {
  return p.split(sep).filter((s) => s !== '').length;
}

/**
 * Builds the bubblewrap argv (pure): {@link SANDBOX_BASE_ARGS}, then the masks (an empty tmpfs
 * over a directory, /dev/null over a file) and the kept directories that lie below a mask,
 * applied from the shallowest path to the deepest so the deeper one wins (a workspace inside
 * FINGER_HOME stays usable, a credential directory inside a workspace stays hidden; for the same
 * path the mask wins), then `--` and the command. With `profile` (workspace-write):
 * {@link WORKSPACE_WRITE_BASE_ARGS}, the private directories, and every writable root bound
 * read-write, git's hooks and config in them read-only again and the private caches over the
 * tool caches — ordered with the masks by depth the same way.
 */
export function sandboxArgv(o: SandboxArgvOptions): string[] {
  const ww = o.profile;
  const keep: readonly SandboxKeep[] = ww ? ww.writable.map((path) => ({ path, writable: true })) : (o.keep ?? []);
  const ops: { path: string; order: number; args: string[] }[] = [];
  for (const m of o.masks) {
    // already hidden by a directory mask above it (a bind would only leave a mount point there),
    // unless a kept directory between the two shows it again
    const hidden = o.masks.some(
      (d) =>
        d.kind === 'dir' &&
        below(m.path, d.path) &&
        !keep.some((k) => below(k.path, d.path) && (k.path === m.path || below(m.path, k.path))),
    );
    if (hidden) continue;
    ops.push({
      path: m.path,
      order: 2,
      args: m.kind === 'dir' ? ['--tmpfs', m.path] : ['--ro-bind', '/dev/null', m.path],
    });
  }
  for (const k of keep) {
    // the default profile sees the host as it is: a kept directory needs a bind only below a mask
    if (!ww && !o.masks.some((m) => m.kind === 'dir' && below(k.path, m.path))) continue;
    ops.push({ path: k.path, order: 0, args: [k.writable ? '--bind' : '--ro-bind', k.path, k.path] });
  }
  if (ww) {
    for (const d of ww.tmpfs) ops.push({ path: d, order: -1, args: ['--tmpfs', d] });
    for (const c of ww.caches ?? []) ops.push({ path: c.target, order: 0, args: ['--bind', c.source, c.target] });
    for (const r of ww.readOnly ?? []) ops.push({ path: r, order: 1, args: ['--ro-bind', r, r] });
    if (ww.proxy !== undefined)
      ops.push({ path: ww.proxy.inside, order: 1, args: ['--ro-bind', ww.proxy.socket, ww.proxy.inside] });
  }
  ops.sort((a, b) => depth(a.path) - depth(b.path) || a.order - b.order || (a.path < b.path ? -1 : 1));
  const base = ww ? WORKSPACE_WRITE_BASE_ARGS : SANDBOX_BASE_ARGS;
  // with the registry proxy the bridge starts first and runs the command (sandbox-bridge.ts)
  const command =
    ww?.proxy !== undefined ? [process.execPath, '-e', SANDBOX_BRIDGE_CODE, ww.proxy.inside, ...o.command] : o.command;
  return [o.bwrap, ...base, ...ops.flatMap((x) => x.args), '--', ...command];
}

/** Whether a sandbox can run on this host, and why not. */
export interface SandboxProbe {
  available: boolean;
  /** The bubblewrap binary found. */
  bwrap?: string;
  /** Why no sandbox can run (absent when one can). */
  reason?: string;
}

/** What `doctor` and `/v1/health` show: the mode, whether a sandbox can run, whether it is used. */
export interface SandboxStatus {
  mode: SandboxMode;
  available: boolean;
  /** Sandboxes are in use (mode not `off` and available). */
  active: boolean;
  reason?: string;
  bwrap?: string;
  /**
   * Whether each stricter profile can run (its own trial run): `workspace-write` lets the firewall
   * run a `moderate` shell call that stays in the workspace at NOTIFY instead of CONFIRM.
   */
  profiles: { 'workspace-write': { available: boolean; reason?: string } };
  /**
   * The workspace-write profile's filtering proxy (config `sandbox.network.allow`), when set: the
   * entries as configured, the host:port pairs they expand to, and the proxy's Unix socket.
   */
  network?: { allow: readonly string[]; hosts: readonly string[]; socket: string };
}

const FALLBACK_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
const PROBE_TIMEOUT_MS = 5000;
/** One probe per binary and PATH for the life of the process: the host does not change under us. */
const probes = new Map<string, SandboxProbe>();

/** Looks `name` up on `pathVar` (an absolute name is checked as it is); undefined when not executable anywhere. */
export function findProgram(name: string, pathVar: string | undefined): string | undefined {
  const candidates = isAbsolute(name)
    ? [name]
    : (pathVar ?? FALLBACK_PATH)
        .split(delimiter)
        .filter((d) => isAbsolute(d))
        .map((d) => join(d, name));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * "Can a sandbox run here?": bubblewrap on PATH (or `bwrap` when given) and a trial run of the
 * full {@link SANDBOX_BASE_ARGS} that exits 0 within 5 s. The answer is cached per binary and
 * PATH (`fresh` asks again). Never throws.
 */
export function probeSandbox(
  o: { env?: Record<string, string | undefined>; bwrap?: string; fresh?: boolean } = {},
): SandboxProbe {
  if (process.platform !== 'linux') {
    return { available: false, reason: `not Linux (platform ${process.platform}): bubblewrap needs Linux namespaces` };
  }
  const pathVar = o.env?.PATH ?? FALLBACK_PATH;
  const key = `${o.bwrap ?? 'bwrap'}\0${pathVar}`;
  const cached = probes.get(key);
  if (cached !== undefined && o.fresh !== true) return cached;
  const result = runProbe(o.bwrap ?? 'bwrap', pathVar);
  probes.set(key, result);
  return result;
}

function runProbe(name: string, pathVar: string): SandboxProbe {
  const bwrap = findProgram(name, pathVar);
  if (bwrap === undefined) {
    return { available: false, reason: `bubblewrap ("${name}") not found on PATH: install the bubblewrap package` };
  }
  const [file, ...args] = sandboxArgv({ bwrap, masks: [], command: ['true'] });
  const r = spawnSync(file!, args, {
    env: { PATH: pathVar },
    timeout: PROBE_TIMEOUT_MS,
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  if (r.error !== undefined)
    return { available: false, bwrap, reason: `trial run of ${bwrap} failed: ${r.error.message}` };
  if (r.status !== 0) {
    const why = (r.stderr ?? '').trim().split('\n')[0] || `exit ${r.status ?? r.signal}`;
    return {
      available: false,
      bwrap,
      reason: `trial run of ${bwrap} failed: ${why} (user namespaces disabled or not permitted?)`,
    };
  }
  return { available: true, bwrap };
}

const profileProbes = new Map<string, SandboxProbe>();

/**
 * "Can the workspace-write profile run here?": a trial run of its argv (read-only root, private
 * directories, no network) with bubblewrap `bwrap`, cached per binary. Never throws.
 */
export function probeWorkspaceWrite(bwrap: string, o: { fresh?: boolean } = {}): SandboxProbe {
  const cached = profileProbes.get(bwrap);
  if (cached !== undefined && o.fresh !== true) return cached;
  const profile = workspaceWriteArgs({ writable: [] });
  const [file, ...args] = sandboxArgv({ bwrap, masks: [], command: ['true'], profile });
  const r = spawnSync(file!, args, {
    env: { PATH: FALLBACK_PATH },
    timeout: PROBE_TIMEOUT_MS,
    stdio: ['ignore', 'ignore', 'pipe'],
    encoding: 'utf8',
  });
  let result: SandboxProbe = { available: true, bwrap };
  if (r.error !== undefined || r.status !== 0) {
    const why = r.error?.message ?? ((r.stderr ?? '').trim().split('\n')[0] || `exit ${r.status ?? r.signal}`);
    result = { available: false, bwrap, reason: `trial run of the workspace-write profile failed: ${why}` };
  }
  profileProbes.set(bwrap, result);
  return result;
}

/** How a process is put into the workspace-write profile (see {@link Sandbox.wrap}). */
export interface WorkspaceWriteRequest {
  profile: 'workspace-write';
  /** The call's workspace roots (real paths), the first its own: the only writable places; the first names the private cache. */
  writable: readonly string[];
  /** The directory the command starts in (its repository's `.git/hooks` and `.git/config` stay read-only too). */
  cwd?: string;
  /** `registries`: the firewall let the call through with the package-registry proxy (its verdict's `sandbox_network`). */
  network?: 'registries';
}

/** Options of a {@link Sandbox}. */
export interface SandboxOptions {
  mode: SandboxMode;
  /** Always masked: FINGER_HOME and the admin token file (wherever it lives). */
  protect: readonly string[];
  /** Home of the user the daemon runs as: its credential places are masked too. */
  userHome?: string;
  /** Module ids whose processes the operator exempts (config `sandbox.exempt_modules`). */
  exempt?: readonly string[];
  /** Environment the bubblewrap binary is looked up on (PATH). */
  env?: Record<string, string | undefined>;
  /** The bubblewrap binary (default `bwrap` on PATH). */
  bwrap?: string;
  /** The probe to use instead of running one (tests). */
  probe?: SandboxProbe;
  /**
   * Where the workspace-write profile keeps its private tool caches, one directory per workspace
   * (the daemon: FINGER_HOME/state/sandbox-cache); without it the tool caches stay read-only there.
   */
  cacheRoot?: string;
  /** The workspace-write probe to use instead of running one (tests). */
  profileProbe?: SandboxProbe;
  /**
   * The workspace-write profile's package-registry proxy, running (the daemon's SandboxProxy):
   * its Unix socket, the configured `allow` entries and the host:port pairs they expand to.
   * Absent: a call let through with `network: 'registries'` is refused (E_NO_SANDBOX).
   */
  proxy?: { socket: string; allow: readonly string[]; hosts: readonly string[] };
}

/**
 * The daemon's sandbox policy, one instance shared by the shell module and the stdio/MCP
 * runtimes: whether processes are wrapped, and the bubblewrap argv that wraps them. The masks are
 * resolved at every wrap (a credential directory created after start is masked from then on).
 */
export class Sandbox {
  readonly mode: SandboxMode;
  readonly #probe: SandboxProbe;
  readonly #paths: string[];
  readonly #exempt: ReadonlySet<string>;
  readonly #userHome: string | undefined;
  readonly #cacheRoot: string | undefined;
  readonly #profileProbe: SandboxProbe;
  readonly #assigned = new Map<string, { profile: 'workspace-write'; network?: 'registries' }>();
  readonly #proxy: SandboxOptions['proxy'];

  /** Per call: the paths to hard-link into the undo store before it runs (the firewall's `undo_snapshot`). */
  readonly #snapshots = new Map<string, readonly string[]>();

  constructor(o: SandboxOptions) {
    this.mode = o.mode;
    this.#probe =
      o.mode === 'off' && o.probe === undefined
        ? { available: false, reason: 'sandbox.mode is off' }
        : (o.probe ?? probeSandbox({ ...(o.env ? { env: o.env } : {}), ...(o.bwrap ? { bwrap: o.bwrap } : {}) }));
    this.#paths = [...o.protect, ...credentialPaths(o.userHome)];
    this.#exempt = new Set(o.exempt ?? []);
    this.#userHome = o.userHome;
    this.#cacheRoot = o.cacheRoot;
    this.#proxy = o.proxy;
    this.#profileProbe =
      o.profileProbe ??
      (this.#probe.available && this.#probe.bwrap !== undefined
        ? probeWorkspaceWrite(this.#probe.bwrap)
        : { available: false, reason: this.#probe.reason ?? 'no sandbox' });
  }

  /** The state for doctor, health and the start-up banner. */
  status(): SandboxStatus {
    const p = this.#probe;
    const ww = this.#profileProbe;
    const wwAvailable = this.active && ww.available;
    const why = this.active ? ww.reason : this.mode === 'off' ? 'sandbox.mode is off' : p.reason;
    const s: SandboxStatus = {
      mode: this.mode,
      available: p.available,
      active: this.active,
      profiles: {
        'workspace-write': wwAvailable ? { available: true } : { available: false, reason: why ?? 'unknown reason' },
      },
    };
    if (p.reason !== undefined) s.reason = p.reason;
    if (p.bwrap !== undefined) s.bwrap = p.bwrap;
    if (this.#proxy !== undefined)
      s.network = { allow: [...this.#proxy.allow], hosts: [...this.#proxy.hosts], socket: this.#proxy.socket };
    return s;
  }

  /**
   * True when the workspace-write profile is used for module `id`'s processes when asked for:
   * processes are wrapped ({@link active}, not exempt) and its own trial run passed.
   */
  workspaceWriteFor(id: string): boolean {
    return this.active && this.appliesTo(id) && this.#profileProbe.available;
  }

  /** True when processes are wrapped. */
  get active(): boolean {
    return this.mode !== 'off' && this.#probe.available;
  }

  /**
   * True when processes of module `id` are to be wrapped: mode not `off` and the operator did not
   * exempt it. {@link wrap} then says whether they can be (auto) or refuses (required).
   */
  appliesTo(id: string): boolean {
    return this.mode !== 'off' && !this.#exempt.has(id);
  }

  /**
   * The firewall's hand-over (its SandboxProfileChannel): while call `call_id` (the hub's
   * execution id, the module's `ctx.call_id`) runs it must run in `profile`. Set by the firewall
   * interceptor only — never from a payload. `network`: the call gets the package-registry proxy.
   */
  assign(call_id: string, profile: 'workspace-write', network?: 'registries'): void {
    this.#assigned.set(call_id, network !== undefined ? { profile, network } : { profile });
  }

  /** The call has ended: its assignment goes. */
  release(call_id: string): void {
    this.#assigned.delete(call_id);
    this.#snapshots.delete(call_id);
  }

  /**
   * The firewall's hand-over of a deleting call's undo snapshot (its SandboxProfileChannel's
   * `snapshotFor`): the real paths the shell module hard-links into the undo store before call
   * `call_id` runs. Set by the firewall interceptor only — never from a payload.
   */
  snapshotFor(call_id: string, paths: readonly string[]): void {
    this.#snapshots.set(call_id, Object.freeze([...paths]));
  }

  /** The paths to snapshot before call `call_id` runs, undefined when none. */
  undoSnapshotOf(call_id: string): readonly string[] | undefined {
    return this.#snapshots.get(call_id);
  }

  /** The profile the firewall assigned to call `call_id`, undefined for the default one. */
  profileOf(call_id: string): 'workspace-write' | undefined {
    return this.#assigned.get(call_id)?.profile;
  }

  /** `registries` when the firewall let call `call_id` through with the package-registry proxy. */
  networkOf(call_id: string): 'registries' | undefined {
    return this.#assigned.get(call_id)?.network;
  }

  /** The paths masked now (resolved, existing). */
  masks(): SandboxMask[] {
    return resolveMasks(this.#paths);
  }

  /**
   * The argv running `command` in a sandbox, or undefined when processes are not wrapped (mode
   * `off`, or `auto` where none can run). Throws E_NO_SANDBOX in mode `required` when no
   * sandbox can run (the daemon refuses to start first; this is the second line). With
   * `profile` (workspace-write) it never answers undefined: it throws E_NO_SANDBOX when that
   * profile cannot run — the firewall let the call through on the strength of it.
   */
  wrap(
    command: readonly string[],
    keep: readonly SandboxKeep[] = [],
    profile?: WorkspaceWriteRequest,
  ): string[] | undefined {
    if (profile !== undefined) {
      if (!this.active || !this.#profileProbe.available || this.#probe.bwrap === undefined)
        throw new FingerError(
          'E_NO_SANDBOX',
          `the call was let through to run in the workspace-write sandbox, which cannot run here: ${this.status().profiles['workspace-write'].reason ?? 'unknown reason'}`,
          { profile: 'workspace-write' },
        );
      if (profile.network !== undefined && this.#proxy === undefined)
        throw new FingerError(
          'E_NO_SANDBOX',
          'the call was let through to reach the package registries through the sandbox proxy, which is not running',
          { profile: 'workspace-write', network: profile.network },
        );
      const args = workspaceWriteArgs({
        writable: profile.writable,
        ...(profile.cwd !== undefined ? { cwd: profile.cwd } : {}),
        ...(this.#userHome !== undefined ? { userHome: this.#userHome } : {}),
        ...(this.#cacheRoot !== undefined ? { cacheRoot: this.#cacheRoot } : {}),
      });
      if (profile.network !== undefined && this.#proxy !== undefined)
        args.proxy = { socket: this.#proxy.socket, inside: bridgeSocketInside(args.tmpfs) };
      return sandboxArgv({ bwrap: this.#probe.bwrap, masks: this.masks(), command, profile: args });
    }
    if (this.mode === 'off') return undefined;
    if (!this.#probe.available || this.#probe.bwrap === undefined) {
      if (this.mode === 'required') throw sandboxUnavailable(this.#probe.reason);
      return undefined;
    }
    return sandboxArgv({ bwrap: this.#probe.bwrap, masks: this.masks(), keep, command });
  }
}

/**
 * The loud line for the start-up log, the banner and `doctor` when AI-initiated processes run
 * unsandboxed (mode `off`, or `auto` where no sandbox can run); undefined when they are sandboxed.
 */
export function sandboxWarning(s: Pick<SandboxStatus, 'mode' | 'active' | 'reason'>): string | undefined {
  if (s.active) return undefined;
  const why = s.mode === 'off' ? 'sandbox.mode is "off"' : (s.reason ?? 'unknown reason');
  return (
    `no sandbox: ${why}; agents can read finger's files (FINGER_HOME, the admin token) through the ` +
    `programs they run — run the daemon as its own OS user`
  );
}

/** E_NO_SANDBOX: mode `required` and no sandbox can run here. */
export function sandboxUnavailable(reason: string | undefined): FingerError {
  return new FingerError(
    'E_NO_SANDBOX',
    `sandbox.mode is "required" but no sandbox can run here: ${reason ?? 'unknown reason'}`,
    { reason: reason ?? null },
  );
}
