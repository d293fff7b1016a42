/**
 * The IngressSupervisorAgent (§3.5, §3.6): ordinary text sent to finger lands here. It asks the
 * RouterEngine for a decision over what the supervisor role may reach, audits the decision with
 * every model attempt, and acts: dispatches through the hub as its own principal (grants and the
 * firewall judge the call), answers directly, hands the decision to a person, or refuses.
 */
import type { AuditRecord } from '@finger/firewall';
import { FingerError, toErrorInfo } from '@finger/protocol';

import type { AgentContext } from '../agent/agent.js';
import {
  type AgentOutcome,
  type AgentTurn,
  BaseAgent,
  type BaseAgentOptions,
  type Reach,
  sessionKey,
} from '../agent/base-agent.js';
import type {
  GuardrailOutcome,
  GuardrailRegistry,
  RouterDecision,
  RouterDecisionKind,
} from '../guardrail/guardrail-types.js';
import { routeAuditRecord } from './route-audit.js';
import type { RouterEngine, RouteResult } from './router-engine.js';

/** What the supervisor answers its caller (the gateway puts `reply` in the HTTP result). */
export interface RouteReply {
  decision: RouterDecisionKind;
  /** The tool id dispatched to (or proposed to a person); null for replies without a target. */
  target: string | null;
  /** The target's result, the direct answer, or the message telling that a person must decide. */
  reply: unknown;
  confidence: number;
  reason: string;
  requires_human: boolean;
  /** Why the guardrail did not accept the answer as-is (ask_human / reject outcomes). */
  reason_code?: string;
  /** How many times the model was asked (1 = no re-ask). */
  attempts: number;
  /** A `/hub` command a person may run to carry out the proposed dispatch themselves. */
  suggestion?: string;
}

/** The decision the template carries from `decide` to `act`. */
export interface RoutePlan {
  /** Set only for a dispatch that runs without a person: what `validate` checks. */
  target: string | null;
  route: RouteResult;
  /** Tool id of the decision's target (dispatches), resolved through the hub. */
  tool_id: string | null;
}

/** Where the routing decision is audited (the daemon's AuditLog satisfies it). */
export interface RouteAuditSink {
  append(record: AuditRecord): Promise<unknown>;
}

/** Options of {@link IngressSupervisorAgent}. */
export interface IngressSupervisorOptions extends Omit<BaseAgentOptions, 'id' | 'role'> {
  /** Default `supervisor`. */
  id?: string;
  engine: RouterEngine;
  /** Without it decisions are not audited (tests only). */
  audit?: RouteAuditSink;
  /** Timeout of the dispatched call (default: the hub's, capped by the caller's deadline). */
  dispatch_timeout_ms?: number;
}

/** Targets the guardrail may accept: agents, granted tool ids, and module ids that name one granted tool. */
function guardrailRegistry(reach: Reach, resolve: (target: string) => string | undefined): GuardrailRegistry {
  const tools = reach.tool_ids.filter((id) => !reach.agents.some((a) => id.startsWith(`${a}.`)));
  const modules = reach.modules.filter((m) => {
    const t = resolve(m);
    return t !== undefined && tools.includes(t);
  });
  return { agents: reach.agents, modules: [...modules, ...tools], high_risk: reach.high_risk };
}

function isDispatch(d: RouterDecision): boolean {
  return d.decision === 'dispatch_module' || d.decision === 'dispatch_agent';
}

/** The text of a direct reply: `payload.text` when a string, else the reason. */
function directText(d: RouterDecision): string {
  const t = d.payload.text;
  return typeof t === 'string' ? t : d.reason;
}

/** See the file comment. Registered with id `supervisor` and role `supervisor` by the daemon. */
export class IngressSupervisorAgent extends BaseAgent<RoutePlan, RouteReply> {
  readonly #engine: RouterEngine;
  readonly #audit: RouteAuditSink | undefined;
  readonly #timeout: number | undefined;

  constructor(options: IngressSupervisorOptions) {
    super({ ...options, id: options.id ?? 'supervisor', role: 'supervisor' });
    this.#engine = options.engine;
    this.#audit = options.audit;
    this.#timeout = options.dispatch_timeout_ms;
  }

  protected override async decide(turn: AgentTurn, ctx: AgentContext): Promise<RoutePlan> {
    const hub = this.services.hub;
    const resolve = (t: string): string | undefined => {
      try {
        return hub.resolveTarget(t).tool_id;
      } catch {
        return undefined;
      }
    };
    const registry = guardrailRegistry(turn.reach, resolve);
    const route = await this.#engine.route(
      {
        text: turn.text,
        snapshot: turn.snapshot,
        agents: turn.reach.agents,
        session_summary: turn.session_summary,
        feedback: turn.feedback,
        registry,
      },
      ctx.signal,
    );
    const o = route.outcome;
    const d = o.decision;
    const tool_id = d !== undefined && d.target !== null && isDispatch(d) ? (resolve(d.target) ?? null) : null;
    ctx.emit('ROUTE_DECIDED', decidedData(o, route, tool_id), tool_id ?? this.id);
    // One JSON_REPAIRED per answer the guardrail changed (re-asked answers included).
    for (const a of route.attempts) {
      if (a.outcome.repairs.length > 0)
        ctx.emit('JSON_REPAIRED', { attempt: a.n, outcome: a.outcome.outcome, repairs: a.outcome.repairs });
    }
    // Audited before anything is acted on; an audit log that cannot be written stops the routing.
    if (this.#audit !== undefined) await this.#audit.append(routeAuditRecord(ctx, route, tool_id));
    const runs = o.outcome === 'ok' && d !== undefined && isDispatch(d) && !d.requires_human && tool_id !== null;
    return { target: runs ? tool_id : null, route, tool_id };
  }

  protected override async act(plan: RoutePlan, turn: AgentTurn, ctx: AgentContext): Promise<AgentOutcome<RouteReply>> {
    const o = plan.route.outcome;
    const d = o.decision;
    const attempts = plan.route.attempts.length;
    if (o.outcome === 'reject' || d?.decision === 'reject') {
      throw new FingerError('E_ROUTE_FAILED', `the router refused the input: ${d?.reason || reasonOf(o)}`, {
        decision: 'reject',
        reason_code: o.outcome === 'ok' ? 'model_rejected' : o.reason_code,
        attempts,
      });
    }
    const base = (decision: RouterDecisionKind, reply: unknown): RouteReply => ({
      decision,
      target: plan.tool_id,
      reply,
      confidence: d?.confidence ?? 0,
      reason: d?.reason ?? '',
      requires_human: d?.requires_human ?? true,
      ...(o.outcome !== 'ok' ? { reason_code: o.reason_code } : {}),
      attempts,
    });
    if (plan.target !== null && d !== undefined) {
      const payload =
        d.decision === 'dispatch_agent' && Object.keys(d.payload).length === 0 ? { text: turn.text } : d.payload;
      ctx.emit('DISPATCH_SENT', { target: plan.target, blocking: true, decision: d.decision }, plan.target);
      let result: unknown;
      try {
        result = await ctx.call(plan.target, payload, this.#timeout !== undefined ? { timeout_ms: this.#timeout } : {});
      } catch (e) {
        ctx.emit('DISPATCH_RESULT', { ok: false, error: toErrorInfo(e) }, plan.target);
        throw e;
      }
      ctx.emit('DISPATCH_RESULT', { ok: true }, plan.target);
      return { result: base(d.decision, result), record: { decision: `${d.decision} ${plan.target}`, outcome: 'ok' } };
    }
    if (o.outcome === 'ok' && d?.decision === 'direct_reply') {
      return { result: base('direct_reply', directText(d)), record: { decision: 'direct_reply', outcome: 'ok' } };
    }
    // ask_human: the model asked for a person, the guardrail could not accept the answer, or a
    // dispatch needs a person's confirmation. Nothing runs; the person may run the suggestion.
    const why = d?.reason || reasonOf(o);
    const reply = base('ask_human', `A person must decide: ${why}`);
    reply.requires_human = true;
    if (plan.tool_id !== null && d !== undefined) {
      reply.suggestion = `/hub target=${plan.tool_id} ${JSON.stringify(d.payload)}`;
      reply.reply = `A person must confirm ${d.decision} to ${plan.tool_id}: ${why}. To run it: ${reply.suggestion}`;
    }
    return {
      result: reply,
      event: {
        type: 'ROUTE_FAILED',
        data: {
          outcome: 'ask_human',
          requires_human: true,
          reason_code: reply.reason_code ?? 'requires_human',
          reason: why,
        },
      },
      record: { decision: d?.decision ?? 'ask_human', outcome: `ask_human (${reply.reason_code ?? 'requires_human'})` },
    };
  }

  protected override onError(error: unknown, turn: AgentTurn | undefined, ctx: AgentContext): Promise<RouteReply> {
    const info = toErrorInfo(error);
    ctx.emit('ROUTE_FAILED', { outcome: 'error', error: info });
    if (turn !== undefined)
      this.memory.record(sessionKey(ctx), { input: turn.text, decision: 'route', outcome: info.code });
    return Promise.reject(error);
  }
}

function reasonOf(o: GuardrailOutcome): string {
  if (o.outcome === 'ok') return o.decision.reason;
  return `${o.reason_code}${o.errors.length > 0 ? ` (${o.errors.slice(0, 3).join('; ')})` : ''}`;
}

function decidedData(o: GuardrailOutcome, route: RouteResult, tool_id: string | null): Record<string, unknown> {
  const d = o.decision;
  const data: Record<string, unknown> = {
    outcome: o.outcome,
    decision: d?.decision ?? o.outcome,
    target: tool_id ?? d?.target ?? null,
    confidence: d?.confidence ?? 0,
    requires_human: d?.requires_human ?? true,
    attempts: route.attempts.length,
    provider: route.provider,
    model: route.model,
  };
  if (o.outcome !== 'ok') data.reason_code = o.reason_code;
  return data;
}
