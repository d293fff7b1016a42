import { type ChildProcess, spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

import { isRunning, killSandbox, type ProcRef, sandboxInit, signalSandboxMembers, waitGone } from '@finger/hub';
import { FingerError } from '@finger/protocol';

import { OutputCap } from './output-cap.js';
import { groupAlive, signalGroup } from './process-group.js';

/** One child process to run. */
export interface RunSpec {
  file: string;
  args: string[];
  /** A real, checked directory. */
  cwd: string;
  /** The complete (already scrubbed) environment. */
  env: Record<string, string>;
  /** Written to the child's stdin, which is then closed; without it stdin is /dev/null. */
  stdin?: string;
  timeout_ms: number;
  max_output_bytes: number;
  /** SIGTERM → this many ms → SIGKILL, always to the whole process group. */
  kill_grace_ms: number;
  /** Aborting it (call cancelled) kills the group. */
  signal?: AbortSignal;
  /** Called every `heartbeat_ms` while the child runs (lease extension). */
  heartbeat?: () => void;
  heartbeat_ms?: number;
  /**
   * `file` is bubblewrap and `args` its sandbox (see sandbox.ts of @finger/hub): kills go through
   * the sandbox's PID namespace, so every descendant dies, also those that left the group.
   */
  sandboxed?: boolean;
}

/** How a run ended. `timed_out` and `cancelled` are never both true. */
export interface RunOutcome {
  /** The leader's pid, which is also the process group id; null when nothing was started. */
  pid: number | null;
  exit_code: number | null;
  signal: string | null;
  timed_out: boolean;
  cancelled: boolean;
  stdout: string;
  stderr: string;
  stdout_bytes: number;
  stderr_bytes: number;
  truncated: { stdout: boolean; stderr: boolean };
  duration_ms: number;
}

/** A started run: its outcome, and a way to stop it (module close). */
export interface RunningProcess {
  readonly done: Promise<RunOutcome>;
  /** Kills the whole group (SIGTERM, grace, SIGKILL); the outcome still arrives on `done`. */
  terminate(): void;
  /** Kill switch: SIGKILLs the whole tree at once; `done` resolves once nothing of it runs (bounded). */
  kill(): void;
}

/** After SIGKILL, how long pipes held by processes that left the group are waited for. */
const DRAIN_MS = 1000;
/** After SIGKILL, how long the group is polled until no live member is left. */
const REAP_WAIT_MS = 2000;
/** After SIGKILL, how long a sandbox's PID namespace is awaited until it is empty. */
const SANDBOX_GONE_MS = 5000;

/** What a kill reaches: the child's process group, or its sandbox's whole PID namespace. */
interface ProcessTree {
  /** SIGTERM to everything; false when nothing is left to signal. */
  term(): boolean;
  /** SIGKILL to everything. */
  kill(): void;
  /** Something of the tree still runs. */
  alive(): boolean;
  /** Resolves once nothing of the tree runs (bounded). */
  gone(): Promise<void>;
}

function groupTree(pgid: number): ProcessTree {
  return {
    term: () => signalGroup(pgid, 'SIGTERM'),
    kill: () => void signalGroup(pgid, 'SIGKILL'),
    alive: () => groupAlive(pgid),
    gone: async () => {
      const end = Date.now() + REAP_WAIT_MS;
      while (groupAlive(pgid) && Date.now() < end) await sleep(20);
    },
  };
}

/**
 * The tree of a sandboxed child (`pid` is bubblewrap's). Its init is looked up at the first kill,
 * while bubblewrap still runs (callers never kill after the child exited: the namespace is gone then).
 */
function sandboxTree(pid: number): ProcessTree {
  let init: ProcRef | undefined;
  const initOf = () => (init ??= sandboxInit(pid));
  return {
    term: () => {
      const i = initOf();
      // nothing inside but init (or no init yet): SIGTERM to bubblewrap, which takes the namespace along
      if (i !== undefined && signalSandboxMembers(i, 'SIGTERM') > 0) return true;
      return signalGroup(pid, 'SIGTERM');
    },
    kill: () => void killSandbox(pid, initOf()),
    alive: () => groupAlive(pid) || (init !== undefined && isRunning(init)),
    gone: async () => {
      const end = Date.now() + REAP_WAIT_MS;
      while (groupAlive(pid) && Date.now() < end) await sleep(20);
      if (init !== undefined) await waitGone([init], SANDBOX_GONE_MS);
    },
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function spawnError(file: string, e: NodeJS.ErrnoException): FingerError {
  if (e.code === 'ENOENT') {
    return new FingerError('E_NOT_FOUND', `cannot start "${file}": no such program`, { program: file, errno: e.code });
  }
  return new FingerError('E_MODULE_ERROR', `cannot start "${file}": ${e.message}`, { program: file, errno: e.code });
}

/**
 * Spawns `spec.file` as the leader of a new process group (`detached: true`, so pgid = pid) and
 * collects its capped output. On timeout or abort the whole group gets SIGTERM, then SIGKILL after
 * the grace; when the leader exits on its own, whatever it left running in its group is killed the
 * same way, so no process outlives its call (except one that left the group with setsid(2)).
 * `done` resolves once the leader has exited, the pipes are closed, and — when something was
 * killed — no live member of the group is left (bounded). It rejects only when the program cannot
 * be started (E_NOT_FOUND, E_MODULE_ERROR).
 */
export function startProcess(spec: RunSpec): RunningProcess {
  const t0 = performance.now();
  const out = new OutputCap(spec.max_output_bytes);
  const err = new OutputCap(spec.max_output_bytes);
  const outcome = (
    pid: number | null,
    exit_code: number | null,
    signal: string | null,
    flags: { timed_out: boolean; cancelled: boolean },
  ): RunOutcome => {
    const o = out.finish();
    const e = err.finish();
    return {
      pid,
      exit_code,
      signal,
      ...flags,
      stdout: o.text,
      stderr: e.text,
      stdout_bytes: o.bytes,
      stderr_bytes: e.bytes,
      truncated: { stdout: o.truncated, stderr: e.truncated },
      duration_ms: Math.round(performance.now() - t0),
    };
  };

  if (spec.signal?.aborted) {
    return {
      done: Promise.resolve(outcome(null, null, null, { timed_out: false, cancelled: true })),
      terminate() {},
      kill() {},
    };
  }

  let child: ChildProcess;
  try {
    child = spawn(spec.file, spec.args, {
      cwd: spec.cwd,
      env: spec.env,
      detached: true,
      stdio: [spec.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
  } catch (e) {
    // Synchronous failures are argument problems (a NUL byte, a bad type).
    return {
      done: Promise.reject(
        new FingerError('E_INVALID_ARGS', `cannot start "${spec.file}": ${(e as Error).message}`, {
          issues: [{ path: '$', message: (e as Error).message }],
        }),
      ),
      terminate() {},
      kill() {},
    };
  }

  let timedOut = false;
  let cancelled = false;
  let exited = false;
  let exitCode: number | null = null;
  let exitSignal: string | null = null;
  let killing = false;
  let killSent = false;
  let settled = false;
  let timeoutTimer: NodeJS.Timeout | undefined;
  let graceTimer: NodeJS.Timeout | undefined;
  let drainTimer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let onKillSent: (() => void) | undefined;
  const killSentP = new Promise<void>((r) => (onKillSent = r));
  const pgid = child.pid;
  const tree = pgid === undefined ? undefined : spec.sandboxed === true ? sandboxTree(pgid) : groupTree(pgid);

  const sendKill = () => {
    killSent = true;
    tree?.kill();
    onKillSent?.();
    drainTimer = setTimeout(() => {
      // Pipes still open after SIGKILL: held by a process outside the group. Stop waiting for them.
      child.stdout?.destroy();
      child.stderr?.destroy();
    }, DRAIN_MS);
  };
  const kill = () => {
    if (killing || tree === undefined) return;
    if (!tree.term()) return; // the tree is already gone
    killing = true;
    graceTimer = setTimeout(sendKill, spec.kill_grace_ms);
  };
  const onAbort = () => {
    if (exited || timedOut) return;
    cancelled = true;
    kill();
  };

  const done = new Promise<RunOutcome>((resolve, reject) => {
    const cleanup = () => {
      clearTimeout(timeoutTimer);
      clearTimeout(graceTimer);
      clearTimeout(drainTimer);
      clearInterval(heartbeat);
      spec.signal?.removeEventListener('abort', onAbort);
    };
    child.on('error', (e: NodeJS.ErrnoException) => {
      // Only a failed spawn matters here; kill() errors are handled in signalGroup.
      if (child.pid !== undefined || settled) return;
      settled = true;
      cleanup();
      reject(spawnError(spec.file, e));
    });
    child.stdout!.on('data', (c: Buffer) => out.push(c));
    child.stderr!.on('data', (c: Buffer) => err.push(c));
    if (spec.stdin !== undefined && child.stdin) {
      child.stdin.on('error', () => {}); // EPIPE when the child does not read its stdin
      child.stdin.end(spec.stdin);
    }
    child.on('exit', (code, sig) => {
      exited = true;
      exitCode = code;
      exitSignal = sig;
      clearTimeout(timeoutTimer);
      clearInterval(heartbeat);
      // leftovers of the group, if any (a sandbox's PID namespace died with its init, before bubblewrap exited)
      if (spec.sandboxed !== true) kill();
    });
    child.on('close', () => {
      if (settled) return;
      settled = true;
      void (async () => {
        if (killing && tree !== undefined && tree.alive()) {
          if (!killSent) await killSentP;
          await tree.gone();
        }
        cleanup();
        resolve(outcome(pgid ?? null, exitCode, exitSignal, { timed_out: timedOut, cancelled }));
      })();
    });
  });

  if (pgid !== undefined) {
    timeoutTimer = setTimeout(() => {
      if (exited || cancelled) return;
      timedOut = true;
      kill();
    }, spec.timeout_ms);
    if (spec.heartbeat) heartbeat = setInterval(spec.heartbeat, spec.heartbeat_ms ?? 5000);
    spec.signal?.addEventListener('abort', onAbort, { once: true });
  }
  return {
    done,
    terminate: () => {
      if (!exited) kill();
    },
    kill: () => {
      if (exited || tree === undefined) return;
      cancelled = !timedOut;
      killing = true;
      clearTimeout(graceTimer);
      sendKill();
    },
  };
}
