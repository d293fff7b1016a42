// The FirewallEngine: the five-layer pipeline of §3.8 for one tool call, returning one whole
// Evaluation (the strictest contribution decides). Synchronous: the policy is compiled, the
// RiskAssessor caches, and the only I/O is the PathSandbox's realpath/lstat and — for a held or
// notified write — reading the current file for the diff preview (both injected).

import { internId, ulid } from '@finger/protocol';
import type { AssessContext, Confinement, RiskAssessment } from '@finger/shell-risk';
import { confinementOf } from '@finger/shell-risk';

import { HostResolver } from '../net/host-resolver.js';
import { type HostResolution, hostsToResolve, judgeUrls, urlArguments } from '../net/url-args.js';
import { type EffectivePolicy, evaluatePolicy } from '../policy/evaluate-policy.js';
import { isPathArg } from '../sandbox/path-args.js';
import type { PathSandbox, ResolvedPaths, SandboxVerdict } from '../sandbox/path-sandbox.js';
import { ArgumentFilter, type FilterResult } from './argument-filter.js';
import { BehaviourMonitor, type BehaviourOptions, type LayerFinding } from './behaviour-monitor.js';
import type { FirewallCall } from './call-facts.js';
import { factsOf } from './call-facts.js';
import { argsFingerprint, ArgsKeys } from './call-key.js';
import { fileSha256, isPreviewCurrent, nodeReadFile, previewOf } from './call-preview.js';
import { decide } from './decide.js';
import { AutoEvaluation, CACHED_ALLOW, type CachedAllow, EngineEvaluation } from './engine-evaluation.js';
import type { Evaluation, ToolCallFacts } from './evaluation.js';
import type { ReadFile } from './preview.js';
import { withStdinAndEnv } from './stdin-script.js';
import {
  DEFAULT_VERDICT_CACHE_SIZE,
  type StaticVerdict,
  VerdictCache,
  type VerdictCacheStats,
} from './verdict-cache.js';
import { WorkspaceWriteJudge } from './workspace-write.js';

/** Where the engine gets the current policy (a PolicyStore), read on every call. */
export interface PolicySource {
  current(): EffectivePolicy;
}

/** What the engine needs of the RiskAssessor. */
export interface CommandAssessor {
  /** `context.cwd`: the directory the command starts in (relative paths are judged where they lead). */
  assess(command: string | readonly string[], context?: AssessContext): RiskAssessment;
  /** A forbidden finding when a tool argument names finger's own daemon or files (`web.fetch` of its URL). */
  forbiddenIn?(value: string): string | null;
  /** What an assessment writes, needs and destroys, judged with the assessor's own homes (its `home_dir`, finger's home). */
  confinementOf?(assessment: RiskAssessment): Confinement;
}

export { nodeReadFile } from './call-preview.js';

/** How an engine is built. */
export interface FirewallEngineOptions {
  policy: PolicySource;
  risk: CommandAssessor;
  sandbox: PathSandbox;
  /** Reads a file's current bytes for the diff preview (default: readFileSync; ENOENT → null). */
  readFile?: ReadFile;
  /** Time for the behaviour window (the hub's Clock satisfies it). Decision ids use the wall clock. */
  clock?: { now(): number };
  /**
   * The engine and the hub share `clock`: {@link FirewallEngine.evaluateCached} takes the time the
   * hub already read for the call (`call.now`) instead of reading the clock again (a Date.now costs
   * ≈ 0.1 µs on a VM, half the cached path). Default false.
   */
  time_from_call?: boolean;
  behaviour?: Partial<BehaviourOptions>;
  /**
   * Bound of the verdict cache (calls whose layers 1, 3 and 4 gave AUTO without touching a path),
   * default 4096 keys; 0 turns it off.
   */
  verdict_cache_size?: number;
  /**
   * The shell tools that run a call in the workspace-write sandbox when its Evaluation says
   * `sandbox_profile: 'workspace-write'` (the daemon: `['shell.exec']` where the shell module's
   * sandbox can run that profile). A `moderate` command of such a tool whose writes stay in the
   * caller's workspace, which needs no network, names no credential and reaches nothing of
   * finger's is NOTIFY instead of CONFIRM. Absent: no such lowering.
   */
  workspace_sandbox?: {
    tools: readonly string[];
    /**
     * `registries`: the profile lets the package registries through a filtering proxy (config
     * `sandbox.network.allow`). A command whose only network need is installing what the lock
     * file or manifest names (`npm ci`, `pip install -r …`, `cargo fetch`, `go mod download`) or a
     * build that fetches its dependencies is then eligible too, its Evaluation saying
     * `sandbox_network: 'registries'`; adding a named package, other hosts, git and curl stay held.
     * Absent: no network in the profile.
     */
    network?: 'registries';
  };
  /**
   * The undo store a deleting command's hard-link snapshot goes to (the daemon: the fs module's
   * backups directory, where the shell module takes it). With it `rm -r`, `find -delete` and `git
   * clean` in the workspace are eligible for the workspace-write profile when their trees resolve
   * inside the workspace, on the store's file system, within `max_entries` (default 200,000); the
   * Evaluation's `undo_snapshot` lists them. Absent: such deletes are held (`sandbox.not_undoable`).
   */
  undo_snapshots?: { store: string; max_entries?: number };
  /**
   * Resolves the host names of URL arguments for {@link FirewallEngine.withResolvedHosts} (default:
   * a {@link HostResolver} on the system resolver: 2 s per lookup, a 30 s cache).
   */
  hosts?: { resolveAll(hosts: readonly string[]): Promise<ReadonlyMap<string, HostResolution>> };
}

/** Options of one evaluation. */
export interface EvaluateOptions {
  /**
   * Count the call in the behaviour and metacognitive memory (default true). False for
   * `policy check` and for re-evaluating a held call's edited arguments.
   */
  record?: boolean;
  /**
   * The caller reads only `action`, `level`, `waived`, `error` and `args` of an allow (the
   * interceptor when it writes neither an event nor an audit entry for a plain AUTO allow): a
   * cached AUTO verdict may then come back as an {@link AutoEvaluation}, whose decision id and
   * rule lists are only made if read. Default false.
   */
  lean?: boolean;
}

const NO_PATHS: ResolvedPaths = Object.freeze({
  list: Object.freeze([]) as unknown as ResolvedPaths['list'],
  byArg: new Map(),
}) as ResolvedPaths;

/** Layer 1 refused the arguments: DENY with E_INVALID_ARGS. */
function invalid(
  decision_id: string,
  tool_id: string,
  f: Extract<FilterResult, { ok: false }>,
  warnings: string[] | undefined,
): Evaluation {
  const lines = f.issues.map((i) => `${i.path} ${i.message}`);
  const message = `invalid arguments for ${tool_id}: ${lines.join('; ')}`;
  const ev = new EngineEvaluation(
    decision_id,
    'DENY',
    'deny',
    'argument_filter',
    [{ source: 'builtin', id: 'argument_filter.schema', level: 'DENY', reason: message }],
    [`E_INVALID_ARGS: ${message}`],
    f.args,
  );
  ev.error = { code: 'E_INVALID_ARGS', message, details: { tool: tool_id, issues: f.issues } };
  if (warnings !== undefined) ev.warnings = warnings;
  return ev;
}

function commandOf(args: unknown): string | readonly string[] | undefined {
  if (typeof args !== 'object' || args === null) return undefined;
  const a = args as Record<string, unknown>;
  if (typeof a.command === 'string') return a.command;
  if (Array.isArray(a.argv) && a.argv.length > 0 && a.argv.every((x) => typeof x === 'string'))
    return a.argv as string[];
  return undefined;
}

/** The volume shape of each assessed command, made once per assessment (cached verdicts share it). */
const SHAPES = new WeakMap<RiskAssessment, string>();

/**
 * The shape the behaviour layer's volume limit counts a call under: for a shell command the
 * programs it runs (sorted, each once: `git,ls`), so an agent's `ls`, `cat` and `git status` are
 * not one run of `shell.exec`; undefined (the tool as a whole) for any other call.
 */
function volumeShape(st: StaticVerdict): string | undefined {
  const a = st.assessment;
  if (!st.shellCall || a === undefined) return undefined;
  let shape = SHAPES.get(a);
  if (shape === undefined) {
    const programs = new Set<string>();
    for (const seg of a.model.segments) if (!seg.wrapper) programs.add(seg.program === '' ? '?' : seg.program);
    shape = [...programs].sort().join(',') || '?';
    SHAPES.set(a, shape);
  }
  return shape;
}

/**
 * Evaluates tool calls (§3.8). Layers, in order: (1) argument filter — unknown top-level
 * arguments stripped (a warning), invalid arguments → `deny` with `error.code` E_INVALID_ARGS;
 * (2) behaviour — the same call more than 5 times in 60 s (3 at low confidence) → APPROVE, the
 * same call shape more than 20 times → CONFIRM (agents and modules only, see `volume_kinds`); (3) permission — {@link evaluatePolicy}; (4) path
 * sandbox; (5) metacognitive breaker — low confidence → NOTIFY, a run of 3 → CONFIRM. The
 * strictest contribution decides `level` and `layer`. A human's direct dispatch turns CONFIRM and
 * APPROVE into AUTO (`waived` records what was skipped); DENY stays DENY. Role grants are not
 * checked here: the grant interceptor runs before the firewall's.
 */
export class FirewallEngine {
  readonly behaviour: BehaviourMonitor;
  readonly #policy: PolicySource;
  readonly #risk: CommandAssessor;
  readonly #sandbox: PathSandbox;
  readonly #readFile: ReadFile;
  readonly #clock: { now(): number };
  readonly #timeFromCall: boolean;
  readonly #filter = new ArgumentFilter();
  readonly #cache: VerdictCache | undefined;
  readonly #keys = new ArgsKeys();
  readonly #workspaceTools: ReadonlySet<string>;
  readonly #workspaceWrite: WorkspaceWriteJudge;
  readonly #hosts: NonNullable<FirewallEngineOptions['hosts']>;
  #lastSession = { kind: '', id: '', session: '', key: '' };

  constructor(options: FirewallEngineOptions) {
    const size = options.verdict_cache_size ?? DEFAULT_VERDICT_CACHE_SIZE;
    this.#cache = size > 0 ? new VerdictCache(size) : undefined;
    this.#policy = options.policy;
    this.#risk = options.risk;
    this.#sandbox = options.sandbox;
    this.#readFile = options.readFile ?? nodeReadFile;
    this.#clock = options.clock ?? Date;
    this.#timeFromCall = options.time_from_call === true;
    this.behaviour = new BehaviourMonitor(options.behaviour);
    this.#workspaceTools = new Set(options.workspace_sandbox?.tools ?? []);
    this.#workspaceWrite = new WorkspaceWriteJudge({
      // the assessor's confinement (an assessor without its own: judged with the usual homes)
      confinement: (assessment) => this.#risk.confinementOf?.(assessment) ?? confinementOf(assessment),
      sandbox: this.#sandbox,
      registries: options.workspace_sandbox?.network === 'registries',
      undo: options.undo_snapshots,
    });
    this.#hosts = options.hosts ?? new HostResolver();
  }

  /**
   * The facts with `hosts` filled in: what the host names of the call's URL arguments resolve to
   * (docs/policy.md, "URLs"). Undefined when the call has no URL argument whose host must be
   * resolved (no promise on the common path). Never rejects: a failed or slow lookup is an answer
   * the engine judges (CONFIRM, "cannot resolve …").
   */
  withResolvedHosts(facts: ToolCallFacts): Promise<ToolCallFacts> | undefined {
    const names = hostsToResolve(urlArguments(facts.args, facts.tool.input_schema));
    if (names.length === 0) return undefined;
    return this.#hosts.resolveAll(names).then((hosts) => ({ ...facts, hosts }));
  }

  /** The policy in force (both layers). */
  policy(): EffectivePolicy {
    return this.#policy.current();
  }

  /**
   * The whole verdict on one call. `args` of the result (a getter: not in its JSON) holds the
   * arguments after the argument filter — what must be dispatched. `preview` is built for
   * `notify` and `hold`. A call whose layers 1, 3 and 4 gave AUTO without resolving a path is
   * remembered in the verdict cache (see {@link VerdictCache}); the behaviour and metacognitive
   * layers run on every call, cached or not, and the result is the same as without the cache.
   */
  evaluate(facts: ToolCallFacts, options: EvaluateOptions = {}): Evaluation {
    const now = this.#clock.now();
    const { tool_id } = facts;
    const policy = this.#policy.current();
    const cache = this.#cache;
    cache?.sync(policy);
    const direct = facts.direct && facts.principal.kind === 'human';
    const record = options.record !== false && !direct;

    // the call's key: the behaviour layer counts by it, the verdict cache looks up by it
    const ak = this.#keys.intern(facts.args);
    let fingerprint = argsFingerprint(facts.args, ak === null ? null : ak.key);
    let args = facts.args;
    let warnings: string[] | undefined;
    let paths: ResolvedPaths = NO_PATHS;
    let sb: SandboxVerdict | undefined;
    let st = ak !== null ? cache?.get(tool_id, ak, facts.tool, facts.principal, facts.direct) : undefined;
    const hit = st !== undefined;
    if (st === undefined) {
      // 1. argument filter
      const f = this.#filter.filter(facts.tool.input_schema, facts.args);
      if (f.stripped.length > 0) warnings = f.stripped.map((k) => `stripped unknown argument "${k}"`);
      if (!f.ok) return invalid(ulid(), tool_id, f, warnings);
      if (f.args !== args) {
        // count what runs: junk keys added to each call must not hide a loop
        args = f.args;
        fingerprint = argsFingerprint(args);
      }
      // 3. permission (paths are resolved first: the policy's path globs match real paths), 4. path sandbox
      const l = this.#layers(policy, facts, args);
      st = l.st;
      paths = l.paths;
      sb = l.sb;
      if (
        cache !== undefined &&
        // a verdict on what a host name resolved to holds only as long as the answer
        !l.resolved &&
        ak !== null &&
        warnings === undefined &&
        paths.list.length === 0 &&
        paths.byArg.size === 0 &&
        // a command is judged from its caller's own root when it has one, which may change
        (st.assessment === undefined || this.#sandbox.workspaceOf(facts.principal) === undefined) &&
        // a command judged through symbolic links holds only while they lead where they did
        st.assessment?.on_disk !== true &&
        st.perm.level === 'AUTO' &&
        sb.level === 'AUTO'
      )
        cache.set(tool_id, ak, facts, st);
    }

    // 2. behaviour, 5. metacognitive breaker: stateful, on every call
    const session = this.#sessionKey(facts.principal, facts.session_id);
    const shape = this.behaviour.countsVolume(facts.principal.kind) ? volumeShape(st) : null;
    const found = this.behaviour.behaviour(session, tool_id, fingerprint, facts.confidence, now, record, shape);
    const meta = this.behaviour.metacognitive(session, facts.confidence, record);
    if (hit && options.lean === true && found.length === 0 && meta === null) return new AutoEvaluation(st.perm, args);

    return this.#decide(facts, args, st, paths, sb, warnings, found, meta, direct);
  }

  /**
   * The interceptor's path for a call whose layers 1, 3 and 4 are in the verdict cache, with no
   * facts object and no Evaluation built for a plain allow: counts the call in the behaviour and
   * metacognitive memory, then answers {@link CACHED_ALLOW} when neither raised it (the call runs
   * with its own arguments), the whole Evaluation when one did. Undefined — nothing recorded —
   * when the call is not in the cache (or the cache is off): {@link evaluate} it. The verdict is
   * the one `evaluate(facts, {lean: true})` gives.
   */
  evaluateCached(
    call: FirewallCall,
    tool: ToolCallFacts['tool'],
    confidence: number | undefined,
  ): Evaluation | CachedAllow | undefined {
    const cache = this.#cache;
    if (cache === undefined) return undefined;
    const env = call.envelope;
    const args = env.payload;
    const ak = this.#keys.intern(args);
    if (ak === null) return undefined;
    cache.sync(this.#policy.current());
    const tool_id = call.resolved.tool_id;
    const principal = env.source;
    const st = cache.get(tool_id, ak, tool, principal, call.direct, false);
    if (st === undefined) return undefined;
    const now = this.#timeFromCall && call.now !== undefined ? call.now : this.#clock.now();
    const direct = call.direct && principal.kind === 'human';
    const session = this.#sessionKey(principal, env.session_id);
    const shape = this.behaviour.countsVolume(principal.kind) ? volumeShape(st) : null;
    const found = this.behaviour.behaviour(
      session,
      tool_id,
      argsFingerprint(args, ak.key),
      confidence,
      now,
      !direct,
      shape,
    );
    const meta = this.behaviour.metacognitive(session, confidence, !direct);
    if (found.length === 0 && meta === null) return CACHED_ALLOW;
    return this.#decide(factsOf(call, tool, confidence), args, st, NO_PATHS, undefined, undefined, found, meta, direct);
  }

  /** The one decision ({@link decide}: pure), plus the preview a person will read for a notify or a hold. */
  #decide(
    facts: ToolCallFacts,
    args: unknown,
    st: StaticVerdict,
    paths: ResolvedPaths,
    sb: SandboxVerdict | undefined,
    warnings: string[] | undefined,
    found: readonly LayerFinding[],
    meta: LayerFinding | null,
    direct: boolean,
  ): Evaluation {
    const ev = decide({ facts, args, st, sb, warnings, direct }, { found, meta }, ulid());
    if (ev.action === 'notify' || ev.action === 'hold')
      ev.preview = previewOf(
        facts.tool_id,
        facts.tool,
        args,
        st.shellCall,
        st.assessment,
        paths,
        facts.principal,
        this.#sandbox,
        this.#readFile,
      );
    return ev;
  }

  /** Verdict-cache statistics (undefined when the cache is off). */
  cacheStats(): VerdictCacheStats | undefined {
    return this.#cache?.stats();
  }

  /** Layers 3 and 4 on the filtered arguments: the part of a verdict that depends on no memory. */
  #layers(
    policy: EffectivePolicy,
    facts: ToolCallFacts,
    args: unknown,
  ): { st: StaticVerdict; paths: ResolvedPaths; sb: SandboxVerdict; resolved: boolean } {
    const { tool_id, tool } = facts;
    const shell = policy.admin.shellTools(tool_id);
    const command = shell || tool.capability_level === 'L2' ? commandOf(args) : undefined;
    // a task's own workspace is a root for its calls only: the principal is the hub's, never the payload's
    const principal = facts.principal;
    // relative paths in the command are judged from where it runs: its cwd, else the caller's first root
    const context = command !== undefined ? { cwd: this.#sandbox.commandCwd(args, principal) } : undefined;
    const assessment =
      command !== undefined
        ? withStdinAndEnv(this.#risk.assess(command, context), args, (text) => this.#risk.assess(text, context))
        : undefined;
    const shellCall = shell && assessment !== undefined;
    const paths = this.#sandbox.resolve({
      tool_id,
      args,
      tool,
      shell: shellCall,
      model: assessment?.model,
      reads: assessment?.reads,
      principal,
    });
    // an argument that is no command naming finger's own daemon or files (`web.fetch` of its URL): forbidden too
    const forbidden = command === undefined ? this.#forbiddenArgs(args, tool.input_schema) : undefined;
    // URL arguments to loopback, link-local, private or metadata addresses (after resolution): APPROVE
    const urls = urlArguments(args, tool.input_schema);
    const urlFindings = urls.length > 0 ? judgeUrls(urls, facts.hosts) : undefined;
    const ws =
      shellCall && assessment.level === 'moderate' && this.#workspaceTools.has(tool_id)
        ? this.#workspaceWrite.judge(assessment, context?.cwd, policy, principal)
        : undefined;
    const perm = evaluatePolicy(
      policy,
      {
        tool_id,
        args,
        tool,
        paths: paths.byArg,
        base: this.#sandbox.baseFor(principal),
        human: principal.kind === 'human',
        ...(forbidden !== undefined ? { forbidden } : {}),
        ...(urlFindings !== undefined && urlFindings.length > 0 ? { urls: urlFindings } : {}),
        ...(ws !== undefined ? { workspace_sandbox: ws } : {}),
      },
      assessment,
    );
    const sb = this.#sandbox.check(paths, policy, principal);
    return { st: { shellCall, assessment, perm }, paths, sb, resolved: urls.some((u) => !u.literal) };
  }

  /**
   * Forbidden findings of the string arguments (top level, and in arrays) that name finger's own
   * daemon or files; path arguments are the PathSandbox's (it resolves them).
   */
  #forbiddenArgs(args: unknown, schema: ToolCallFacts['tool']['input_schema']): string[] | undefined {
    const check = this.#risk.forbiddenIn?.bind(this.#risk);
    if (check === undefined || typeof args !== 'object' || args === null) return undefined;
    let out: string[] | undefined;
    for (const [k, v] of Object.entries(args as Record<string, unknown>)) {
      if (isPathArg(k, schema)) continue;
      for (const s of typeof v === 'string' ? [v] : Array.isArray(v) ? v : []) {
        if (typeof s !== 'string') continue;
        const hit = check(s);
        if (hit !== null) (out ??= []).push(`argument ${k}: ${hit}`);
      }
    }
    return out;
  }

  /** `kind:id:session`, remembered for the last principal and session (no string built per call). */
  #sessionKey(p: ToolCallFacts['principal'], session: string): string {
    const m = this.#lastSession;
    if (m.kind === p.kind && m.id === p.id && m.session === session) return m.key;
    // internalized: the behaviour layer compares it on every call, by pointer only so
    const key = internId(`${p.kind}:${p.id}:${session}`);
    this.#lastSession = { kind: p.kind, id: p.id, session, key };
    return key;
  }

  /** sha256 of a file's current content; null when it does not exist. */
  fileSha256(path: string): string | null {
    return fileSha256(this.#readFile, path);
  }

  /**
   * True when the file a write preview was made against is unchanged (or the preview binds to
   * no file). An approval covers exactly what was shown: when this is false the call must be
   * held again.
   */
  isPreviewCurrent(ev: Pick<Evaluation, 'preview'>): boolean {
    return isPreviewCurrent(this.#readFile, ev);
  }
}
