// The ExecutorAgent (§3.7, §3.15 "Supervised"): the model proposes LLMDecisions, every tool call
// goes through the hub (grants, firewall, human gate, breakers), results come back summarised and
// classified, until the person confirms completion, a person stops it, or a breaker does. The
// loop orchestrates plugins and makes no security judgement. The task is checkpointed after the
// decision and after every tool call, so a resume continues from there without repeating work.

import { type ErrorInfo, FingerError, rfc3339, toErrorInfo } from '@finger/protocol';

import { shownErrors } from '../guardrail/snippet.js';
import { stopMessage, stopOf } from '../model/model-reply.js';
import { addTally, callCost, type CostTally, emptyTally } from '../tasks/cost.js';
import { createPlan, renderPlan, revisePlan } from '../tasks/plan.js';
import { type TaskEvent, transition } from '../tasks/task-state.js';
import type { CurrentStep, TaskQuestion, TaskRecord, TaskToolCall } from '../tasks/task-types.js';
import { appendEntry, type ContextEntryKind, estimateTokens } from './context-window.js';
import type { ExecutorOptions, HumanAnswer } from './executor-types.js';
import { classifyResult, summariseResult } from './result-summary.js';

/** How a run is steered from outside: `signal` stops at once, `stopRequested` after the current step. */
export interface RunControl {
  signal: AbortSignal;
  stopRequested(): boolean;
}

/** Ends the loop with a task state change. */
class Stop extends Error {
  constructor(
    readonly event: TaskEvent,
    readonly error?: ErrorInfo,
  ) {
    super(event);
  }
}

/** Why a run was aborted (E_HALTED by default), for the task's `error`. */
function abortInfo(signal: AbortSignal): ErrorInfo {
  const r: unknown = signal.reason;
  return r instanceof FingerError ? toErrorInfo(r) : { code: 'E_HALTED', message: 'the task was stopped at once' };
}

/** Error codes that end the task, and how. */
const ENDING: Readonly<Record<string, TaskEvent>> = {
  E_HALTED: 'stop',
  E_LOOP_DETECTED: 'fail',
  E_SAFETY_LOCKOUT: 'error_cascade',
  E_BUDGET_EXHAUSTED: 'fail',
  E_STORE_UNAVAILABLE: 'error_cascade',
};

/** See the file comment. One instance serves many tasks; `run` holds no state between calls. */
export class ExecutorAgent {
  private readonly clock: { now(): number };

  constructor(private readonly o: ExecutorOptions) {
    this.clock = o.clock ?? { now: () => Date.now() };
  }

  /**
   * Runs a PENDING task, or resumes a PAUSED / ERROR_PAUSED / INTERRUPTED one (E_CONFLICT for any
   * other state), until it completes, pauses, stops or fails. Resolves with the final record;
   * rejects only when a checkpoint cannot be written (E_STORE_UNAVAILABLE).
   */
  async run(input: TaskRecord, control: RunControl): Promise<TaskRecord> {
    // a task paused at its step budget gets another window of the same size when resumed
    const budget = input.state === 'PAUSED' && input.step >= input.max_steps ? input.max_steps : 0;
    const t = this.set(
      { ...input, max_steps: input.max_steps + budget },
      input.state === 'PENDING' ? 'start' : 'resume',
    );
    const agent_id = this.o.agent_id(t.id);
    await this.o.safety?.endTask?.(t.id);
    this.o.safety?.beginTask?.({ task_id: t.id, agent_id, max_steps: Math.max(1, t.max_steps - t.step) });
    try {
      return await this.loop(t, control);
    } finally {
      await this.o.safety?.endTask?.(t.id).catch(() => undefined);
    }
  }

  private async loop(input: TaskRecord, control: RunControl): Promise<TaskRecord> {
    let t = input;
    try {
      t = await this.resolveInFlight(t, control);
      t = await this.planIfNeeded(t, control);
      for (;;) {
        if (control.stopRequested()) throw new Stop('stop');
        if (control.signal.aborted) throw new Stop('stop', abortInfo(control.signal));
        this.o.safety?.assertOpen(this.o.agent_id(t.id));
        if (!t.current) {
          const next = await this.decide(t, control);
          if (next.state !== 'RUNNING') return next;
          t = next;
        }
        t = await this.runCalls(t, control);
        const cur = t.current!;
        t = this.save({
          ...t,
          step: cur.step,
          steps: [
            ...t.steps,
            { step: cur.step, thought: cur.thought, confidence: cur.confidence, calls: cur.calls, usage: cur.usage },
          ],
          current: undefined,
        });
        if (cur.human_required) {
          const why = cur.parse_errors?.length
            ? `the model's reply could not be read (${cur.parse_errors.join('; ')})`
            : `the model asks for you: ${cur.thought}`;
          t = await this.askAndContinue(t, { kind: 'human_required', message: why }, control);
        } else if (cur.done) {
          const summary = cur.summary || cur.thought;
          t = this.save({ ...t, summary });
          const q: TaskQuestion = { kind: 'confirm_done', message: `the model says the task is done: ${summary}` };
          const a = await this.ask(t, q, control);
          if (a.decision === 'confirm') {
            t = this.set({ ...t, question: undefined }, 'confirm_done');
            await this.rememberOutcome(t);
            return t;
          }
          t = this.afterAnswer(t, a, 'the person says the task is not done yet');
        }
      }
    } catch (e) {
      const stop = e instanceof Stop ? e : this.stopFor(e);
      if (!stop) throw e;
      const ended = this.set({ ...t, ...(stop.error ? { error: stop.error } : {}), question: undefined }, stop.event);
      if (ended.state !== 'PAUSED') await this.rememberOutcome(ended);
      return ended;
    }
  }

  /** The model call of one step: prompt, budget, streaming, parse. Leaves `current` set, or pauses. */
  private async decide(t0: TaskRecord, control: RunControl): Promise<TaskRecord> {
    let t = t0;
    const agent_id = this.o.agent_id(t.id);
    const step = t.step + 1;
    let final = step >= t.max_steps;
    if (step > t.max_steps) return this.set(t, 'max_steps');
    if (this.o.safety) {
      try {
        final = (await this.o.safety.recordStep({ agent_id, task_id: t.id })).final || final;
      } catch (e) {
        if ((e as FingerError).code === 'E_BUDGET_EXHAUSTED') return this.set(t, 'max_steps');
        throw e;
      }
    }
    this.o.progress(t, { kind: 'step', step, final });
    t = await this.reflect(t, step, control);
    t = this.o.context.compact(t);
    const constraints = this.o.hints?.(t.session_id) ?? [];
    const memories = this.o.memory
      ? (await this.o.memory.recall(t.text, { limit: 5 })).map((h) => `(${h.record.kind}) ${h.record.text}`)
      : [];
    const scratchpad = await this.o.scratchpad?.(t);
    const messages = this.o.context.build({
      task: t,
      tools: this.o.tools.granted(),
      memories,
      constraints,
      safety_prompt: this.o.safety_prompt,
      final_step: final,
      ...(scratchpad ? { scratchpad } : {}),
    });
    const estimate = messages.reduce((n, m) => n + estimateTokens(m.content), 0);
    await this.o.safety?.checkBudget({ agent_id, task_id: t.id, estimate_tokens: estimate });
    const signal = this.o.safety ? AbortSignal.any([control.signal, this.o.safety.haltSignal]) : control.signal;
    const reply = await this.o.model.complete(
      { messages, stream: true, estimated_input_tokens: estimate },
      { signal, onText: (delta) => this.o.progress(t, { kind: 'text', step, delta }) },
    );
    const usage = callCost(reply.usage, this.o.prices);
    await this.o.safety?.recordUsage({ agent_id, task_id: t.id, tokens: usage.input_tokens + usage.output_tokens });
    const total = addTally(t.usage, usage);
    this.o.progress(t, { kind: 'usage', step, step_usage: usage, total });
    // A reply the model did not finish (token limit), refused, or the provider filtered is never
    // read as a decision: no tool runs, the person is asked, with the reason.
    const stop = stopOf(reply);
    const { decision, errors } =
      stop === 'complete'
        ? this.o.parseDecision(reply.text)
        : {
            decision: { thought: '', tool_calls: [], confidence: 0, human_required: true, done: false },
            errors: [stopMessage(reply)],
          };
    const human_required = decision.human_required || (errors !== undefined && errors.length > 0);
    if (!errors?.length) this.o.recordConfidence?.(t.session_id, decision.confidence);
    const calls: TaskToolCall[] = final || human_required ? [] : decision.tool_calls;
    this.o.progress(t, {
      kind: 'decision',
      step,
      thought: decision.thought,
      confidence: decision.confidence,
      calls: calls.length,
      done: decision.done,
    });
    const plan = calls.map((c) => `${c.tool}(${JSON.stringify(c.args)})${c.intent ? ` — ${c.intent}` : ''}`);
    t = this.note(
      { ...t, usage: total },
      'step',
      step,
      `thought: ${decision.thought}${plan.length ? `\ncalls: ${plan.join('; ')}` : ''}`,
    );
    const current: CurrentStep = {
      step,
      thought: decision.thought,
      confidence: Number.isFinite(decision.confidence) ? decision.confidence : null,
      calls: [],
      usage,
      pending: calls,
      done: decision.done,
      human_required,
      ...(decision.summary ? { summary: decision.summary } : {}),
      ...(errors?.length ? { parse_errors: shownErrors(errors) } : {}),
    };
    if (final) {
      // the last summarising step: no tools, then PAUSED with a checkpoint
      const summary = decision.summary || decision.thought;
      const steps = [
        ...t.steps,
        { step, thought: decision.thought, confidence: current.confidence, calls: [], usage, final: true },
      ];
      return this.set({ ...t, step, steps, summary }, 'max_steps');
    }
    return this.save({ ...t, current });
  }

  /** Runs the pending calls of the current step one by one, checkpointing after each. */
  private async runCalls(t0: TaskRecord, control: RunControl): Promise<TaskRecord> {
    let t = t0;
    for (;;) {
      const cur = t.current!;
      const call = cur.pending[0];
      if (!call) return t;
      if (control.signal.aborted) throw new Stop('stop', abortInfo(control.signal));
      const request_id = `${t.id}-s${cur.step}-c${cur.calls.length + 1}`;
      const in_flight = { ...call, step: cur.step, request_id, idempotent: this.o.tools.isIdempotent(call.tool) };
      t = this.save({ ...t, in_flight });
      this.o.progress(t, { kind: 'tool_call', step: cur.step, call, request_id });
      let outcome: { result?: unknown; error?: ErrorInfo };
      try {
        const meta = { task_id: t.id, session_id: t.session_id, correlation_id: t.correlation_id, request_id };
        outcome = { result: await this.o.tools.call(call.tool, call.args, meta) };
      } catch (e) {
        outcome = { error: toErrorInfo(e) };
      }
      if (control.signal.aborted) throw new Stop('stop', abortInfo(control.signal));
      t = this.recordOutcome({ ...t, in_flight: undefined }, call, request_id, outcome);
      const code = outcome.error?.code;
      if (code && ENDING[code]) throw new Stop(ENDING[code]!, outcome.error);
    }
  }

  private recordOutcome(
    t0: TaskRecord,
    call: TaskToolCall,
    request_id: string,
    outcome: { result?: unknown; error?: ErrorInfo },
  ): TaskRecord {
    const cur = t0.current!;
    const cls = classifyResult(outcome);
    const summary = summariseResult(outcome);
    this.o.progress(t0, {
      kind: 'tool_result',
      step: cur.step,
      tool: call.tool,
      request_id,
      class: cls,
      ...(outcome.error ? { error: outcome.error } : {}),
    });
    let t = this.note(t0, 'result', cur.step, `${call.tool} → ${cls}: ${summary}`);
    const e = outcome.error;
    if (e?.code === 'E_REJECTED_BY_HUMAN') {
      t = this.note(
        t,
        'human',
        cur.step,
        `the person REJECTED ${call.tool}: ${e.message}. Avoid repeating that call; find another way or ask.`,
      );
    } else if (e?.code === 'E_DENIED_BY_POLICY' || e?.code === 'E_FORBIDDEN' || e?.code === 'E_APPROVAL_TIMEOUT') {
      t = this.note(t, 'signal', cur.step, `the firewall refused ${call.tool} (${e.code}): ${e.message}`);
    }
    const alert = (e?.details as { system_alert?: unknown } | undefined)?.system_alert;
    if (typeof alert === 'string') t = this.note(t, 'signal', cur.step, alert);
    const done = { ...call, request_id, class: cls, summary, ...(e ? { error: e } : {}) };
    const current: CurrentStep = { ...cur, calls: [...cur.calls, done], pending: cur.pending.slice(1) };
    return this.save({ ...t, current });
  }

  /** After a restart: an idempotent in-flight call is re-run; otherwise the person decides. */
  private async resolveInFlight(t0: TaskRecord, control: RunControl): Promise<TaskRecord> {
    const f = t0.in_flight;
    if (!f || !t0.current) return f ? this.save({ ...t0, in_flight: undefined }) : t0;
    if (f.idempotent) return this.save({ ...t0, in_flight: undefined });
    const a = await this.ask(
      t0,
      {
        kind: 'in_flight',
        message: `${f.tool} ${JSON.stringify(f.args)} was running when the daemon stopped; its outcome is unknown. Re-run it (confirm) or skip it?`,
      },
      control,
    );
    const t = { ...t0, in_flight: undefined };
    if (a.decision === 'confirm') return this.save(t);
    const call = t.current!.pending[0]!;
    const outcome = {
      error: {
        code: 'E_CONFLICT',
        message: `not re-run after a restart (the person chose to skip it); its effect is unknown`,
      },
    };
    return this.recordOutcome(t, call, f.request_id, outcome);
  }

  /** At every `reflect_every`-th step (not the first), the planner may revise the rest of the plan. */
  private async reflect(t: TaskRecord, step: number, control: RunControl): Promise<TaskRecord> {
    const every = this.o.reflect_every ?? 5;
    const revise = this.o.planner?.revise?.bind(this.o.planner);
    if (!revise || !t.plan || t.plan.subtasks.length === 0 || every <= 0 || step === 1 || (step - 1) % every !== 0)
      return t;
    const model = this.o.secondary_model ?? this.o.model;
    const history = t.context.entries.map((e) => `[step ${e.step} ${e.kind}] ${e.text}`).join('\n');
    const r = await revise({ task: t.text, plan: renderPlan(t.plan), history }, model, control.signal);
    const usage = addTally(t.usage, r.usage);
    if (!r.subtasks) return this.save({ ...t, usage });
    const plan = revisePlan(t.plan, r.subtasks);
    const next = this.note({ ...t, plan, usage }, 'note', step, `plan revised (revision ${plan.revision})`);
    return this.save(next);
  }

  private async planIfNeeded(t: TaskRecord, control: RunControl): Promise<TaskRecord> {
    if (!this.o.planner || t.plan || t.step > 0 || t.current) return t;
    const model = this.o.secondary_model ?? this.o.model;
    const { subtasks, usage } = await this.o.planner.plan(t.text, model, control.signal);
    return this.save({ ...t, plan: createPlan(subtasks), usage: addTally(t.usage, usage) });
  }

  private async askAndContinue(t: TaskRecord, q: TaskQuestion, control: RunControl): Promise<TaskRecord> {
    const a = await this.ask(t, q, control);
    return this.afterAnswer(t, a, 'the person answered');
  }

  /** WAITING_HUMAN until the person answers; `stop` ends the task. */
  private async ask(t0: TaskRecord, question: TaskQuestion, control: RunControl): Promise<HumanAnswer> {
    const t = this.set({ ...t0, question }, 'wait_human');
    let a: HumanAnswer;
    try {
      a = await this.o.human.ask(t, control.signal);
    } catch (e) {
      if (control.signal.aborted) throw new Stop('stop', abortInfo(control.signal));
      throw e;
    }
    if (a.decision === 'stop') throw new Stop('stop');
    return a;
  }

  private afterAnswer(t0: TaskRecord, a: HumanAnswer, lead: string): TaskRecord {
    let t = this.set({ ...t0, question: undefined }, 'human_answered');
    if (a.message?.trim()) t = this.save(this.note(t, 'human', t.step, `${lead} (${a.by}): ${a.message.trim()}`));
    return t;
  }

  private stopFor(e: unknown): Stop | undefined {
    const info = toErrorInfo(e);
    const event = ENDING[info.code];
    if (event) return new Stop(event, info);
    if (info.code === 'E_LLM_UNAVAILABLE' || info.code === 'E_TIMEOUT') return new Stop('error_cascade', info);
    if (e instanceof FingerError) return new Stop('fail', info);
    return undefined;
  }

  private async rememberOutcome(t: TaskRecord): Promise<void> {
    if (!this.o.memory) return;
    const rejected = t.steps.flatMap((s) => s.calls).filter((c) => c.error?.code === 'E_REJECTED_BY_HUMAN');
    try {
      for (const c of rejected) {
        await this.o.memory.remember({
          kind: 'preference',
          tool: c.tool,
          verdict: 'rejected',
          task_id: t.id,
          text: `task "${t.text}": the person rejected ${c.tool} ${JSON.stringify(c.args).slice(0, 200)} — ${c.error!.message}`,
        });
      }
      await this.o.memory.remember({
        kind: 'outcome',
        verdict: t.state,
        task_id: t.id,
        text: `task "${t.text}" ended ${t.state} after ${t.step} steps${t.summary ? `: ${t.summary}` : ''}`,
      });
    } catch {
      // memory is best effort; the checkpoint holds the truth
    }
  }

  private note(t: TaskRecord, kind: ContextEntryKind, step: number, text: string): TaskRecord {
    return { ...t, context: appendEntry(t.context, { kind, step, text }) };
  }

  private set(t: TaskRecord, event: TaskEvent): TaskRecord {
    const state = transition(t.state, event);
    const next = this.save({ ...t, state });
    this.o.progress(next, { kind: 'state', state, ...(next.question ? { question: next.question } : {}) });
    return next;
  }

  private save(t: TaskRecord): TaskRecord {
    const next = { ...t, updated_at: rfc3339(this.clock.now()) };
    this.o.checkpoint(next);
    return next;
  }
}

/** A fresh PENDING task record. */
export function newTask(p: {
  id: string;
  text: string;
  workspace: string;
  owner: string;
  max_steps: number;
  now: number;
}): TaskRecord {
  const at = rfc3339(p.now);
  return {
    id: p.id,
    text: p.text,
    workspace: p.workspace,
    state: 'PENDING',
    owner: p.owner,
    session_id: `task-${p.id}`,
    correlation_id: `task-${p.id}`,
    created_at: at,
    updated_at: at,
    max_steps: p.max_steps,
    step: 0,
    plan: null,
    context: { entries: [], archive: [], next_seq: 1 },
    steps: [],
    usage: emptyTally() as CostTally,
  };
}
