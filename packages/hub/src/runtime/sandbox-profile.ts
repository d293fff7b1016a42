import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';

/**
 * Which sandbox a process runs in. `default`: the host's file system as it is, the network kept,
 * finger's home and the credential places masked (every AI-initiated process). `workspace-write`:
 * the same masks, and besides the file system read-only except the workspace roots, a private
 * /tmp, /var/tmp and /run, sandbox-private tool caches, no network — what a shell call the
 * firewall lowered from CONFIRM to NOTIFY runs in (the firewall decides; an agent cannot choose it).
 */
export type SandboxProfile = 'default' | 'workspace-write';

/** A directory bound over a tool cache of the user's home inside the workspace-write profile. */
export interface SandboxCacheBind {
  /** The sandbox-private directory (below FINGER_HOME/state/sandbox-cache/<workspace hash>/). */
  source: string;
  /** The tool cache it replaces (`~/.npm`, `~/.cache`…). */
  target: string;
}

/** The workspace-write part of {@link SandboxArgvOptions} (see sandbox.ts), already resolved. */
export interface WorkspaceWriteArgs {
  kind: 'workspace-write';
  /** The only writable places besides the private directories: the call's workspace roots. */
  writable: readonly string[];
  /** Inside a writable root, bound read-only again: what git runs from (`.git/hooks`, `.git/config`). */
  readOnly?: readonly string[];
  /** Empty private directories over these (existing) paths: `/tmp`, `/var/tmp`, `/run`. */
  tmpfs: readonly string[];
  caches?: readonly SandboxCacheBind[];
  /**
   * The package-registry proxy (config `sandbox.network.allow`): the daemon's proxy socket
   * `socket`, bound read-only at `inside`, where the bridge started before the command forwards
   * its HTTP_PROXY connections (sandbox-bridge.ts). Absent: no network at all.
   */
  proxy?: { socket: string; inside: string };
}

/**
 * The fixed part of the workspace-write profile: the whole file system read-only, a fresh /dev and
 * /proc, and besides the default profile's namespaces (user with no capability, PID, dies with its
 * parent, no controlling terminal) a network namespace with only loopback (no network: nothing
 * reaches the host's loopback either) and an IPC namespace.
 */
export const WORKSPACE_WRITE_BASE_ARGS: readonly string[] = [
  '--ro-bind',
  '/',
  '/',
  '--dev',
  '/dev',
  '--proc',
  '/proc',
  '--unshare-user',
  '--unshare-pid',
  '--unshare-net',
  '--unshare-ipc',
  '--die-with-parent',
  '--new-session',
  '--cap-drop',
  'ALL',
];

/** Private in the workspace-write profile (when they exist): temporary files and the host's run-time sockets (docker, D-Bus). */
export const PRIVATE_DIRS: readonly string[] = ['/tmp', '/var/tmp', '/run'];

/**
 * The tool caches of the user's home replaced by sandbox-private ones in the workspace-write
 * profile (only those that exist: bubblewrap cannot create a mount point on a read-only file
 * system). Never shared with unsandboxed runs, so nothing planted there runs outside.
 */
export const TOOL_CACHES: readonly string[] = [
  '.npm',
  '.cache',
  '.cargo/registry',
  '.cargo/git',
  'go/pkg',
  '.m2',
  '.gradle',
  '.pnpm-store',
  '.yarn',
  '.bun/install/cache',
];

/** What git runs or obeys inside a repository: read-only inside the workspace-write profile. */
export const GIT_RUNS_FROM: readonly string[] = ['.git/hooks', '.git/config'];

/** The private cache directory of one workspace: `<cacheRoot>/<16 hex of sha256 of its real path>`. */
export function workspaceCacheDir(cacheRoot: string, workspace: string): string {
  return join(cacheRoot, createHash('sha256').update(workspace).digest('hex').slice(0, 16));
}

/**
 * Resolves the workspace-write profile for one call (I/O: which paths exist; creates the private
 * cache directories, mode 0700): the writable roots, git's hooks and config in them (and in the
 * cwd's repository) read-only, the private directories, and a private cache over each tool cache
 * of `userHome` that exists — none without `cacheRoot`.
 */
export function workspaceWriteArgs(o: {
  writable: readonly string[];
  cwd?: string;
  userHome?: string;
  cacheRoot?: string;
}): WorkspaceWriteArgs {
  const writable = [...new Set(o.writable.filter((p) => isAbsolute(p)))];
  const readOnly: string[] = [];
  for (const dir of new Set([...writable, ...(o.cwd !== undefined ? [o.cwd] : [])]))
    for (const rel of GIT_RUNS_FROM) {
      const p = join(dir, rel);
      if (exists(p)) readOnly.push(p);
    }
  const caches: SandboxCacheBind[] = [];
  const workspace = writable[0];
  if (o.cacheRoot !== undefined && o.userHome !== undefined && isAbsolute(o.userHome) && workspace !== undefined) {
    const base = workspaceCacheDir(o.cacheRoot, workspace);
    for (const rel of TOOL_CACHES) {
      const target = join(o.userHome, rel);
      if (!exists(target)) continue;
      const source = join(base, rel.replaceAll('/', '_'));
      mkdirSync(source, { recursive: true, mode: 0o700 });
      caches.push({ source, target });
    }
  }
  return { kind: 'workspace-write', writable, readOnly, tmpfs: PRIVATE_DIRS.filter((d) => existsSync(d)), caches };
}

function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}
