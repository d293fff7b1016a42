// Supervised tasks (§3.15): the TaskService starts, resumes, answers and aborts ExecutorAgent runs;
// it wires the executor to the hub (tool calls as the task's own agent principal, so grants, the
// firewall, the human gate and the breakers judge them), the checkpoint store
// (`FINGER_HOME/state/tasks`), the memory (`FINGER_HOME/state/memory`), the PerceptionBus hints and
// the TASK_STATE events. What it needs from outside comes through its options (ports): the daemon
// builds it (packages/daemon/src/tasks-wiring.ts) and hands it the model adapters, the audit log and
// the scratchpad module's own reader.

import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

import { type AuditRecord, isPathArg, type PerceptionBus, type ToolGrantProfile } from '@finger/firewall';
import type { Clock, EventBus, MessageHub } from '@finger/hub';
import { FingerError, type Principal } from '@finger/protocol';

import { ExecutorAgent, newTask } from '../executor/executor-agent.js';
import type { DecisionParser, ExecutorProgress, ExecutorSafety, HumanAnswer } from '../executor/executor-types.js';
import { ModelPlanner } from '../executor/model-planner.js';
import { DefaultContextBuilder, visibleText } from '../executor/prompt-builder.js';
import { shortenText } from '../executor/result-summary.js';
import { parseLlmDecision } from '../guardrail/llm-decision.js';
import { FileMemory } from '../memory/file-memory.js';
import type { ModelAdapter } from '../model/model-adapter.js';
import { CheckpointStore } from './checkpoint-store.js';
import type { TaskConfidence } from './task-confidence.js';
import { isTerminal, RESUMABLE_TASK_STATES } from './task-state.js';
import type { TaskRecord } from './task-types.js';
import { type CheckedWorkspace, checkTaskWorkspace, type TaskWorkspaces } from './task-workspace.js';

/** The agent id a task's executor acts under (its principal, budgets and breakers). */
const executorAgent = (task_id: string): string => `executor-${task_id}`;

/** The safety prompt injected into every executor step. */
export const TASK_SAFETY_PROMPT =
  'Safety: every tool call is checked by a firewall and may be held for the person, rejected or denied. ' +
  'Stay inside the workspace. Never try to get around a refusal: when the person rejects a call, read their ' +
  'reason and change course. Never claim success you did not observe.';

/** Most scratchpad characters put in a prompt (longer: head and tail with a marker). */
const MAX_SCRATCHPAD_CHARS = 4000;

/**
 * Reads a task workspace's scratchpad (`<workspace>/.finger/scratchpad.md`, written by the agent
 * through `scratchpad.update`) for its prompt: the scratchpad module's own store, with its symlink
 * and root checks — not a tool call, so the firewall's loop detector never counts the daemon's
 * reads as the agent's. Resolves undefined when there is nothing written yet.
 */
export type ScratchpadReader = (workspace: string) => Promise<string | undefined>;

/** Options of {@link TaskService}. */
export interface TaskServiceOptions {
  hub: MessageHub;
  events: EventBus;
  grants: ToolGrantProfile;
  home: string;
  /**
   * Realpath'd workspace roots. A task's workspace inside one works as before; one outside every
   * root becomes that task's own root (see task-workspace.ts), bound in `workspaces`.
   */
  workspaceRoots: readonly string[];
  /** The task → workspace bindings the firewall and the fs/shell modules read (the same object). */
  workspaces: TaskWorkspaces;
  /** Where each step's model confidence goes for the firewall (by the task's principal object). */
  confidence?: TaskConfidence;
  /** The user's home directory (refused as a workspace); default os.homedir(). */
  homeDir?: string;
  /** The admin token file: a workspace holding it is refused. */
  tokenFile?: string;
  model: ModelAdapter;
  secondary_model?: ModelAdapter;
  parseDecision: DecisionParser;
  /** The scratchpad module's reader (none: prompts carry no scratchpad). */
  scratchpad?: ScratchpadReader;
  perception?: PerceptionBus;
  safety?: ExecutorSafety;
  /** `task.step` (each model decision, before its calls run) and `task.state` entries go here. */
  audit?: { append(record: AuditRecord): Promise<unknown> };
  prices?: { input_per_mtok?: number; output_per_mtok?: number };
  max_steps: number;
  clock: Clock;
  logger: { warn(obj: object, msg?: string): void };
}

interface Live {
  graceful: boolean;
  ctrl: AbortController;
  done: Promise<TaskRecord>;
  answer?: (a: HumanAnswer) => void;
  text: { step: number; acc: string; sent: number };
}

const isAdmin = (p: Principal) => p.roles.includes('admin');

/** See the file comment. */
export class TaskService {
  readonly store: CheckpointStore;
  readonly memory: FileMemory;
  readonly workspaces: TaskWorkspaces;
  private readonly live = new Map<string, Live>();
  private readonly executor: ExecutorAgent;
  /** Paths touched per running task (conflict detection). */
  private readonly touched = new Map<string, Set<string>>();
  private closed = false;
  private readonly unsubscribe: () => void;

  constructor(private readonly o: TaskServiceOptions) {
    this.store = new CheckpointStore(join(o.home, 'state', 'tasks'));
    this.workspaces = o.workspaces;
    this.memory = new FileMemory({ dir: join(o.home, 'state', 'memory'), clock: o.clock });
    // the kill switch stops every task at once, also those waiting for a person
    this.unsubscribe = o.events.subscribeJson({ types: ['HALTED'] }, () => {
      for (const l of this.live.values()) l.ctrl.abort(new FingerError('E_HALTED', 'the kill switch stopped the task'));
    });
    const interrupted = this.store.markInterrupted(new Date(o.clock.now()).toISOString());
    if (interrupted.length) o.logger.warn({ tasks: interrupted }, 'tasks interrupted by a restart');
    this.executor = new ExecutorAgent({
      model: o.model,
      ...(o.secondary_model ? { secondary_model: o.secondary_model } : {}),
      parseDecision: o.parseDecision,
      tools: {
        call: (tool, args, meta) => this.callTool(meta.task_id, tool, args, meta),
        granted: () =>
          o.hub.tools
            .list()
            .filter((t) => o.grants.isGranted('executor', t.id, t.grants))
            .map((t) => ({ id: t.id, summary: t.description.split('\n')[0]!.slice(0, 200) })),
        isIdempotent: (tool) => o.hub.tools.metadata(tool)?.idempotent === true,
      },
      human: { ask: (task, signal) => this.waitAnswer(task, signal) },
      checkpoint: (t) => this.store.save(t),
      progress: (t, p) => this.emit(t, p),
      ...(o.safety ? { safety: o.safety } : {}),
      memory: this.memory,
      // planning costs a model call: only with a secondary model configured for it
      ...(o.secondary_model ? { planner: new ModelPlanner(o.prices ? { prices: o.prices } : {}) } : {}),
      context: new DefaultContextBuilder(),
      hints: (session) => o.perception?.hintsFor(session).map((h) => h.text) ?? [],
      recordConfidence: (session, value) => o.perception?.recordConfidence(session, value),
      scratchpad: (task) => this.readScratchpad(task),
      safety_prompt: TASK_SAFETY_PROMPT,
      ...(o.prices ? { prices: o.prices } : {}),
      clock: o.clock,
      agent_id: executorAgent,
    });
  }

  /**
   * Starts a task in `workspace` (absolute, an existing directory: E_INVALID_ARGS otherwise).
   * Outside the configured roots it becomes the task's own root — refused with E_FORBIDDEN for
   * `/`, the user's home, FINGER_HOME and what is inside or holds them (see checkTaskWorkspace).
   * Returns the RUNNING record; the loop continues in the background. Rejects with
   * E_LLM_UNAVAILABLE when no model is configured (the offline router can route, not work a task).
   */
  start(p: { text: string; workspace: string; by: Principal; max_steps?: number }): TaskRecord {
    if (this.closed) throw new FingerError('E_PROVIDER_CLOSED', 'the daemon is shutting down');
    this.requireModel();
    const checked = this.checkWorkspace(p.workspace);
    const workspace = checked.path;
    const id = `t${this.o.clock.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
    const task = newTask({
      id,
      text: p.text,
      workspace,
      owner: p.by.id,
      max_steps: p.max_steps ?? this.o.max_steps,
      now: this.o.clock.now(),
    });
    this.store.save(task);
    this.launch(task, checked);
    return this.store.load(id);
  }

  /** E_LLM_UNAVAILABLE unless a real model is configured. */
  private requireModel(): void {
    if (this.o.model.provider !== 'offline') return;
    throw new FingerError(
      'E_LLM_UNAVAILABLE',
      'supervised tasks need a model, and none is configured: set llm.provider/base_url/model in config.json, or FINGER_LLM_PROVIDER (openai|anthropic), FINGER_LLM_BASE_URL, FINGER_LLM_MODEL and FINGER_LLM_API_KEY',
      { provider: 'offline' },
    );
  }

  /** Resumes a PAUSED, ERROR_PAUSED or INTERRUPTED task (E_CONFLICT otherwise, or while it runs). */
  async resume(id: string, by: Principal): Promise<TaskRecord> {
    this.requireModel();
    let t = this.get(id, by);
    // a run that just paused is still unwinding: wait for it
    if (RESUMABLE_TASK_STATES.includes(t.state)) await this.live.get(id)?.done;
    t = this.get(id, by);
    if (this.live.has(id)) throw new FingerError('E_CONFLICT', `task ${id} is already running`, { id });
    if (!RESUMABLE_TASK_STATES.includes(t.state))
      throw new FingerError('E_CONFLICT', `a ${t.state} task cannot be resumed`, { id, state: t.state });
    // checked again: the directory may have gone, or been replaced by a symlink to elsewhere
    const checked = this.checkWorkspace(t.workspace);
    if (checked.path !== t.workspace)
      throw new FingerError('E_FORBIDDEN', `workspace ${t.workspace} now resolves to ${checked.path}: not resumed`, {
        id,
        workspace: t.workspace,
        resolved: checked.path,
      });
    this.launch(t, checked);
    return this.store.load(id);
  }

  /** A task its owner (or an admin) may see; E_NOT_FOUND otherwise (no existence leak). */
  get(id: string, by: Principal): TaskRecord {
    const t = this.store.load(id);
    if (t.owner !== by.id && !isAdmin(by)) throw new FingerError('E_NOT_FOUND', `no task ${id}`, { id });
    return t;
  }

  /** Tasks of `by` (all owners for an admin), newest first; without `all` only the ones not finished. */
  list(by: Principal, all: boolean): TaskRecord[] {
    return this.store
      .list()
      .tasks.filter((t) => t.owner === by.id || isAdmin(by))
      .filter((t) => all || !isTerminal(t.state));
  }

  /**
   * Two-phase abort: the first stops after the current step (`graceful`), a second one at once
   * (`immediate`: the model call and any wait are cancelled). A task not running is STOPPED
   * directly when it is resumable; a finished one is E_CONFLICT.
   */
  abort(id: string, by: Principal): { phase: 'graceful' | 'immediate' | 'stopped'; task: TaskRecord } {
    const t = this.get(id, by);
    if (isTerminal(t.state)) throw new FingerError('E_CONFLICT', `task ${id} is already ${t.state}`, { id });
    const l = this.live.get(id);
    if (!l) {
      const stopped = { ...t, state: 'STOPPED' as const, updated_at: new Date(this.o.clock.now()).toISOString() };
      this.store.save(stopped);
      this.emit(stopped, { kind: 'state', state: 'STOPPED' });
      return { phase: 'stopped', task: stopped };
    }
    if (!l.graceful && t.state !== 'WAITING_HUMAN') {
      l.graceful = true;
      return { phase: 'graceful', task: t };
    }
    l.ctrl.abort(new FingerError('E_HALTED', `task ${id} aborted by ${by.id}`));
    return { phase: 'immediate', task: t };
  }

  /** Answers the question of a WAITING_HUMAN task (E_CONFLICT when it asks nothing). */
  answer(id: string, by: Principal, a: { decision: HumanAnswer['decision']; message?: string }): TaskRecord {
    const t = this.get(id, by);
    const l = this.live.get(id);
    if (!l?.answer || t.state !== 'WAITING_HUMAN')
      throw new FingerError('E_CONFLICT', `task ${id} is not waiting for an answer (it is ${t.state})`, { id });
    const resolveAnswer = l.answer;
    l.answer = undefined;
    resolveAnswer({ decision: a.decision, by: by.id, ...(a.message !== undefined ? { message: a.message } : {}) });
    return t;
  }

  /** Waits for a running task to leave the loop (tests, shutdown). */
  async settled(id: string): Promise<TaskRecord | undefined> {
    return this.live.get(id)?.done;
  }

  /** Stops every running task at once (they stay resumable only if they were interrupted by a restart). */
  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe();
    const runs = [...this.live.values()];
    for (const l of runs) l.ctrl.abort(new FingerError('E_PROVIDER_CLOSED', 'the daemon is shutting down'));
    await Promise.allSettled(runs.map((l) => l.done));
  }

  /** The task's scratchpad for its prompt, shortened; a failed read (a symlink out, a disk error) gives none. */
  private async readScratchpad(task: TaskRecord): Promise<string | undefined> {
    if (this.o.scratchpad === undefined) return undefined;
    try {
      const text = await this.o.scratchpad(task.workspace);
      return text === undefined ? undefined : shortenText(text, MAX_SCRATCHPAD_CHARS);
    } catch (e) {
      this.o.logger.warn({ err: e, task: task.id }, 'cannot read the task’s scratchpad');
      return undefined;
    }
  }

  private launch(task: TaskRecord, workspace: CheckedWorkspace): void {
    this.workspaces.bind(task.id, workspace);
    const ctrl = new AbortController();
    const l: Live = { graceful: false, ctrl, done: Promise.resolve(task), text: { step: 0, acc: '', sent: 0 } };
    this.live.set(task.id, l);
    this.touched.set(task.id, new Set());
    l.done = this.executor
      .run(task, { signal: ctrl.signal, stopRequested: () => l.graceful })
      .catch((e: unknown) => {
        this.o.logger.warn({ err: e, task: task.id }, 'task loop failed');
        return this.store.load(task.id);
      })
      .finally(() => {
        this.live.delete(task.id);
        this.touched.delete(task.id);
        this.workspaces.release(task.id);
      });
  }

  private waitAnswer(task: TaskRecord, signal: AbortSignal): Promise<HumanAnswer> {
    const l = this.live.get(task.id);
    if (!l) return Promise.reject(new FingerError('E_CONFLICT', `task ${task.id} is not running`));
    return new Promise<HumanAnswer>((res, rej) => {
      const onAbort = () =>
        rej(signal.reason instanceof Error ? signal.reason : new FingerError('E_HALTED', 'aborted'));
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      l.answer = (a) => {
        signal.removeEventListener('abort', onAbort);
        res(a);
      };
    });
  }

  /** A tool call of a task: paths resolved in its workspace, conflict check, then the hub as the task's agent. */
  private async callTool(
    task_id: string,
    tool: string,
    args: Record<string, unknown>,
    meta: { session_id: string; correlation_id: string; request_id: string },
  ): Promise<unknown> {
    const task = this.store.load(task_id);
    const schema = this.o.hub.tools.metadata(tool)?.input_schema;
    const props = (schema?.properties ?? {}) as Record<string, Record<string, unknown>>;
    const resolved: Record<string, unknown> = { ...args };
    const paths: string[] = [];
    for (const [k, v] of Object.entries(args)) {
      if (!isPathArg(k, props[k])) continue;
      if (typeof v === 'string') paths.push((resolved[k] = resolve(task.workspace, v)) as string);
      else if (Array.isArray(v))
        resolved[k] = v.map((x: unknown) =>
          typeof x === 'string' ? (paths.push(resolve(task.workspace, x)), paths.at(-1)) : x,
        );
    }
    if (tool.startsWith('shell.') && resolved.cwd === undefined && props.cwd !== undefined)
      resolved.cwd = task.workspace;
    await this.checkConflict(task, tool, paths);
    // the bound principal object: only it carries the task's own root (never the payload)
    const principal = this.workspaces.principalOf(task_id);
    if (principal === undefined) throw new FingerError('E_CONFLICT', `task ${task_id} is not running`, { id: task_id });
    return this.o.hub.request({
      target: tool,
      payload: resolved,
      source: principal,
      request_id: meta.request_id,
      correlation_id: meta.correlation_id,
      session_id: meta.session_id,
      workflow_id: task_id,
    });
  }

  /** Another running task touched one of these paths: emit a TASK_STATE conflict event and ask this task's person. */
  private async checkConflict(task: TaskRecord, tool: string, paths: string[]): Promise<void> {
    const mine = this.touched.get(task.id) ?? new Set<string>();
    const others = [...this.touched].filter(([id]) => id !== task.id);
    const clash = paths.flatMap((p) => others.filter(([, s]) => s.has(p)).map(([id]) => ({ path: p, task: id })));
    for (const p of paths) mine.add(p);
    if (!clash.length) return;
    this.o.events.emit(
      'TASK_STATE',
      { correlation_id: task.correlation_id, session_id: task.session_id, target: tool },
      { task_id: task.id, kind: 'conflict', tool, conflicts: clash },
    );
    const l = this.live.get(task.id);
    if (!l) return;
    const message = `${tool} touches ${clash.map((c) => `${c.path} (also used by task ${c.task})`).join(', ')}. Go ahead (confirm) or skip?`;
    const waiting = { ...task, state: 'WAITING_HUMAN' as const, question: { kind: 'conflict' as const, message } };
    this.store.save(waiting);
    this.emit(waiting, { kind: 'state', state: 'WAITING_HUMAN', question: waiting.question });
    const a = await this.waitAnswer(waiting, l.ctrl.signal).finally(() => {
      const back = { ...this.store.load(task.id), state: 'RUNNING' as const, question: undefined };
      this.store.save(back);
      this.emit(back, { kind: 'state', state: 'RUNNING' });
    });
    if (a.decision === 'stop') {
      const why = new FingerError('E_HALTED', `the person stopped task ${task.id} at a file conflict`);
      l.ctrl.abort(why);
      throw why;
    }
    if (a.decision !== 'confirm')
      throw new FingerError('E_REJECTED_BY_HUMAN', `the person held ${tool}: another task works on the same file`, {
        conflicts: clash,
      });
  }

  private checkWorkspace(input: string): CheckedWorkspace {
    return checkTaskWorkspace(input, {
      roots: this.o.workspaceRoots,
      home: this.o.home,
      homeDir: this.o.homeDir ?? homedir(),
      ...(this.o.tokenFile !== undefined ? { tokenFile: this.o.tokenFile } : {}),
    });
  }

  /** Audit entries of a task's decisions and state changes, appended in order (the log orders them by call). */
  private auditProgress(t: TaskRecord, p: ExecutorProgress): void {
    if (!this.o.audit || (p.kind !== 'decision' && p.kind !== 'state')) return;
    const base = {
      actor: p.kind === 'state' ? null : { kind: 'agent', id: executorAgent(t.id) },
      request_id: null,
      correlation_id: t.correlation_id,
      tool: null,
    };
    const record: AuditRecord =
      p.kind === 'decision'
        ? {
            ...base,
            type: 'task.step',
            decision: p.done ? 'done' : p.calls > 0 ? 'tool_calls' : 'no_calls',
            details: {
              task_id: t.id,
              step: p.step,
              thought: shortenText(p.thought, 2000),
              confidence: p.confidence,
              calls: p.calls,
            },
          }
        : {
            ...base,
            type: 'task.state',
            decision: p.state,
            details: {
              task_id: t.id,
              step: t.step,
              ...(p.question ? { question: p.question.kind } : {}),
              ...(t.error ? { error: t.error.code } : {}),
            },
          };
    this.o.audit
      .append(record)
      .catch((e: unknown) => this.o.logger.warn({ err: e, task: t.id }, 'task audit entry failed'));
  }

  private emit(t: TaskRecord, p: ExecutorProgress): void {
    const corr = { correlation_id: t.correlation_id, session_id: t.session_id, target: 'executor' };
    if (p.kind === 'text') {
      // only the prose before the JSON decision block, in pieces
      const l = this.live.get(t.id);
      if (!l) return;
      if (l.text.step !== p.step) l.text = { step: p.step, acc: '', sent: 0 };
      l.text.acc += p.delta;
      const vis = visibleText(l.text.acc);
      if (vis.length <= l.text.sent) return;
      const delta = vis.slice(l.text.sent);
      l.text.sent = vis.length;
      this.o.events.emit('TASK_STATE', corr, { task_id: t.id, kind: 'text', step: p.step, delta });
      return;
    }
    this.auditProgress(t, p);
    if (p.kind === 'decision' && this.o.confidence) {
      const principal = this.workspaces.principalOf(t.id);
      if (principal) this.o.confidence.set(principal, p.confidence);
    }
    const data: Record<string, unknown> = { task_id: t.id, ...p };
    if (p.kind === 'state') Object.assign(data, { step: t.step, usage: t.usage, summary: t.summary ?? null });
    this.o.events.emit('TASK_STATE', corr, data);
    // the task's executor will not run again: its counter and breakers leave the safety store
    if (p.kind === 'state' && isTerminal(p.state))
      this.o.safety
        ?.retireAgent?.(executorAgent(t.id))
        .catch((e: unknown) => this.o.logger.warn({ err: e, task: t.id }, 'cannot forget the task’s safety state'));
  }
}

/** The guardrail's §3.7 parse, in the executor's shape: a failure carries its reasons (→ a person decides). */
export const parseTaskDecision: DecisionParser = (text) => {
  const r = parseLlmDecision(text);
  return r.outcome === 'ok' ? { decision: r.decision } : { decision: r.decision, errors: r.errors };
};
