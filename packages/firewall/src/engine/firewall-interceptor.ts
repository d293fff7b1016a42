// The firewall as a hub interceptor: builds ToolCallFacts from the hub call, asks the engine,
// emits FIREWALL_VERDICT, writes the `tool.call` audit entry (before anything runs), then runs,
// refuses, or holds the call for a person.

import { FingerError } from '@finger/protocol';

import type { AuditRecord } from '../audit/audit-entry.js';
import { bindingHolds } from '../gate/binding.js';
import type { VerdictEvents } from '../grants/grant-interceptor.js';
import { cachedVerdicts } from './cached-verdicts.js';
import { type FirewallCall, type FirewallTools, toolOf } from './call-facts.js';
import { evaluatedVerdicts, type VerdictSource } from './call-verdicts.js';
import { CACHED_ALLOW } from './engine-evaluation.js';
import type { Evaluation, ToolCallFacts } from './evaluation.js';
import type { FirewallEvaluator } from './firewall-evaluator.js';

/** What a HumanGate's answer to a hold must say. */
export interface FirewallGateDecision {
  approved: boolean;
  /** The arguments to run (edited ones when the person edited them). */
  args?: unknown;
  reason?: string;
  /** Refused: the error code to throw (default E_REJECTED_BY_HUMAN). */
  code?: string;
  /** The engine's verdict on edited arguments. */
  evaluation?: Evaluation;
  /** What the approval covers (args digest, file hash). */
  binding?: { args_digest: string; file_sha256?: string | null };
  approval_id?: string;
}

/** The HumanGate as the interceptor uses it. */
export interface FirewallGate {
  hold(ev: Evaluation, facts: ToolCallFacts): Promise<FirewallGateDecision>;
}

export type { FirewallCall, FirewallTools } from './call-facts.js';
export type { FirewallEvaluator } from './firewall-evaluator.js';

/**
 * Where the interceptor hands a call's sandbox profile to the module that runs it (the daemon's
 * Sandbox): by the hub's execution id, which the module sees as `ctx.call_id` — out of band, so
 * no payload field can choose or drop it.
 */
export interface SandboxProfileChannel {
  /** `network`: the profile's package-registry proxy is on for this call (the verdict's `sandbox_network`). */
  assign(call_id: string, profile: 'workspace-write', network?: 'registries'): void;
  release(call_id: string): void;
  /**
   * The paths the module hard-links into the undo store before call `call_id` runs (the verdict's
   * `undo_snapshot`), handed over with {@link assign}. A channel without it refuses such a call.
   */
  snapshotFor?(call_id: string, paths: readonly string[]): void;
}

/** How the interceptor is built. */
export interface FirewallInterceptorOptions {
  engine: FirewallEvaluator;
  /** Tool metadata with the registry's defaults; without it the manifest's spec is used, missing fields at their worst case. */
  tools?: FirewallTools;
  events?: VerdictEvents;
  /**
   * When set, every verdict is appended as `tool.call` and the call waits for it (E_STORE_UNAVAILABLE:
   * it does not run) — through `commit` when the log has it (an AuditLog: durable, no entry object
   * built), else `append`.
   */
  audit?: { append(record: AuditRecord): Promise<unknown>; commit?(record: AuditRecord): Promise<unknown> };
  /** Without a gate every hold is refused: E_DENIED_BY_POLICY, "no approval channel". */
  gate?: FirewallGate;
  /** The model's self-reported confidence for the call, if the caller knows it. */
  confidenceOf?: (call: FirewallCall) => number | undefined;
  /** How many times a call whose file changed after approval is held again before it is refused (default 3). */
  max_holds?: number;
  /**
   * Emit FIREWALL_VERDICT for plain AUTO allows too (default false: those are in the audit log;
   * NOTIFY, holds, denials and waived levels always emit). An event per AUTO call costs about as
   * much as the whole evaluation when the event bus persists events.
   */
  auto_events?: boolean;
  /**
   * Hands `sandbox_profile` of a verdict to the module for the call's run (see
   * {@link SandboxProfileChannel}). Without it a verdict that names a profile is refused
   * (E_NO_SANDBOX): the call was let through only because it would run there.
   */
  sandboxProfiles?: SandboxProfileChannel;
}

/**
 * An interceptor in the hub's `(call, next) => …` shape; `pass` (set when plain AUTO allows write
 * neither an event nor an audit entry) answers true for a call the verdict cache lets through as it
 * is, so the hub need not run the interceptor at all (see the hub's Interceptor.pass).
 */
export type FirewallInterceptor = ((call: FirewallCall, next: () => Promise<unknown>) => Promise<unknown>) & {
  pass?: (call: FirewallCall) => boolean;
};

function argsOf(ev: Evaluation, fallback: unknown): unknown {
  return ev.args !== undefined ? ev.args : fallback;
}

/**
 * The firewall interceptor. `allow`/`notify` → the call runs with the filtered arguments; `deny`
 * → E_DENIED_BY_POLICY (E_INVALID_ARGS when the argument filter refused), details
 * `{evaluation}`; `hold` → `gate.hold()`: approved → the call runs (with edited arguments when
 * given) once the file the preview was made from is unchanged — otherwise it is evaluated and
 * held again; refused → the gate's code (E_REJECTED_BY_HUMAN, E_APPROVAL_TIMEOUT, …) with its
 * reason. No gate: a hold is refused (fail safe).
 */
export function createFirewallInterceptor(o: FirewallInterceptorOptions): FirewallInterceptor {
  const maxHolds = o.max_holds ?? 3;

  const autoEvents = o.auto_events === true;
  // nothing keeps a plain AUTO allow's Evaluation unless an event or an audit entry is written for it
  const lean = !autoEvents && o.audit === undefined;
  // read once: the options objects of differently configured interceptors differ in shape
  const { engine, tools, confidenceOf } = o;
  const log = o.audit;
  const audit: ((record: AuditRecord) => Promise<unknown>) | undefined =
    log === undefined ? undefined : log.commit !== undefined ? log.commit.bind(log) : log.append.bind(log);
  // every call is evaluated; with a lean engine that has a verdict cache, the cache decorates that
  const evaluated = evaluatedVerdicts(engine, lean);
  const source: VerdictSource =
    lean && engine.evaluateCached !== undefined
      ? cachedVerdicts(engine as Required<Pick<FirewallEvaluator, 'evaluateCached'>>, evaluated, {
          tools,
          confidenceOf,
        })
      : evaluated;

  /** Emits the verdict event; returns the audit append to wait for (undefined without an audit log). */
  const verdict = (call: FirewallCall, facts: ToolCallFacts, ev: Evaluation): Promise<unknown> | undefined => {
    const env = call.envelope;
    if (o.events !== undefined && (autoEvents || ev.level !== 'AUTO' || ev.waived !== undefined)) {
      const data: Record<string, unknown> = {
        tool: facts.tool_id,
        decision_id: ev.decision_id,
        action: ev.action,
        level: ev.level,
        layer: ev.layer,
        matched_rules: ev.matched_rules.map((r) => `${r.source}:${r.id}`),
        reasons: ev.reasons,
        principal: { kind: facts.principal.kind, id: facts.principal.id },
        direct: facts.direct,
      };
      if (ev.waived !== undefined) data.waived = ev.waived;
      o.events.emit(
        'FIREWALL_VERDICT',
        {
          request_id: env.request_id,
          correlation_id: env.correlation_id,
          session_id: env.session_id,
          workflow_id: env.workflow_id,
          target: env.target,
        },
        data,
      );
    }
    if (audit === undefined) return undefined;
    return audit({
      type: 'tool.call',
      actor: { kind: facts.principal.kind, id: facts.principal.id },
      request_id: env.request_id,
      correlation_id: env.correlation_id,
      tool: facts.tool_id,
      args: argsOf(ev, facts.args),
      verdict: ev,
      decision: ev.action,
    });
  };

  const run = (
    call: FirewallCall,
    args: unknown,
    next: () => Promise<unknown>,
    verdict?: Pick<Evaluation, 'sandbox_profile' | 'sandbox_network'>,
  ): Promise<unknown> => {
    if (args !== call.envelope.payload) call.envelope.payload = args;
    const profile = verdict?.sandbox_profile;
    if (profile === undefined) return next();
    const id = call.envelope.id;
    const channel = o.sandboxProfiles;
    const snapshot = (verdict as Pick<Evaluation, 'undo_snapshot'> | undefined)?.undo_snapshot;
    if (snapshot !== undefined && channel !== undefined && channel.snapshotFor === undefined)
      throw new FingerError(
        'E_NO_SANDBOX',
        'the delete was let through because a snapshot makes it undoable, and there is no way to hand over its paths: refused',
        { profile },
      );
    if (channel === undefined || id === undefined)
      throw new FingerError(
        'E_NO_SANDBOX',
        `the call may run only in the ${profile} sandbox, and there is no way to hand it that profile: refused`,
        { profile },
      );
    if (verdict?.sandbox_network !== undefined) channel.assign(id, profile, verdict.sandbox_network);
    else channel.assign(id, profile);
    if (snapshot !== undefined) channel.snapshotFor!(id, snapshot);
    return next().finally(() => channel.release(id));
  };

  const refuse = (ev: Evaluation): never => {
    if (ev.error !== undefined)
      throw new FingerError(ev.error.code as 'E_INVALID_ARGS', ev.error.message, ev.error.details);
    throw new FingerError(
      'E_DENIED_BY_POLICY',
      `denied by policy (${ev.layer}): ${ev.reasons.filter((r) => r.startsWith('DENY')).join('; ') || ev.reasons.join('; ')}`,
      {
        evaluation: ev,
      },
    );
  };

  /** After the verdict is recorded: run, refuse, or hold (and hold again while what would run is not what was approved). */
  const settle = async (
    call: FirewallCall,
    facts: ToolCallFacts,
    ev: Evaluation,
    next: () => Promise<unknown>,
  ): Promise<unknown> => {
    for (let holds = 0; ; holds++) {
      if (ev.action === 'allow' || ev.action === 'notify') return run(call, argsOf(ev, facts.args), next, ev);
      if (ev.action === 'deny') refuse(ev);
      if (o.gate === undefined)
        throw new FingerError(
          'E_DENIED_BY_POLICY',
          `held at ${ev.level} but there is no approval channel: refused (fail safe)`,
          { evaluation: ev },
        );
      if (holds >= maxHolds)
        throw new FingerError('E_REJECTED_BY_HUMAN', `the call changed after approval ${holds} times: refused`, {
          evaluation: ev,
        });
      const heldAt = Date.now();
      const d = await o.gate.hold(ev, facts);
      // the call's own time budget starts when the person has answered, not before: without
      // this an approval slower than the call's timeout would run into E_TIMEOUT at once.
      // Bounded: the gate's own timeout bounds how long a hold can last.
      shiftDeadline(call, Date.now() - heldAt);
      if (!d.approved)
        throw new FingerError((d.code ?? 'E_REJECTED_BY_HUMAN') as 'E_REJECTED_BY_HUMAN', d.reason ?? 'rejected', {
          evaluation: ev,
          ...(d.approval_id !== undefined ? { approval_id: d.approval_id } : {}),
          ...(d.reason !== undefined ? { reason: d.reason } : {}),
        });
      const approved = d.evaluation ?? ev;
      if (approved.action === 'deny') refuse(approved);
      const args = d.args !== undefined ? d.args : argsOf(approved, facts.args);
      if (approvalHolds(engine, approved, d, args)) return run(call, args, next, approved);
      // what was shown is not what would run: evaluate again and hold again
      facts = { ...facts, args };
      facts = (await o.engine.withResolvedHosts?.(facts)) ?? facts;
      ev = o.engine.evaluate(facts, { record: false });
      await verdict(call, facts, ev);
    }
  };

  /** Records the verdict, then runs, refuses or holds the call. */
  const act = (
    call: FirewallCall,
    facts: ToolCallFacts,
    ev: Evaluation,
    next: () => Promise<unknown>,
  ): Promise<unknown> => {
    const recorded = verdict(call, facts, ev);
    if (recorded !== undefined) return recorded.then(() => settle(call, facts, ev, next));
    // the AUTO path without an audit log: no extra promise before the call runs
    if (ev.action === 'allow' || ev.action === 'notify') return run(call, argsOf(ev, facts.args), next, ev);
    return settle(call, facts, ev, next);
  };

  const interceptor: FirewallInterceptor = (call, next) => {
    try {
      const v = source.verdict(call, toolOf(call, tools), confidenceOf?.(call));
      // the engine ran nothing that changes the arguments: they go as they came
      if (v === CACHED_ALLOW) return next();
      // host names were being resolved (any thenable: the engine is an interface)
      if ('then' in v) return v.then((w) => (w === CACHED_ALLOW ? next() : act(call, w.facts, w.ev, next)));
      return act(call, v.facts, v.ev, next);
    } catch (e) {
      return Promise.reject(e);
    }
  };
  if (source.pass !== undefined) interceptor.pass = source.pass;
  return interceptor;
}

/** Moves the call's deadline (and lease expiry) later by `ms`. */
function shiftDeadline(call: FirewallCall, ms: number): void {
  const env = call.envelope;
  if (ms <= 0) return;
  if (env.deadline !== undefined) env.deadline += ms;
  if (env.lease !== undefined) env.lease.expires_at += ms;
}

/**
 * The one binding check ({@link bindingHolds}) on an approval about to run: the arguments are the
 * approved ones and the file the preview was made from still has the hash the approval bound —
 * or, when the gate bound none, the hash the preview showed (the stricter reading). An approval
 * that binds nothing does not hold: the call is held again (deny by default).
 */
function approvalHolds(engine: FirewallEvaluator, ev: Evaluation, d: FirewallGateDecision, args: unknown): boolean {
  const preview = ev.preview;
  let binding = d.binding;
  if (binding !== undefined && binding.file_sha256 === undefined && preview?.file_sha256 !== undefined)
    binding = { ...binding, file_sha256: preview.file_sha256 };
  let current: string | null | undefined;
  // a file hash is bound but no path says which file to recheck: `undefined`, which never holds
  if (binding?.file_sha256 !== undefined && preview?.path !== undefined) {
    try {
      current = engine.fileSha256(preview.path);
    } catch {
      return false;
    }
  }
  return bindingHolds(
    binding === undefined ? { approved: d.approved } : { approved: d.approved, binding },
    args,
    current,
  );
}
