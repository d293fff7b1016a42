import { readdirSync, readFileSync } from 'node:fs';

/**
 * Sends `signal` to every process of the group `pgid`. Returns false when the group no longer
 * exists (ESRCH); other errors (EPERM) count as "still there".
 */
export function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** State and process group of `/proc/<pid>/stat`, or undefined when unreadable. */
function procStat(pid: string): { state: string; pgrp: number } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const pgrp = Number(fields[2]);
  return state === undefined || !Number.isFinite(pgrp) ? undefined : { state, pgrp };
}

/**
 * Pids of the group's members that are not zombies, or undefined when `/proc` cannot be read.
 * A killed orphan stays a zombie until PID 1 reaps it (some container inits take a while), and
 * `kill(-pgid, 0)` still finds zombies, so `/proc` tells "dead, not yet reaped" from "running".
 */
export function liveMembers(pgid: number): number[] | undefined {
  let pids: string[];
  try {
    pids = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const out: number[] = [];
  for (const pid of pids) {
    const c = pid.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    const st = procStat(pid);
    if (st !== undefined && st.pgrp === pgid && st.state !== 'Z' && st.state !== 'X') out.push(Number(pid));
  }
  return out;
}

/** True while the group `pgid` has a member that is not a zombie (without `/proc`: while kill(2) finds it). */
export function groupAlive(pgid: number): boolean {
  if (!signalGroup(pgid, 0)) return false;
  const live = liveMembers(pgid);
  return live === undefined || live.length > 0;
}
