import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { addressClass } from '@finger/firewall';
import { type ProxyAddressVerdict, type ProxyRefusal, SandboxProxy } from '@finger/hub';

import type { DaemonConfig } from './config.js';

/** A Unix socket path must fit `sun_path` (108 bytes on Linux, with its NUL). */
const MAX_SOCKET_PATH = 100;
/** Refusals logged per minute; past it they are counted and the count is logged once the minute is over. */
const MAX_LOGGED_REFUSALS = 50;

/**
 * The firewall's judgement of one resolved address for the proxy: global unicast only; loopback,
 * link-local, private, unspecified, special ranges and cloud metadata endpoints are refused, named.
 */
export function judgeProxyAddress(address: string): ProxyAddressVerdict {
  const c = addressClass(address);
  if (c.kind === 'public') return { allowed: true };
  const what = c.kind === 'metadata' ? `cloud metadata endpoint (${c.metadata ?? c.range})` : `${c.kind} address`;
  return { allowed: false, reason: what };
}

/**
 * The workspace-write sandbox's package-registry proxy when config `sandbox.network.allow` lists
 * anything and sandboxes are not off (docs/operations.md, "Package registries through the
 * sandbox"): built, not listening — the daemon starts it before it listens and closes it on
 * close. Its socket is `FINGER_HOME/state/sandbox-proxy/proxy.sock` (the directory 0700, the
 * socket 0600), or one in a fresh 0700 directory under the system's temporary directory when
 * that path is too long for a Unix socket. Each refusal is logged (at most 50 a minute, the rest
 * counted). Undefined when the setting is off.
 */
export function wireSandboxProxy(o: {
  config: DaemonConfig['sandbox'];
  home: string;
  logger: { warn(details: object, message: string): void };
}): SandboxProxy | undefined {
  const allow = o.config.network.allow;
  if (allow.length === 0 || o.config.mode === 'off') return undefined;
  let socketPath = join(o.home, 'state', 'sandbox-proxy', 'proxy.sock');
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH)
    socketPath = join(mkdtempSync(join(tmpdir(), 'finger-proxy-')), 'proxy.sock');
  let windowStart = 0;
  let logged = 0;
  let dropped = 0;
  const onRefusal = (r: ProxyRefusal): void => {
    const now = Date.now();
    if (now - windowStart >= 60_000) {
      if (dropped > 0)
        o.logger.warn({ sandbox_proxy: { dropped } }, `sandbox proxy: ${dropped} more refusals not logged`);
      windowStart = now;
      logged = 0;
      dropped = 0;
    }
    if (logged >= MAX_LOGGED_REFUSALS) {
      dropped++;
      return;
    }
    logged++;
    o.logger.warn({ sandbox_proxy: r }, `sandbox proxy refused ${r.method} ${r.target}: ${r.reason}`);
  };
  return new SandboxProxy({ socketPath, allow, judgeAddress: judgeProxyAddress, onRefusal });
}
