import { readdirSync, readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { InProcessRuntime, silentLogger, type ToolCallContext } from '@finger/hub';
import { type ModuleManifest, ulid } from '@finger/protocol';
import { waitUntil } from '@finger/testkit/core';

export const MODULE_DIR = fileURLToPath(new URL('..', import.meta.url));
export const MANIFEST = JSON.parse(await fs.readFile(path.join(MODULE_DIR, 'module.json'), 'utf8')) as ModuleManifest;

/** A hand-built call context; `controller` aborts its signal (cancellation). */
export function makeCtx(
  controller = new AbortController(),
  deadline_ms = 60_000,
): ToolCallContext & { extended: number[] } {
  const id = ulid();
  const ctx = {
    call_id: id,
    request_id: id,
    correlation_id: id,
    session_id: 's',
    workflow_id: 'w',
    lease_id: id,
    deadline: Date.now() + deadline_ms,
    source: { kind: 'system', id: 'test', roles: [] },
    signal: controller.signal,
    extended: [] as number[],
    extendLease(ttl: number) {
      ctx.extended.push(ttl);
    },
    progress() {},
    call: () => Promise.reject(new Error('no nested calls')),
  } satisfies ToolCallContext & { extended: number[] };
  return ctx;
}

/** A fresh temp dir (real path) holding a workspace root `ws`. */
export async function tempWorkspace(): Promise<{ dir: string; ws: string }> {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'finger-shell-')));
  const ws = path.join(dir, 'ws');
  await fs.mkdir(ws);
  return { dir, ws };
}

/** The module loaded from its sources through the hub's in-process runtime. */
export async function loadShell(settings: Record<string, unknown>): Promise<InProcessRuntime> {
  const rt = new InProcessRuntime({
    manifest: { ...MANIFEST, runtime: { type: 'inprocess', entry: './src/index.ts' } },
    baseDir: MODULE_DIR,
    logger: silentLogger,
    settings,
  });
  await rt.start();
  return rt;
}

/** Awaits a promise expected to reject and returns the error. */
export async function rejectionOf(p: Promise<unknown>): Promise<{ code: string; message: string; details?: any }> {
  try {
    await p;
  } catch (e) {
    return e as { code: string; message: string; details?: any };
  }
  throw new Error('expected a rejection');
}

/** Polls `cond` until true (bounded). */
export function until(cond: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  return waitUntil(what, cond, ms, 20);
}

function isZombieOrGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    return state === 'Z' || state === 'X';
  } catch {
    return true;
  }
}

/**
 * True when no process of the group `pgid` runs any more: `kill(-pgid, 0)` answers ESRCH, or
 * every remaining member is a zombie waiting for PID 1 (containers whose init reaps lazily).
 */
export function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue;
    }
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(f[2]) === pgid && !isZombieOrGone(Number(name))) return false;
  }
  return true;
}

/** True when `pid` no longer runs (gone or a zombie). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
  return isZombieOrGone(pid);
}
