import fs from 'node:fs/promises';
import path from 'node:path';

import type { ToolCallContext } from '@finger/module-sdk';
import { FingerError, isFingerError, ulid } from '@finger/protocol';

import { parseRunCodeParams } from './args.js';
import { buildChildEnv } from './env-scrub.js';
import {
  addLeaseHeartbeat,
  callRoots,
  effectiveTimeout,
  type ExecResult,
  execResult,
  sandboxSpec,
  type ShellDeps,
  timeoutError,
} from './exec.js';
import { withGitHardening } from './git-hardening.js';
import type { RunSpec } from './run-process.js';
import type { RunCodeSettings } from './settings.js';
import { isInside, realRoots } from './workspace.js';

/** A file a snippet wrote, relative to its run directory (POSIX separators). */
export interface WrittenFile {
  path: string;
  bytes: number;
}

/** Result of `shell.run_code`. */
export interface RunCodeResult extends ExecResult {
  language: 'python' | 'node';
  /** Absolute path of the run directory (kept for follow-up reads; pruned after `keep_runs`). */
  dir: string;
  /** Regular files under the run directory except the snippet itself, sorted by path. */
  files: WrittenFile[];
  /** True when more than `max_files_listed` files were written. */
  files_truncated: boolean;
}

const MIB = 1024 * 1024;
const RUN_DIR_NAME = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const ENTRY = { python: 'main.py', node: 'main.mjs' } as const;

/** The `prlimit` invocation limiting one snippet, followed by the interpreter command. */
export function limitedCommand(lang: 'python' | 'node', rc: RunCodeSettings): string[] {
  const as = (lang === 'node' ? rc.node_address_space_mib : rc.address_space_mib) * MIB;
  const interp =
    lang === 'python'
      ? [rc.python, '-B', '-u', ENTRY.python]
      : [rc.node, `--max-old-space-size=${rc.node_heap_mib}`, ENTRY.node];
  return [
    rc.prlimit,
    `--cpu=${rc.cpu_seconds}:${rc.cpu_seconds + 1}`,
    `--as=${as}`,
    `--nproc=${rc.max_processes}`,
    `--fsize=${rc.max_file_bytes}`,
    '--core=0',
    '--',
    ...interp,
  ];
}

/** Removes the oldest run directories so that at most `keep - 1` remain before a new run. */
async function pruneRuns(base: string, keep: number): Promise<void> {
  const names = (await fs.readdir(base)).filter((n) => RUN_DIR_NAME.test(n)).sort();
  const excess = names.length - (keep - 1);
  for (const n of names.slice(0, Math.max(0, excess))) {
    await fs.rm(path.join(base, n), { recursive: true, force: true });
  }
}

/** Lists the regular files below `dir` (symlinks are neither followed nor listed). */
async function listFiles(dir: string, skip: string, max: number): Promise<{ files: WrittenFile[]; more: boolean }> {
  const files: WrittenFile[] = [];
  let more = false;
  const walk = async (rel: string): Promise<void> => {
    const entries = await fs.readdir(path.join(dir, rel), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) await walk(r);
      else if (e.isFile() && r !== skip) {
        if (files.length >= max) {
          more = true;
          return;
        }
        files.push({ path: r, bytes: (await fs.lstat(path.join(dir, r))).size });
      }
    }
  };
  await walk('');
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { files, more };
}

/** Makes `<first root>/.finger/run/<ulid>/`, refusing a `.finger` that leads outside the root. */
async function makeRunDir(roots: readonly string[], keep: number): Promise<string> {
  const root = (await realRoots(roots))[0]!;
  const base = path.join(root, '.finger', 'run');
  await fs.mkdir(base, { recursive: true });
  const realBase = await fs.realpath(base);
  if (!isInside(realBase, root)) {
    throw new FingerError('E_FORBIDDEN', `${base} resolves to ${realBase}, outside the workspace root`, {
      resolved: realBase,
      root,
    });
  }
  await pruneRuns(realBase, keep);
  const dir = path.join(realBase, ulid());
  await fs.mkdir(dir);
  return dir;
}

/**
 * `shell.run_code`: writes the snippet to a fresh run directory under the first workspace root
 * and runs it there (`python3 -B -u main.py` / `node --max-old-space-size=N main.mjs`) under
 * `prlimit` (CPU seconds, address space, processes, file size), with the scrubbed environment,
 * capped output and the same timeout and group kill as `shell.exec`. Resolves with the outcome
 * and the files the snippet wrote (also when it failed or hit a limit: `signal` is then e.g.
 * `SIGXCPU` or `SIGKILL`); rejects E_TIMEOUT past the wall-clock timeout, E_INVALID_ARGS for bad
 * arguments, E_MODULE_ERROR when prlimit is not installed.
 */
export function createRunCode(deps: ShellDeps): (args: unknown, ctx?: ToolCallContext) => Promise<RunCodeResult> {
  const { settings } = deps;
  const rc = settings.run_code;
  return async (args, ctx) => {
    const p = parseRunCodeParams(args, settings.max_timeout_ms);
    const env = withGitHardening(buildChildEnv(deps.baseEnv(), deps.deny, undefined));
    const dir = await makeRunDir(callRoots(deps, ctx), rc.keep_runs);
    const entry = ENTRY[p.language];
    await fs.writeFile(path.join(dir, entry), p.code);
    const timeout_ms = effectiveTimeout(p.timeout_ms ?? settings.default_timeout_ms, ctx);
    const [file, ...rest] = limitedCommand(p.language, rc);
    const spec: RunSpec = {
      file: file!,
      args: rest,
      cwd: dir,
      env,
      timeout_ms,
      max_output_bytes: settings.max_output_bytes,
      kill_grace_ms: settings.kill_grace_ms,
    };
    if (p.stdin !== undefined) spec.stdin = p.stdin;
    if (ctx !== undefined) spec.signal = ctx.signal;
    addLeaseHeartbeat(spec, ctx, settings.lease_heartbeat_ms);
    let outcome;
    try {
      sandboxSpec(deps, spec, callRoots(deps, ctx));
      outcome = await deps.run(spec);
    } catch (e) {
      if (isFingerError(e) && e.code === 'E_NOT_FOUND') {
        throw new FingerError(
          'E_MODULE_ERROR',
          `run_code needs "${rc.prlimit}" (util-linux) to limit snippets, and it is not installed; ` +
            'install util-linux or set modules.settings.shell.run_code.prlimit to its path',
          { program: rc.prlimit },
        );
      }
      throw e;
    }
    const listed = await listFiles(dir, entry, rc.max_files_listed);
    const result: RunCodeResult = {
      language: p.language,
      dir,
      ...execResult(outcome),
      files: listed.files,
      files_truncated: listed.more,
    };
    if (result.timed_out) throw timeoutError(`${p.language} snippet`, timeout_ms, { ...result });
    return result;
  };
}
