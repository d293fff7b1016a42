import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

import { killProcessGroup } from './process-tree.js';

/** A process pinned by its start time, so a reused pid is not mistaken for it. */
export interface ProcRef {
  pid: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks after boot). */
  start: string;
}

interface Stat {
  state: string;
  ppid: number;
  start: string;
}

function stat(pid: number | string): Stat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after the last ')'.
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = f[0];
  const ppid = Number(f[1]);
  const start = f[19];
  return state === undefined || start === undefined || !Number.isFinite(ppid) ? undefined : { state, ppid, start };
}

function pids(): string[] {
  try {
    return readdirSync('/proc').filter((n) => n.charCodeAt(0) >= 48 && n.charCodeAt(0) <= 57);
  } catch {
    return [];
  }
}

/** True while the process runs (exists, is not a zombie, and is still the one `ref` names). */
export function isRunning(ref: ProcRef): boolean {
  const s = stat(ref.pid);
  return s !== undefined && s.start === ref.start && s.state !== 'Z' && s.state !== 'X';
}

/**
 * The sandbox's init: the one child of the bubblewrap process `bwrapPid` (PID 1 of the sandbox's
 * PID namespace). Undefined when it has none (not started yet, or already gone).
 */
export function sandboxInit(bwrapPid: number): ProcRef | undefined {
  let own: string;
  try {
    own = readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
  for (const p of pids()) {
    const s = stat(p);
    if (s === undefined || s.ppid !== bwrapPid || s.state === 'Z') continue;
    // only a process in another PID namespace is a sandbox's init (a reused pid's child is not)
    try {
      if (readlinkSync(`/proc/${p}/ns/pid`) === own) continue;
    } catch {
      continue;
    }
    return { pid: Number(p), start: s.start };
  }
  return undefined;
}

/**
 * Sends `signal` to every process of the sandbox except its init (all processes whose PID
 * namespace is the init's), so programs inside get a SIGTERM and a grace before the namespace is
 * killed. Returns how many were signalled.
 */
export function signalSandboxMembers(init: ProcRef, signal: NodeJS.Signals): number {
  let ns: string;
  try {
    ns = readlinkSync(`/proc/${init.pid}/ns/pid`);
  } catch {
    return 0;
  }
  if (!isRunning(init)) return 0;
  let n = 0;
  for (const p of pids()) {
    if (Number(p) === init.pid) continue;
    let link: string;
    try {
      link = readlinkSync(`/proc/${p}/ns/pid`);
    } catch {
      continue;
    }
    if (link !== ns) continue;
    try {
      process.kill(Number(p), signal);
      n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

/**
 * Kills a whole sandbox at once: SIGKILL to its init (the kernel then kills every process of the
 * PID namespace, `setsid`/`nohup`/double-forked ones included) and to the bubblewrap process's
 * group. `init` is looked up when not given (before the kill: once bubblewrap is gone its init
 * has another parent). Returns the init, to await with {@link waitGone}; never throws.
 */
export function killSandbox(bwrapPid: number, init?: ProcRef): ProcRef | undefined {
  const i = init ?? sandboxInit(bwrapPid);
  if (i !== undefined && isRunning(i)) {
    try {
      process.kill(i.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  if (!killProcessGroup(bwrapPid, 'SIGKILL')) {
    try {
      process.kill(bwrapPid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  return i;
}

/**
 * Resolves once none of `refs` runs any more, or after `timeout_ms` (then false). When a
 * sandbox's init is no longer running, the kernel has killed and reaped every other process of its
 * PID namespace: the init's exit waits for them.
 */
export async function waitGone(refs: readonly (ProcRef | undefined)[], timeout_ms: number): Promise<boolean> {
  const live = () => refs.some((r) => r !== undefined && isRunning(r));
  const end = Date.now() + timeout_ms;
  while (live()) {
    if (Date.now() >= end) return false;
    await new Promise<void>((r) => setTimeout(r, 10));
  }
  return true;
}
