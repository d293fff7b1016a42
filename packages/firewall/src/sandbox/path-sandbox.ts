// The PathSandbox (layer 4): every path argument of a call — and every file a shell command's
// redirections write — is resolved to its real path (symlinks, `..`, nearest existing parent) and
// held against `readable_paths` / `writable_paths`. Outside: a read is CONFIRM (held, never
// allowed), a write APPROVE (or DENY by policy). A written file with more than one hard link is
// at least CONFIRM: its other names may lie outside the roots. A shell command's path words
// (the RiskAssessor's `reads`) are held against the read roots as `fs.read`'s `path` is. Any
// path in finger's own home or a guarded file is DENY for an AI-initiated call (finger-places.ts).

import path from 'node:path';

import type { CommandModel } from '@finger/shell-risk';
import {
  FORBIDDEN_REASON,
  type KnownHomes,
  knownHomes,
  sensitiveWriteTarget,
  startupFile,
  TOO_MANY_WORDS,
} from '@finger/shell-risk';

import type { Level, MatchedRule, ToolCallFacts } from '../engine/evaluation.js';
import { stricter } from '../engine/evaluation.js';
import type { EffectivePolicy } from '../policy/evaluate-policy.js';
import { expandHome } from '../policy/policy-globs.js';
import { FingerPlaces } from './finger-places.js';
import { isPathArg, isWriteTool, pathValues } from './path-args.js';
import { isInsideRoot, nodeSandboxFs, resolveReal, type SandboxFs } from './real-path.js';

/** How a sandbox is built (the daemon: workspace roots from config, `home` = FINGER_HOME). */
export interface PathSandboxOptions {
  /** The workspace roots; relative path arguments resolve against the first. */
  workspaceRoots: readonly string[];
  /**
   * FINGER_HOME (never a root: the daemon refuses workspace roots inside it). Every path under it
   * (and under `~/.finger`) is DENY for an AI-initiated call, whatever the roots say.
   */
  home?: string;
  /** Files outside the home no agent may touch (the admin token file kept elsewhere): DENY as the home is. */
  guarded_paths?: readonly string[];
  /** The user's home directory, for `~`. */
  homeDir: string;
  fs?: SandboxFs;
  /**
   * A principal's own extra root (a supervised task's workspace, known to the daemon only): it
   * joins the default roots for that principal's calls — first, so relative paths resolve in it —
   * and never for anyone else's. It does not widen explicit `readable_paths`/`writable_paths`.
   */
  workspaceFor?: (principal: Principal) => string | undefined;
}

/** The caller of a call (the hub sets it; never the payload). */
type Principal = ToolCallFacts['principal'];

/** One path a call touches. */
export interface ResolvedPath {
  /** Argument name, or `redirect` for a file a shell redirection writes. */
  arg: string;
  input: string;
  /** Real path (lexical absolute form when it could not be resolved). */
  path: string;
  exists: boolean;
  write: boolean;
  /** Set when it cannot be resolved (dangling symlink, loop, a value known only at run time…). */
  problem?: string;
  /** Hard-link count of an existing regular file that is written. */
  nlink?: number;
}

/** Every path of one call. */
export interface ResolvedPaths {
  list: ResolvedPath[];
  /** Real paths per argument name, for the policy's path globs. */
  byArg: Map<string, string[]>;
}

/** The sandbox layer's verdict. */
export interface SandboxVerdict {
  level: Level;
  matched_rules: MatchedRule[];
  reasons: string[];
}

/** What resolving needs of a call. */
export interface SandboxCall {
  tool_id: string;
  args: unknown;
  tool: ToolCallFacts['tool'];
  /** The tool takes a shell command: `cwd` is read, redirection targets are written. */
  shell: boolean;
  model?: CommandModel;
  /** The command's path words (RiskAssessment.reads): held against the read roots. */
  reads?: readonly string[];
  /** Whose call it is: a principal with its own root (see `workspaceFor`) resolves relative paths there. */
  principal?: Principal;
}

const NULL_SINK = /^\/dev\/(?:null|stdout|stderr|tty|fd\/\d+)$/;
const CHANGES_DIR = new Set(['cd', 'pushd', 'popd']);
const EMPTY = Object.freeze({ list: Object.freeze([]), byArg: new Map() }) as unknown as ResolvedPaths;

/** Holds path arguments against the policy's roots; one per process, shared by every call. */
export class PathSandbox {
  readonly #fs: SandboxFs;
  readonly #homeDir: string;
  readonly #roots: readonly string[];
  readonly #workspaceFor: ((principal: Principal) => string | undefined) | undefined;
  readonly #realCache = new WeakMap<readonly string[], string[]>();
  readonly #finger: FingerPlaces;
  /** finger's home and the user's, as the RiskAssessor knows them: what a write there touches (sensitiveWriteTarget) */
  readonly #homes: KnownHomes;
  #defaultReal: string[] | undefined;

  constructor(options: PathSandboxOptions) {
    this.#fs = options.fs ?? nodeSandboxFs;
    this.#homeDir = options.homeDir;
    const roots = options.workspaceRoots.map((r) => path.resolve(expandHome(r, options.homeDir)));
    this.#roots = Object.freeze(roots);
    this.#workspaceFor = options.workspaceFor;
    const homes = [path.join(options.homeDir, '.finger')];
    if (options.home !== undefined) homes.unshift(path.resolve(options.home));
    this.#finger = new FingerPlaces(this.#fs, homes, options.guarded_paths ?? [], roots);
    this.#homes = knownHomes({
      ...(options.home !== undefined ? { finger_home: options.home } : {}),
      home_dir: options.homeDir,
    });
  }

  /** The principal's own root, if the daemon gave it one (a real path: the daemon resolved it when the task started). */
  workspaceOf(principal: Principal | undefined): string | undefined {
    if (principal === undefined || this.#workspaceFor === undefined) return undefined;
    const ws = this.#workspaceFor(principal);
    return ws === undefined ? undefined : path.resolve(ws);
  }

  /** The directory a principal's relative paths resolve against: its own root, else {@link base}. */
  baseFor(principal: Principal | undefined): string | undefined {
    return this.workspaceOf(principal) ?? this.base;
  }

  /**
   * The directory a shell command of this call starts in, as the shell tool picks it: the `cwd`
   * argument (real path; relative to the caller's first root), else that root. Null when the
   * `cwd` argument cannot be resolved (the sandbox holds such a call anyway); undefined when
   * there is no root at all.
   */
  commandCwd(args: unknown, principal?: Principal): string | null | undefined {
    const base = this.baseFor(principal);
    const cwd = typeof args === 'object' && args !== null ? (args as Record<string, unknown>).cwd : undefined;
    if (typeof cwd !== 'string') return base;
    const r = this.#resolveOne('cwd', cwd, base, false);
    return r.problem === undefined ? r.path : null;
  }

  /** The default readable and writable roots: the workspace roots. */
  get defaultRoots(): readonly string[] {
    return this.#roots;
  }

  /** The directory relative paths resolve against (the first root), real path. */
  get base(): string | undefined {
    return this.#defaults()[0];
  }

  /** Resolves every path of the call (the sandbox's one I/O: realpath and lstat). */
  resolve(call: SandboxCall): ResolvedPaths {
    const args = call.args;
    const hasArgs = typeof args === 'object' && args !== null && !Array.isArray(args);
    const model = call.model;
    const redirects = call.shell && model !== undefined && model.flags.redirect_write;
    const reads = call.reads ?? [];
    if (!hasArgs && !redirects && reads.length === 0) return EMPTY;
    let out: ResolvedPaths = EMPTY;
    const ensure = (): ResolvedPaths => (out === EMPTY ? (out = { list: [], byArg: new Map() }) : out);
    const base = this.baseFor(call.principal);
    const writes = !call.shell && isWriteTool(call.tool_id, call.tool);
    let cwd = base;
    if (hasArgs) {
      const record = args as Record<string, unknown>;
      for (const key in record) {
        if (!Object.hasOwn(record, key) || !isPathArg(key, call.tool.input_schema)) continue;
        const value = record[key];
        const write = writes && key !== 'cwd';
        const reals: string[] = [];
        for (const v of pathValues(value)) {
          const r = this.#resolveOne(key, v, base, write);
          ensure().list.push(r);
          reals.push(r.path);
          if (key === 'cwd' && r.problem === undefined) cwd = r.path;
        }
        ensure().byArg.set(key, reals);
      }
    }
    if (redirects) {
      const changesDir = model.segments.some((s) => CHANGES_DIR.has(s.program));
      for (const seg of model.segments) {
        for (const r of seg.redirects) {
          if (!r.is_write || NULL_SINK.test(r.target)) continue;
          if (r.dynamic) {
            ensure().list.push({
              arg: 'redirect',
              input: r.target,
              path: r.target,
              exists: false,
              write: true,
              problem: 'a value known only at run time',
            });
            continue;
          }
          const t = expandHome(r.target, this.#homeDir);
          if (!path.isAbsolute(t) && changesDir) {
            ensure().list.push({
              arg: 'redirect',
              input: r.target,
              path: r.target,
              exists: false,
              write: true,
              problem: 'relative to a directory the command changes with cd',
            });
            continue;
          }
          ensure().list.push(this.#resolveOne('redirect', r.target, cwd, true));
        }
      }
    }
    for (const w of reads) {
      if (w === TOO_MANY_WORDS) {
        ensure().list.push({
          arg: 'command',
          input: '…',
          path: '…',
          exists: false,
          write: false,
          problem: 'the command names more paths than are checked one by one',
        });
        continue;
      }
      ensure().list.push(this.#resolveOne('command', w, cwd, false));
    }
    return out;
  }

  /**
   * Checks resolved paths against both layers' roots and defaults; `principal`'s own root (a
   * task's workspace) counts as a default root for its calls only.
   */
  check(paths: ResolvedPaths, policy: EffectivePolicy, principal?: Principal): SandboxVerdict {
    const v: SandboxVerdict = { level: 'AUTO', matched_rules: [], reasons: [] };
    if (paths.list.length === 0) return v;
    const { admin, user } = policy;
    const own = this.workspaceOf(principal);
    const defaults = own === undefined ? this.#defaults() : [own, ...this.#defaults()];
    const aRead = [...(this.#real(admin.readable) ?? defaults), ...(this.#real(admin.writable) ?? defaults)];
    const aWrite = this.#real(admin.writable) ?? defaults;
    const uRead = user.readable === null ? null : [...this.#real(user.readable)!, ...(this.#real(user.writable) ?? [])];
    const uWrite = this.#real(user.writable);
    const outsideRead = stricter(admin.defaults.outside_read ?? 'CONFIRM', user.defaults.outside_read ?? 'CONFIRM');
    const outsideWrite = stricter(admin.defaults.outside_write ?? 'APPROVE', user.defaults.outside_write ?? 'APPROVE');
    const hardLink = stricter(admin.defaults.hard_link_write ?? 'CONFIRM', user.defaults.hard_link_write ?? 'CONFIRM');
    const add = (id: string, level: Level, reason: string): void => {
      v.level = stricter(v.level, level);
      v.matched_rules.push({ source: 'builtin', id, level, reason });
      v.reasons.push(`${level}: ${reason}`);
    };
    const inside = (p: string, roots: readonly string[]): boolean => roots.some((r) => isInsideRoot(p, r));
    const ai = principal?.kind !== 'human';
    for (const p of paths.list) {
      const what =
        p.arg === 'command'
          ? `the command's path word ${JSON.stringify(p.input)}`
          : `${p.write ? 'write to' : 'read of'} ${JSON.stringify(p.input)}${p.arg === 'redirect' ? ' (shell redirection)' : ''}`;
      const finger = ai ? (this.#finger.placeOf(p.path) ?? this.#finger.placeOf(this.#lexical(p.input, own))) : null;
      if (finger !== null) {
        add(
          'sandbox.finger_home',
          'DENY',
          `${FORBIDDEN_REASON}: ${what} is in ${finger === p.path ? 'a guarded file' : `finger's home ${finger}`}${p.path !== p.input ? ` (it resolves to ${p.path})` : ''}`,
        );
        continue;
      }
      if (p.problem !== undefined) {
        add(
          p.write ? 'sandbox.outside_write' : 'sandbox.outside_read',
          p.write ? outsideWrite : outsideRead,
          `${what}: ${p.problem}`,
        );
        continue;
      }
      const via = p.path !== this.#lexical(p.input, own) ? ` (it resolves to ${p.path})` : '';
      // a write tool's start-up file, inside the roots or not, named as the shell's redirection is
      // (a redirection is the RiskAssessor's); the real path and the name written both count
      const startup = p.write && p.arg !== 'redirect' ? this.#startupOf(p.path, this.#lexical(p.input, own)) : null;
      if (startup !== null)
        add(
          'sandbox.sensitive_write',
          'APPROVE',
          `${what} writes the start-up file '${startup.file}' (${startup.why})${via}`,
        );
      if (p.write) {
        if (!inside(p.path, aWrite) || (uWrite !== null && !inside(p.path, uWrite))) {
          add('sandbox.outside_write', outsideWrite, `${what} is outside writable_paths${via}`);
          continue;
        }
        if (p.nlink !== undefined && p.nlink > 1)
          add(
            'sandbox.hard_link',
            hardLink,
            `${what}: the file has ${p.nlink} hard links; the others may lie outside writable_paths`,
          );
        // inside the roots too: a git hook or config, a `.git` file, a shell start-up file,
        // finger's own home — what a shell redirection there is judged dangerous for (the next
        // `git commit` runs a hook); and a HEAD beside a config (a bare git directory: git run in
        // it obeys that config), redirections included
        const sensitive = p.arg === 'redirect' || startup !== null ? null : sensitiveWriteTarget(p.path, this.#homes);
        if (sensitive !== null)
          add(
            'sandbox.sensitive_write',
            'APPROVE',
            `${what} touches ${sensitive}${via}: it runs code or holds settings`,
          );
        else if (this.#makesGitDir(p.path))
          add(
            'sandbox.sensitive_write',
            'APPROVE',
            `${what} puts a HEAD and a config side by side in ${path.dirname(p.path)}${via}: git run there takes it for a git directory and obeys that config`,
          );
      } else if (!inside(p.path, aRead) || (uRead !== null && !inside(p.path, uRead))) {
        const roots = p.arg === 'command' ? ` (${[...new Set(uRead ?? aRead)].join(', ')})` : '';
        add('sandbox.outside_read', outsideRead, `${what} is outside readable_paths${roots}${via}`);
      }
    }
    return v;
  }

  /**
   * The written words of a shell command (shell-risk/src/facts/workspace-confinement.ts) that do not stay in the
   * caller's workspace, one line each: resolved from `cwd` to real paths (symlinks, `..`, nearest
   * existing parent), a word must lie inside the workspace roots the shell module makes writable
   * (the principal's own root and the configured ones) and inside both layers' `writable_paths`,
   * and touch nothing that runs code or holds settings (a git hook or config, a start-up file).
   * Empty when every write stays inside: the workspace-write sandbox may run the command.
   */
  writesOutside(
    words: readonly string[],
    cwd: string | undefined,
    policy: EffectivePolicy,
    principal?: Principal,
  ): string[] {
    const own = this.workspaceOf(principal);
    const roots = own === undefined ? this.#defaults() : [own, ...this.#defaults()];
    const aWrite = this.#real(policy.admin.writable) ?? roots;
    const uWrite = this.#real(policy.user.writable);
    const inside = (p: string, rs: readonly string[]): boolean => rs.some((r) => isInsideRoot(p, r));
    const out: string[] = [];
    for (const w of words) {
      const r = this.#resolveOne('command', w, cwd, true);
      const shown = JSON.stringify(w);
      if (r.problem !== undefined) {
        out.push(`${shown} (${r.problem})`);
        continue;
      }
      const via = r.path !== this.#lexical(w, cwd) ? ` (it resolves to ${r.path})` : '';
      if (!inside(r.path, roots) || !inside(r.path, aWrite) || (uWrite !== null && !inside(r.path, uWrite))) {
        out.push(`${shown}${via}`);
        continue;
      }
      const sensitive = sensitiveWriteTarget(r.path, this.#homes);
      if (sensitive !== null) out.push(`${shown}${via}, which touches ${sensitive}`);
      else if (r.nlink !== undefined && r.nlink > 1) out.push(`${shown}${via}, a file with ${r.nlink} hard links`);
    }
    return out;
  }

  /**
   * Whether writing `p` completes a bare git directory: a file named `config` where a `HEAD`
   * is, or a `HEAD` where a `config` is (any case: a case-insensitive disk reads `CONFIG`).
   */
  #makesGitDir(p: string): boolean {
    const name = path.basename(p).toLowerCase();
    const other = name === 'config' ? 'HEAD' : name === 'head' ? 'config' : undefined;
    if (other === undefined) return false;
    try {
      this.#fs.lstat(path.join(path.dirname(p), other));
      return true;
    } catch {
      return false;
    }
  }

  /** The start-up file (in its `~/` spelling under the user's home) the first of `paths` that is one names, or null. */
  #startupOf(...paths: string[]): { file: string; why: string } | null {
    const homes = [path.resolve(this.#homeDir)];
    const real = resolveReal(this.#fs, homes[0]!);
    if (real.ok && real.real !== homes[0]) homes.push(real.real);
    for (const p of paths) {
      const h = homes.find((d) => isInsideRoot(p, d));
      const file = h === undefined ? p : p === h ? '~' : `~/${path.relative(h, p)}`;
      const why = startupFile(file, this.#homes);
      if (why !== null) return { file, why };
    }
    return null;
  }

  #lexical(input: string, base = this.base): string {
    const e = expandHome(input, this.#homeDir);
    return path.isAbsolute(e) ? path.normalize(e) : path.resolve(base ?? '/', e);
  }

  #resolveOne(arg: string, input: string, base: string | undefined, write: boolean): ResolvedPath {
    if (input.length === 0 || input.includes('\0'))
      return { arg, input, path: input, exists: false, write, problem: 'not a valid path' };
    const e = expandHome(input, this.#homeDir);
    if (!path.isAbsolute(e) && base === undefined)
      return { arg, input, path: input, exists: false, write, problem: 'a relative path with no workspace root' };
    const abs = path.isAbsolute(e) ? path.normalize(e) : path.resolve(base!, e);
    const r = resolveReal(this.#fs, abs);
    if (!r.ok) return { arg, input, path: abs, exists: false, write, problem: `${r.problem} at ${r.at}` };
    const out: ResolvedPath = { arg, input, path: r.real, exists: r.exists, write };
    if (write && r.exists) {
      try {
        const st = this.#fs.lstat(r.real);
        const n = Number(st.nlink);
        if (st.isFile() && n > 1) out.nlink = n;
      } catch {
        // vanished between realpath and lstat: treated as a new file
      }
    }
    return out;
  }

  #defaults(): string[] {
    this.#defaultReal ??= this.#realRoots(this.#roots);
    return this.#defaultReal;
  }

  #real(roots: readonly string[] | null): string[] | null {
    if (roots === null) return null;
    let hit = this.#realCache.get(roots);
    if (hit === undefined) {
      hit = this.#realRoots(roots);
      this.#realCache.set(roots, hit);
    }
    return hit;
  }

  #realRoots(roots: readonly string[]): string[] {
    return roots.map((r) => {
      const res = resolveReal(this.#fs, r);
      return res.ok ? res.real : r;
    });
  }
}
