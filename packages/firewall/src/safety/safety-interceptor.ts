import { FingerError } from '@finger/protocol';

import type { GrantCall } from '../grants/grant-interceptor.js';
import type { SafetyMonitor } from './safety-monitor.js';

/** What the safety interceptor needs of a hub call (the hub's `HubCall` satisfies it). */
export interface SafetyCall extends GrantCall {
  readonly envelope: GrantCall['envelope'] & { readonly payload: unknown };
}

/** An interceptor in the hub's `(call, next) => …` shape. */
export type SafetyInterceptor = (call: SafetyCall, next: () => Promise<unknown>) => Promise<unknown>;

/** Refusals by the firewall or a person: they feed the denial breaker. */
export const DENIAL_CODES: ReadonlySet<string> = new Set([
  'E_DENIED_BY_POLICY',
  'E_REJECTED_BY_HUMAN',
  'E_APPROVAL_TIMEOUT',
  'E_FORBIDDEN',
]);

/** Refusals of the safety layer itself, and a call its caller withdrew: neither a denial nor a tool failure. */
const SAFETY_CODES: ReadonlySet<string> = new Set([
  'E_HALTED',
  'E_SAFETY_LOCKOUT',
  'E_LOOP_DETECTED',
  'E_BUDGET_EXHAUSTED',
  'E_WITHDRAWN',
]);

function codeOf(e: unknown): string {
  return e instanceof FingerError
    ? e.code
    : typeof (e as { code?: unknown })?.code === 'string'
      ? (e as { code: string }).code
      : 'E_INTERNAL';
}

/** Options of {@link createSafetyInterceptor}. */
export interface SafetyInterceptorOptions {
  /**
   * True for a denial that is not the agent's fault — a rejection the person marked
   * `agent_fault: false`, or a refused edit of theirs (HumanGate.isExcused): it does not count
   * toward the denial breaker (nor as a success).
   */
  excused?: (error: unknown) => boolean;
}

/**
 * The outermost interceptor of the hub chain (before grants): refuses every call with E_HALTED
 * while a halt runs and E_SAFETY_LOCKOUT while the system (or the calling agent) is locked. A
 * halt fails the calls already running through the hub's `abortAll` (their callers get
 * E_HALTED). For agent principals it records the outcome: denials (E_DENIED_BY_POLICY,
 * E_REJECTED_BY_HUMAN, E_APPROVAL_TIMEOUT, E_FORBIDDEN) feed the denial breaker, other results
 * the repeated-failure and error-cascade breakers. A failure that trips the repeated-failure
 * breaker reaches the caller as E_LOOP_DETECTED; at the alert threshold the caller's error
 * carries `details.system_alert`. An agent's call still waiting when a halt starts (e.g. held
 * for approval) fails with E_HALTED at once. Costs a human's call one lockout check; an agent's
 * success is synchronous bookkeeping.
 */
export function createSafetyInterceptor(
  monitor: SafetyMonitor,
  options: SafetyInterceptorOptions = {},
): SafetyInterceptor {
  const fence = new HaltFence(monitor);
  return (call, next) => {
    const src = call.envelope.source;
    const agent_id = src.kind === 'agent' ? src.id : undefined;
    try {
      monitor.assertOpen(agent_id);
    } catch (e) {
      return Promise.reject(e);
    }
    if (agent_id === undefined) return next();
    return fence.run(
      next(),
      (result, resolve, reject) => {
        const r = monitor.recordSuccess(agent_id);
        if (r === undefined) resolve(result);
        else r.then(() => resolve(result), reject);
      },
      (e, reject) => {
        onAgentError(monitor, agent_id, call, e, options.excused).catch(reject);
      },
    );
  };
}

type Settle = (v: unknown) => void;

/** Fails the agent calls still waiting when the monitor's halt signal aborts. */
class HaltFence {
  private signal: AbortSignal | undefined;
  private readonly waiting = new Set<Settle>();

  constructor(private readonly monitor: SafetyMonitor) {}

  /**
   * One promise per call: settles through `ok` / `fail` once `work` settles, or rejects with
   * E_HALTED as soon as a halt starts.
   */
  run(
    work: Promise<unknown>,
    ok: (result: unknown, resolve: Settle, reject: Settle) => void,
    fail: (e: unknown, reject: Settle) => void,
  ): Promise<unknown> {
    const signal = this.monitor.haltSignal;
    if (signal !== this.signal) {
      this.signal = signal;
      signal.addEventListener('abort', () => this.fail(), { once: true });
    }
    const waiting = this.waiting;
    return new Promise((resolve, reject) => {
      waiting.add(reject);
      work.then(
        (v) => {
          waiting.delete(reject);
          ok(v, resolve, reject);
        },
        (e: unknown) => {
          waiting.delete(reject);
          fail(e, reject);
        },
      );
    });
  }

  private fail(): void {
    const err = new FingerError('E_HALTED', 'the kill switch stopped the call');
    const all = [...this.waiting];
    this.waiting.clear();
    for (const reject of all) reject(err);
  }
}

async function onAgentError(
  monitor: SafetyMonitor,
  agent_id: string,
  call: SafetyCall,
  e: unknown,
  excused: ((error: unknown) => boolean) | undefined,
): Promise<never> {
  const code = codeOf(e);
  if (SAFETY_CODES.has(code)) throw e;
  if (monitor.haltSignal.aborted) throw new FingerError('E_HALTED', 'the kill switch stopped the call', { code });
  const env = call.envelope;
  const tool = call.resolved.tool_id;
  const correlation = {
    request_id: env.request_id,
    correlation_id: env.correlation_id,
    session_id: env.session_id,
    workflow_id: env.workflow_id,
  };
  if (DENIAL_CODES.has(code)) {
    if (excused?.(e) === true) throw e;
    await monitor.recordDenial({ agent_id, tool, code, correlation });
    throw e;
  }
  const r = await monitor.recordToolOutcome({ agent_id, tool, args: env.payload, ok: false, code, correlation });
  if (!r.alert || !(e instanceof FingerError)) throw e;
  const details = typeof e.details === 'object' && e.details !== null ? e.details : {};
  throw new FingerError(e.code, e.message, { ...details, system_alert: r.alert }, { cause: e });
}
