import { join } from 'node:path';

import { Sandbox, sandboxUnavailable, sandboxWarning } from '@finger/hub';

import type { DaemonConfig } from './config.js';

/** What {@link wireSandbox} needs. */
export interface SandboxWiringOptions {
  config: DaemonConfig['sandbox'];
  /** FINGER_HOME: masked in every sandbox. */
  home: string;
  /** The admin token file, wherever it lives: masked too. */
  tokenFile: string;
  /** Home of the user the daemon runs as: its credential places are masked. */
  userHome: string;
  /** Environment bubblewrap is looked up on (PATH). */
  env: Record<string, string | undefined>;
  /** Says loudly, once, where no sandbox runs. */
  warn(message: string, details: object): void;
  /** The workspace-write profile's package-registry proxy (sandbox-proxy-wiring.ts), when config `sandbox.network.allow` is set. */
  proxy?: { socketPath: string; hosts: readonly string[] };
}

/**
 * Builds the daemon's one sandbox policy (shared by the shell module and the stdio/MCP runtimes)
 * and checks it can run: mode `required` without a sandbox refuses the start (E_NO_SANDBOX), mode
 * `auto` without one warns (the banner repeats it), mode `off` warns that nothing is sandboxed.
 */
export function wireSandbox(o: SandboxWiringOptions): Sandbox {
  const sandbox = new Sandbox({
    mode: o.config.mode,
    protect: [o.home, o.tokenFile],
    userHome: o.userHome,
    exempt: o.config.exempt_modules,
    env: o.env,
    // the workspace-write profile's private tool caches, one directory per workspace, never mounted outside it
    cacheRoot: join(o.home, 'state', 'sandbox-cache'),
    ...(o.proxy !== undefined
      ? { proxy: { socket: o.proxy.socketPath, allow: o.config.network.allow, hosts: o.proxy.hosts } }
      : {}),
  });
  const status = sandbox.status();
  if (status.mode === 'required' && !status.available) throw sandboxUnavailable(status.reason);
  const warning = sandboxWarning(status);
  if (warning !== undefined) o.warn(warning, { sandbox: status });
  return sandbox;
}
