import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import { assertManifest, type ModuleManifest, ulid } from '@finger/protocol';
import { waitUntil } from '@finger/testkit/core';

import { type Clock, systemClock } from '../../src/clock.js';
import type { Logger } from '../../src/logger.js';
import { isProcessAlive } from '../../src/runtime/process-tree.js';
import type { RuntimeLimits, RuntimeNotice, ToolCallContext } from '../../src/runtime/runtime.js';
import { StdioRuntime } from '../../src/runtime/stdio.js';

// The real modules/pyworker, run by a real python3.
const PYWORKER = fileURLToPath(new URL('../../../../modules/pyworker/', import.meta.url));
const PYWORKER_MANIFEST = JSON.parse(fs.readFileSync(path.join(PYWORKER, 'module.json'), 'utf8')) as ModuleManifest;

interface TestCtx extends ToolCallContext {
  progressCalls: Array<[string, number | undefined]>;
  extendCalls: number[];
}

function makeCtx(timeout_ms = 15_000): TestCtx {
  const id = ulid();
  const ctx: TestCtx = {
    call_id: id,
    request_id: id,
    correlation_id: id,
    session_id: 's1',
    workflow_id: 'w1',
    lease_id: `lease-${id}`,
    deadline: Date.now() + timeout_ms,
    source: { kind: 'system', id: 'test', roles: ['admin'] },
    get signal() {
      return new AbortController().signal;
    },
    progressCalls: [],
    extendCalls: [],
    extendLease(ttl) {
      ctx.extendCalls.push(ttl);
    },
    progress(message, fraction) {
      ctx.progressCalls.push([message, fraction]);
    },
    call: () => Promise.reject(new Error('no nested calls in this test')),
  };
  return ctx;
}

interface LogEntry {
  level: string;
  obj: object | string;
  msg?: string;
}

function captureLogger(entries: LogEntry[]): Logger {
  const at =
    (level: string) =>
    (obj: object | string, msg?: string): void => {
      entries.push({ level, obj, msg });
    };
  const logger: Logger = {
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    child: () => logger,
  };
  return logger;
}

async function errorOf(p: Promise<unknown>): Promise<{ code: string; message: string; details?: unknown }> {
  try {
    await p;
  } catch (e) {
    return e as { code: string; message: string; details?: unknown };
  }
  throw new Error('expected a rejection');
}

const until = (cond: () => boolean, what: string): Promise<void> => waitUntil(what, cond, 10_000, 20);

/** The real clock, keeping the timers of `ms` it set and did not clear or fire yet (`armed`). */
function timersOf(ms: number): { clock: Clock; seen: { set: number; armed: Set<unknown> } } {
  const seen = { set: 0, armed: new Set<unknown>() };
  const clock: Clock = {
    ...systemClock,
    setTimeout(fn, after) {
      if (after !== ms) return systemClock.setTimeout(fn, after);
      seen.set++;
      const t = systemClock.setTimeout(() => {
        seen.armed.delete(t);
        fn();
      }, after);
      seen.armed.add(t);
      return t;
    },
    clearTimeout(h) {
      seen.armed.delete(h);
      systemClock.clearTimeout(h);
    },
  };
  return { clock, seen };
}

interface Harness {
  rt: StdioRuntime;
  notices: RuntimeNotice[];
  logs: LogEntry[];
}

const runtimes: StdioRuntime[] = [];
const pids: number[] = [];

function harness(
  opts: {
    limits?: RuntimeLimits;
    baseEnv?: Record<string, string | undefined>;
    manifest?: ModuleManifest;
    clock?: Clock;
  } = {},
): Harness {
  const notices: RuntimeNotice[] = [];
  const logs: LogEntry[] = [];
  const rt = new StdioRuntime({
    manifest: opts.manifest ?? PYWORKER_MANIFEST,
    baseDir: PYWORKER,
    logger: captureLogger(logs),
    onNotice: (n) => notices.push(n),
    baseEnv: opts.baseEnv,
    limits: { restart_backoff_ms: [20, 200], ...opts.limits },
    clock: opts.clock,
  });
  runtimes.push(rt);
  return { rt, notices, logs };
}

async function started(h: Harness): Promise<number> {
  await h.rt.start();
  const pid = h.rt.stats().pid;
  if (pid === undefined) throw new Error('no pid after start');
  pids.push(pid);
  return pid;
}

afterEach(async () => {
  await Promise.all(runtimes.splice(0).map((r) => r.close()));
  for (const pid of pids.splice(0)) await until(() => !isProcessAlive(pid), `pid ${pid} to exit`);
});

describe('StdioRuntime against modules/pyworker', () => {
  it('has a valid manifest', () => {
    expect(() => assertManifest(PYWORKER_MANIFEST)).not.toThrow();
  });

  it('round-trips an echo call and logs the module stderr', async () => {
    const h = harness();
    await started(h);
    expect(h.rt.type).toBe('stdio');
    expect(await h.rt.invoke('echo', { text: 'hi', n: [1, 2] }, makeCtx())).toEqual({ text: 'hi', n: [1, 2] });
    const many = await Promise.all(Array.from({ length: 50 }, (_, i) => h.rt.invoke('echo', { i }, makeCtx())));
    expect(many).toEqual(Array.from({ length: 50 }, (_, i) => ({ i })));
    expect(h.rt.stats()).toMatchObject({ garbage_lines: 0, restarts: 0, inflight: 0 });
    await until(
      () =>
        h.logs.some((l) => l.level === 'info' && typeof l.msg === 'string' && l.msg.startsWith('pyworker: started')),
      'the stderr line in the log',
    );
  });

  it('passes registered error codes through and wraps the module’s own codes', async () => {
    const h = harness();
    await started(h);
    const invalid = await errorOf(h.rt.invoke('fail', { message: 'nope' }, makeCtx()));
    expect({ code: invalid.code, message: invalid.message }).toEqual({ code: 'E_INVALID_ARGS', message: 'nope' });
    const own = await errorOf(h.rt.invoke('fail', { code: 'E_PY_SPECIFIC', message: 'custom' }, makeCtx()));
    expect({ code: own.code, message: own.message, details: own.details }).toEqual({
      code: 'E_MODULE_ERROR',
      message: 'custom',
      details: { module_code: 'E_PY_SPECIFIC' },
    });
    expect((await errorOf(h.rt.invoke('no_such_tool', {}, makeCtx()))).code).toBe('E_NO_TARGET');
  });

  it('counts garbage lines (not JSON, too long, bad shape, unknown id) without failing', async () => {
    const h = harness({ limits: { max_line_bytes: 1024 } });
    await started(h);
    expect(await h.rt.invoke('garbage', { bytes: 100_000 }, makeCtx())).toEqual({ ok: true });
    expect(h.rt.stats().garbage_lines).toBe(4);
    expect(h.notices.filter((n) => n.type === 'garbage').map((n) => n.data?.reason)).toEqual([
      'not JSON',
      'line longer than 1024 bytes discarded',
      'unknown line type',
      'result for an unknown id',
    ]);
    expect(h.notices.find((n) => n.data?.reason === 'line longer than 1024 bytes discarded')?.data?.bytes).toBe(
      100_000,
    );
    expect(h.logs.filter((l) => l.level === 'warn' && l.msg === 'garbage line from module')).toHaveLength(4);
    expect(await h.rt.invoke('echo', { still: 'alive' }, makeCtx())).toEqual({ still: 'alive' });
  });

  it('discards a line over the default 1 MiB limit', async () => {
    const h = harness();
    await started(h);
    expect(await h.rt.invoke('garbage', {}, makeCtx())).toEqual({ ok: true });
    expect(h.rt.stats().garbage_lines).toBe(4);
  });

  it('fails in-flight calls with E_MODULE_CRASHED on a crash, then restarts and serves again', async () => {
    const h = harness();
    const pid = await started(h);
    const sleeping = errorOf(h.rt.invoke('sleep', { ms: 30_000 }, makeCtx()));
    const crash = await errorOf(h.rt.invoke('crash', { code: 7 }, makeCtx()));
    expect({ code: crash.code, details: crash.details }).toEqual({
      code: 'E_MODULE_CRASHED',
      details: { exit_code: 7, signal: null },
    });
    expect((await sleeping).code).toBe('E_MODULE_CRASHED');
    // The next call waits for the restart instead of failing.
    expect(await h.rt.invoke('echo', { after: 'crash' }, makeCtx())).toEqual({ after: 'crash' });
    const stats = h.rt.stats();
    expect(stats.restarts).toBe(1);
    expect(stats.pid).not.toBe(pid);
    pids.push(stats.pid as number);
    expect(h.notices.filter((n) => n.type === 'crashed' || n.type === 'restarted').map((n) => n.type)).toEqual([
      'crashed',
      'restarted',
    ]);
    expect(h.notices.find((n) => n.type === 'crashed')?.data).toMatchObject({ exit_code: 7, signal: null, pid });
  });

  it('bounds the wait for a restart by the call deadline (E_TIMEOUT)', async () => {
    const h = harness({ limits: { restart_backoff_ms: [60_000, 60_000] } });
    await started(h);
    expect((await errorOf(h.rt.invoke('crash', {}, makeCtx()))).code).toBe('E_MODULE_CRASHED');
    expect(await h.rt.health(1000)).toEqual({ ok: false, detail: 'restarting' });
    expect((await errorOf(h.rt.invoke('echo', {}, makeCtx(100)))).code).toBe('E_TIMEOUT');
    const waiting = errorOf(h.rt.invoke('echo', {}, makeCtx(30_000)));
    await h.rt.close();
    expect((await waiting).code).toBe('E_PROVIDER_CLOSED');
  });

  it('kills the process group when a cancelled call is not answered within the grace', async () => {
    const h = harness({ limits: { cancel_grace_ms: 200 } });
    const pid = await started(h);
    const ctx = makeCtx();
    const stubborn = errorOf(h.rt.invoke('ignore_cancel_sleep', { ms: 60_000 }, ctx));
    const bystander = errorOf(h.rt.invoke('sleep', { ms: 60_000 }, makeCtx()));
    await h.rt.invoke('echo', {}, makeCtx()); // both calls have reached the worker
    h.rt.cancel(ctx.call_id, 'lease expired');
    expect((await bystander).code).toBe('E_MODULE_CRASHED');
    expect((await stubborn).code).toBe('E_MODULE_CRASHED');
    await until(() => !isProcessAlive(pid), 'the old worker to be gone');
    expect(await h.rt.invoke('echo', { served: 'again' }, makeCtx())).toEqual({ served: 'again' });
    expect(h.rt.stats().restarts).toBe(1);
    pids.push(h.rt.stats().pid as number);
  });

  it('does not kill a module that answers the cancel (sleep answers E_CANCELLED)', async () => {
    const grace = timersOf(250);
    const h = harness({ limits: { cancel_grace_ms: 250 }, clock: grace.clock });
    const pid = await started(h);
    const ctx = makeCtx();
    const sleeping = errorOf(h.rt.invoke('sleep', { ms: 60_000 }, ctx));
    await h.rt.invoke('echo', {}, makeCtx());
    h.rt.cancel(ctx.call_id, 'user');
    const err = await sleeping;
    expect({ code: err.code, details: err.details }).toEqual({
      code: 'E_MODULE_ERROR',
      details: { module_code: 'E_CANCELLED' },
    });
    // the answer disarmed the grace timer: nothing is left that could kill the group
    expect({ set: grace.seen.set, armed: grace.seen.armed.size }).toEqual({ set: 1, armed: 0 });
    expect(h.rt.stats()).toMatchObject({ pid, restarts: 0, inflight: 0 });
    expect(h.notices.filter((n) => n.type === 'crashed')).toEqual([]);
  });

  it('answers health by ping/pong', async () => {
    const h = harness();
    expect(await h.rt.health(1000)).toEqual({ ok: false, detail: 'idle' });
    await started(h);
    expect(await h.rt.health(5000)).toEqual({ ok: true });
    await h.rt.close();
    expect(await h.rt.health(1000)).toEqual({ ok: false, detail: 'closed' });
  });

  it('forwards lease.extend and progress lines to the call context', async () => {
    const h = harness();
    await started(h);
    const ctx = makeCtx();
    expect(await h.rt.invoke('heartbeat_sleep', { ms: 300, every_ms: 100, ttl_ms: 5000 }, ctx)).toEqual({
      slept_ms: 300,
    });
    expect(ctx.extendCalls.length).toBeGreaterThanOrEqual(2);
    expect(new Set(ctx.extendCalls)).toEqual(new Set([5000]));
    expect(ctx.progressCalls.length).toBe(ctx.extendCalls.length);
    for (const [message, fraction] of ctx.progressCalls) {
      expect(message).toMatch(/^slept \d+ of 300 ms$/);
      expect(fraction).toBeGreaterThan(0);
      expect(fraction).toBeLessThanOrEqual(1);
    }
  });

  it('closes: in-flight calls reject E_PROVIDER_CLOSED, later calls too, the child exits', async () => {
    const h = harness();
    const pid = await started(h);
    const inflight = errorOf(h.rt.invoke('sleep', { ms: 60_000 }, makeCtx()));
    const a = h.rt.close();
    expect(h.rt.close()).toBe(a);
    await a;
    expect((await inflight).code).toBe('E_PROVIDER_CLOSED');
    expect((await errorOf(h.rt.invoke('echo', {}, makeCtx()))).code).toBe('E_PROVIDER_CLOSED');
    expect((await errorOf(h.rt.start())).code).toBe('E_PROVIDER_CLOSED');
    await until(() => !isProcessAlive(pid), 'the worker to exit');
    expect(h.notices.filter((n) => n.type === 'crashed')).toEqual([]);
  });

  it('gives the child a minimal environment plus the manifest env, never the daemon secrets', async () => {
    // The real interpreter, not a version-manager shim (a shim script adds variables of its own).
    const python = execFileSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).trim();
    const manifest: ModuleManifest = {
      ...PYWORKER_MANIFEST,
      runtime: { type: 'stdio', command: [python, 'main.py'], env: { PYWORKER_MODE: 'test' } },
    };
    const baseEnv = { ...process.env, FINGER_SECRET_TEST: 'hunter2', FINGER_TOKEN: 'tok' };
    const h = harness({ manifest, baseEnv });
    await started(h);
    const out = (await h.rt.invoke('env', { names: ['PYWORKER_MODE', 'FINGER_SECRET_TEST'] }, makeCtx())) as {
      names: string[];
      values: Record<string, string | null>;
    };
    expect(out.values).toEqual({ PYWORKER_MODE: 'test', FINGER_SECRET_TEST: null });
    expect(out.names).toContain('PATH');
    expect(out.names).not.toContain('FINGER_SECRET_TEST');
    expect(out.names).not.toContain('FINGER_TOKEN');
    expect(out.names).not.toContain('VITEST');
    // Python itself may add LC_CTYPE (PEP 538 locale coercion); nothing else beyond the allowed set.
    const allowed = [
      'PATH',
      'HOME',
      'LANG',
      'LC_ALL',
      'TMPDIR',
      'TERM',
      'USER',
      'LOGNAME',
      'SHELL',
      'PYWORKER_MODE',
      'LC_CTYPE',
    ];
    expect(out.names.filter((n) => !allowed.includes(n))).toEqual([]);
  });

  it('reads only the minimal names from process.env when no baseEnv is given', async () => {
    process.env.FINGER_SECRET_TEST = 'from-process-env';
    try {
      const h = harness();
      await started(h);
      const out = (await h.rt.invoke('env', {}, makeCtx())) as { names: string[] };
      expect(out.names).not.toContain('FINGER_SECRET_TEST');
    } finally {
      delete process.env.FINGER_SECRET_TEST;
    }
  });

  it('refuses to start a command that does not exist, and answers calls before start with E_MODULE_UNHEALTHY', async () => {
    const manifest: ModuleManifest = {
      ...PYWORKER_MANIFEST,
      runtime: { type: 'stdio', command: ['finger-no-such-command-xyz'] },
    };
    const h = harness({ manifest });
    expect((await errorOf(h.rt.invoke('echo', {}, makeCtx()))).code).toBe('E_MODULE_UNHEALTHY');
    expect((await errorOf(h.rt.start())).code).toBe('E_MODULE_UNHEALTHY');
  });

  it('waits for a first pong when start_timeout_ms is set', async () => {
    const h = harness({ limits: { start_timeout_ms: 10_000 } });
    await started(h);
    expect(await h.rt.invoke('echo', 'x', makeCtx())).toBe('x');
  });
});
