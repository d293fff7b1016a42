// What finger itself is, as one RiskAssessor knows it: its home (every path under it), the admin
// token file wherever it lives, the daemon's ports, addresses and process id. A tool call of an
// agent that reaches any of these is the governed trying to govern itself (forbidden.ts): DENY,
// which nothing lowers. Built once per assessor from its options (no process-wide registry).

import { USUAL_HOMES } from '../places/known-homes.js';
import { normalizePath } from '../places/paths.js';

/** finger's daemon as the assessor is told of it (the daemon's wiring passes its listening address and pid). */
export interface DaemonFacts {
  /** the ports it listens on (default: 7770) */
  ports?: readonly number[];
  /** its process id */
  pid?: number;
  /** URLs it is reached at (`FINGER_URL`, its listening address): their hosts and ports count as its own */
  urls?: readonly string[];
}

/** The options of {@link FingerSelf}. */
export interface FingerSelfOptions {
  /** finger's home (`FINGER_HOME`); `~/.finger` always counts too */
  finger_home?: string;
  /** more files no agent may touch: the admin token file where it is not in the home (`FINGER_TOKEN_FILE`) */
  guarded_paths?: readonly string[];
  /**
   * workspace roots the operator configured inside finger's home: the one part of it agents work
   * in, until the daemon refuses such a root at start (they are not forbidden, the rest is)
   */
  workspace_roots?: readonly string[];
  daemon?: DaemonFacts;
}

/** finger's default port (the daemon's `server.port`, the CLI's default URL). */
export const DEFAULT_DAEMON_PORT = 7770;

function normalised(paths: readonly (string | undefined)[]): string[] {
  const out: string[] = [];
  for (const p of paths) {
    if (p === undefined) continue;
    // with the usual home spellings only (`/home/u/.finger` is `~/.finger`), as paths.ts knownHomes
    // normalises finger's home: the places are built before any call, not per assessor's homes
    const n = normalizePath(p, USUAL_HOMES);
    if (n === null || n === '' || n === '/' || n === '~' || !(n.startsWith('/') || n.startsWith('~/'))) continue;
    if (!out.includes(n)) out.push(n);
  }
  return out;
}

/** finger's own places and addresses, normalised (paths as paths.ts normalizePath gives them). */
export class FingerSelf {
  /** finger's homes: the configured one and `~/.finger` */
  readonly homes: readonly string[];
  /** workspace roots inside a home (not forbidden) */
  readonly exempt: readonly string[];
  /** single files (the token file outside the home) */
  readonly guarded: readonly string[];
  readonly ports: readonly number[];
  readonly pids: readonly number[];
  /** host names and addresses (lower case) the daemon is reached at besides loopback */
  readonly hosts: readonly string[];

  constructor(o: FingerSelfOptions = {}) {
    this.homes = normalised([o.finger_home, '~/.finger']);
    this.exempt = normalised(o.workspace_roots ?? []).filter((r) => this.homes.some((h) => r.startsWith(`${h}/`)));
    this.guarded = normalised(o.guarded_paths ?? []);
    const ports = new Set<number>(o.daemon?.ports ?? []);
    const hosts = new Set<string>();
    for (const u of o.daemon?.urls ?? []) {
      try {
        const url = new URL(u);
        const port = url.port !== '' ? Number(url.port) : /^(?:https|wss):$/.test(url.protocol) ? 443 : 80;
        ports.add(port);
        hosts.add(url.hostname.replace(/^\[|\]$/g, '').toLowerCase());
      } catch {
        // not a URL: nothing to learn from it
      }
    }
    if (ports.size === 0) ports.add(DEFAULT_DAEMON_PORT);
    this.ports = Object.freeze([...ports]);
    this.hosts = Object.freeze([...hosts]);
    this.pids = Object.freeze(o.daemon?.pid !== undefined ? [o.daemon.pid] : []);
  }

  /**
   * What of finger's a normalised path (no glob) is: its home or the guarded file it lies in
   * (named), or null — also for a workspace root the operator put inside the home.
   */
  placeOf(n: string): string | null {
    for (const g of this.guarded) if (n === g) return g;
    for (const h of this.homes) {
      if (n !== h && !n.startsWith(`${h}/`)) continue;
      if (this.exempt.some((e) => n === e || n.startsWith(`${e}/`))) return null;
      return h;
    }
    return null;
  }
}
