/**
 * Signals a whole process group (a child spawned with `detached: true` leads its own group, so
 * this reaches every process it started). Returns false when the group no longer exists or may not
 * be signalled; never throws.
 */
export function killProcessGroup(pid: number, signal: NodeJS.Signals): boolean {
  // kill(-0) would signal our own group: refuse anything but a real pid.
  if (!Number.isInteger(pid) || pid <= 1) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    // ESRCH: every member is gone. No fallback to the bare pid: it may have been reused.
    return false;
  }
}

/** True while a process with this pid exists (signal 0 probes without signalling). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The minimal environment names a child may inherit from the daemon; nothing else passes. */
export const INHERITED_ENV_NAMES = [
  'PATH',
  'HOME',
  'LANG',
  'LC_ALL',
  'TMPDIR',
  'TERM',
  'USER',
  'LOGNAME',
  'SHELL',
] as const;

/**
 * Builds a child's environment: the {@link INHERITED_ENV_NAMES} present in `base`, then the
 * module's own `env` from its manifest on top. Secrets in the daemon's environment never pass.
 */
export function childEnv(
  base: Record<string, string | undefined>,
  own: Record<string, string> | undefined,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV_NAMES) {
    const v = base[name];
    if (typeof v === 'string') env[name] = v;
  }
  if (own !== undefined) for (const [k, v] of Object.entries(own)) env[k] = v;
  return env;
}
