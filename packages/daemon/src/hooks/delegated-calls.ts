// Delegated mode (issue 24): the firewall's verdict on a call another agent (Claude Code, Codex,
// Cursor, Copilot) is about to run itself, asked by that agent's pre-tool hook. Nothing runs here:
// the call is judged, audited and — when held — put to a person through the HumanGate, and the
// outcome goes back to the hook. A hold outlives the hook's wait: its answer is kept for the retry
// of the exact same call (single use), never for anything else.

import { createHash } from 'node:crypto';

import type {
  AuditLog,
  Evaluation,
  FirewallEngine,
  GrantChecker,
  HumanGate,
  SafetyMonitor,
  ToolCallFacts,
} from '@finger/firewall';
import { decideGrant, digestOf } from '@finger/firewall';
import { type EventType, FingerError, type Principal, ulid } from '@finger/protocol';

/** A call as the hook normalised it to finger's vocabulary (shell.exec, fs.*, web.fetch, mcp.<server>.<tool>). */
export interface DelegatedCall {
  /** Which agent's hook asks: claude, codex, cursor, copilot. */
  agent: string;
  tool: string;
  args: Record<string, unknown>;
  /** The agent's own session (conversation) id; '' when it has none. */
  session_id: string;
  cwd?: string;
  /** The agent's id of this tool use, when it has one (matches the post event to the pre event). */
  tool_use_id?: string;
}

/** The verdict the hook turns into the agent's answer. */
export interface DelegatedVerdict {
  outcome: 'allow' | 'deny' | 'pending';
  level: Evaluation['level'];
  decision_id: string;
  /** Why (the deciding reasons, the person's reason, or how to approve a pending hold). */
  reason: string;
  /** Set for a denial: the error code it stands for. */
  code?: string;
  approval_id?: string;
  /** The console page of a pending approval. */
  approval_url?: string;
  /** Approved with edits: the arguments a person approved instead (finger's vocabulary). */
  args?: Record<string, unknown>;
  edited?: boolean;
  /** An allowed local file write, patch or delete: the backup finger took first (`myfinger undo <id>`). */
  backup_id?: string;
}

/** A post event (what ran, and how it ended). */
export interface DelegatedReport extends DelegatedCall {
  ok: boolean;
  /** Free-form, bounded: exit code, error text. */
  detail?: string;
}

/** What a report matched. */
export interface ReportResult {
  matched: boolean;
  flagged: boolean;
  decision_id?: string;
}

/** Fallback metadata of a tool finger does not know (an agent's own MCP server): the worst case. */
const UNKNOWN_TOOL: ToolCallFacts['tool'] = { risk_level: 'medium', capability_level: 'L2', side_effects: true };

/** How long an answer waits for the retry of its call (then it is dropped). */
export const CLAIM_TTL_MS = 10 * 60_000;
/** Bounds of the tables (oldest dropped). */
const MAX_CLAIMS = 1000;
const MAX_PRE_DECISIONS = 4096;
/** The longest a hook's request may wait for a person (below the 600 s hook timeout of Claude Code and Codex). */
export const MAX_HOLD_MS = 540_000;

type GateDecision = Awaited<ReturnType<HumanGate['hold']>>;

interface HeldCall {
  approval_id: string | undefined;
  /** The hook request waiting right now, if any: it takes the answer. */
  waiter: ((d: GateDecision) => void) | undefined;
}

interface Claim {
  decision: GateDecision;
  expires: number;
}

/** Options of {@link DelegatedCalls}. */
export interface DelegatedCallsOptions {
  engine: FirewallEngine;
  gate: HumanGate;
  audit: AuditLog;
  tools: { metadata(id: string): ToolCallFacts['tool'] | undefined };
  events: { emit(type: EventType, correlation: Record<string, string>, data?: Record<string, unknown>): unknown };
  safety?: SafetyMonitor;
  /**
   * The role grants of finger's own calls (the hub's grant interceptor): a delegated call whose
   * principal's role has no grant for its tool is denied with E_FORBIDDEN before it is judged.
   * Without it every delegated tool is granted (tests of the verdict alone).
   */
  grants?: GrantChecker;
  /**
   * The undo store (undo-wiring.ts): an allowed local fs.write, fs.patch or fs.delete is backed up
   * here before the hook answers, so `myfinger undo <id>` restores the file the agent then changed.
   */
  backup?: DelegatedBackup;
  now?: () => number;
}

/** Backs up `path` before a delegated change; rejects with the store's code (E_FORBIDDEN outside its roots). */
export type DelegatedBackup = (
  path: string,
  meta: { kind: 'write' | 'patch' | 'delete'; request_id: string; principal: string },
) => Promise<{ id: string }>;

/** The backup kind of a delegated file tool. */
const BACKUP_KIND: Readonly<Record<string, 'write' | 'patch' | 'delete'>> = {
  'fs.write': 'write',
  'fs.patch': 'patch',
  'fs.delete': 'delete',
};

/** Bounded insertion-ordered map: the oldest entry goes first. */
function bounded<K, V>(m: Map<K, V>, k: K, v: V, max: number): void {
  m.delete(k);
  m.set(k, v);
  if (m.size > max) m.delete(m.keys().next().value as K);
}

/**
 * The delegated calls of one daemon: judges them (the engine built without the workspace-write
 * lowering — what a delegated agent runs is outside finger's sandbox), audits each verdict as
 * `tool.call` with `details.delegated`, holds for a person, keeps answers for the retry, and
 * matches post events to pre decisions.
 */
export class DelegatedCalls {
  readonly #o: DelegatedCallsOptions;
  readonly #now: () => number;
  readonly #held = new Map<string, HeldCall>();
  readonly #claims = new Map<string, Claim>();
  readonly #pre = new Map<string, { decision_id: string; tool: string }>();

  constructor(o: DelegatedCallsOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
  }

  /**
   * The verdict on `call` for `principal` (the hook's token). A hold waits up to `hold_ms` for a
   * person; still unanswered → `pending` (the approval stays open; the same call retried later
   * finds its answer once). `signal` aborts the wait when the hook went away: a later answer is
   * then kept for the retry instead of being handed to nobody. The principal's role must be granted
   * the tool (E_FORBIDDEN otherwise). `local`: the hook runs on this machine (it reached the daemon
   * over loopback), so an allowed file change is backed up here first (`backup_id`).
   */
  async evaluate(
    principal: Principal,
    call: DelegatedCall,
    hold_ms: number,
    origin: string,
    signal?: AbortSignal,
    local = true,
  ): Promise<DelegatedVerdict> {
    const o = this.#o;
    const request_id = ulid();
    const details = detailsOf(call);
    try {
      o.safety?.assertOpen(principal.id);
    } catch (e) {
      const code = (e as FingerError).code ?? 'E_SAFETY_LOCKOUT';
      return { outcome: 'deny', level: 'DENY', decision_id: request_id, reason: (e as Error).message, code };
    }
    if (o.grants !== undefined) {
      const g = decideGrant(o.grants, principal, call.tool);
      if (!g.allowed) return this.#forbidden(principal, call, request_id, g.role, g.reason);
    }
    let facts: ToolCallFacts = {
      tool_id: call.tool,
      args: call.args,
      principal,
      session_id: `${call.agent}:${call.session_id}`,
      request_id,
      correlation_id: request_id,
      direct: false,
      tool: o.tools.metadata(call.tool) ?? UNKNOWN_TOOL,
    };
    facts = (await o.engine.withResolvedHosts(facts)) ?? facts;
    const ev = o.engine.evaluate(facts);
    const key = this.#key(principal, call);
    const claim = ev.action === 'hold' ? this.#takeClaim(key) : undefined;
    const approval_id = claim?.decision.approval_id;
    await o.audit.append({
      type: 'tool.call',
      actor: { kind: principal.kind, id: principal.id },
      request_id,
      correlation_id: request_id,
      tool: call.tool,
      args: call.args,
      verdict: ev,
      decision: ev.action,
      details: { ...details, ...(approval_id !== undefined ? { claimed_approval: approval_id } : {}) },
    });
    if (ev.level !== 'AUTO') this.#emitVerdict(facts, ev, call);
    const verdict = await this.#judged(principal, call, facts, ev, key, claim, hold_ms, origin, signal);
    return verdict.outcome === 'allow' && local ? this.#backedUp(principal, call, request_id, verdict) : verdict;
  }

  async #judged(
    principal: Principal,
    call: DelegatedCall,
    facts: ToolCallFacts,
    ev: Evaluation,
    key: string,
    claim: Claim | undefined,
    hold_ms: number,
    origin: string,
    signal: AbortSignal | undefined,
  ): Promise<DelegatedVerdict> {
    if (ev.action === 'allow' || ev.action === 'notify') return this.#allowed(principal, call, ev, key);
    if (ev.action === 'deny') {
      await this.#denial(principal, call, 'E_DENIED_BY_POLICY');
      const code = ev.error?.code ?? 'E_DENIED_BY_POLICY';
      return { outcome: 'deny', level: ev.level, decision_id: ev.decision_id, code, reason: denyReason(ev) };
    }
    if (claim !== undefined) return this.#answered(principal, call, ev, key, claim.decision);
    return this.#hold(principal, call, facts, ev, key, Math.min(Math.max(hold_ms, 0), MAX_HOLD_MS), origin, signal);
  }

  /**
   * Records what an agent reports it ran: matched to its pre decision (by tool use id, else by the
   * exact call) → `tool.result`; no pre decision (the agent ran it without asking finger) → a
   * `tool.result` with `details.flag: "no_pre_decision"` and a FLAG event.
   */
  async report(principal: Principal, r: DelegatedReport): Promise<ReportResult> {
    const key = this.#preKey(principal, r);
    const pre = this.#pre.get(key);
    if (pre !== undefined) this.#pre.delete(key);
    const details: Record<string, unknown> = { ...detailsOf(r), ok: r.ok };
    if (r.detail !== undefined) details.detail = r.detail.slice(0, 500);
    if (pre !== undefined) details.decision_id = pre.decision_id;
    else details.flag = 'no_pre_decision';
    const request_id = ulid();
    await this.#o.audit.append({
      type: 'tool.result',
      actor: { kind: principal.kind, id: principal.id },
      request_id,
      correlation_id: request_id,
      tool: r.tool,
      args: r.args,
      decision: r.ok ? 'ran' : 'failed',
      details,
    });
    if (pre === undefined)
      this.#o.events.emit(
        'FLAG',
        { request_id, correlation_id: request_id, session_id: `${r.agent}:${r.session_id}`, target: r.tool },
        {
          flag: 'no_pre_decision',
          tool: r.tool,
          agent: r.agent,
          principal: { kind: principal.kind, id: principal.id },
          reason: `${r.agent} ran ${r.tool} without asking finger first`,
        },
      );
    return pre !== undefined
      ? { matched: true, flagged: false, decision_id: pre.decision_id }
      : { matched: false, flagged: true };
  }

  /**
   * An allowed local file change is backed up first (the post event comes after the write). A path
   * outside the store's roots (E_FORBIDDEN) has no store to go to: the verdict stands, not undoable.
   * Any other failure (the file is over the store's size bound, the store is down or not loaded)
   * denies the call with the store's code, as finger's own fs tools refuse a change they cannot back up.
   */
  async #backedUp(
    principal: Principal,
    call: DelegatedCall,
    request_id: string,
    v: DelegatedVerdict,
  ): Promise<DelegatedVerdict> {
    const kind = BACKUP_KIND[call.tool];
    const target = (v.args ?? call.args).path;
    if (kind === undefined || this.#o.backup === undefined || typeof target !== 'string') return v;
    const principal_ = `${principal.kind}:${principal.id}`;
    try {
      const b = await this.#o.backup(target, { kind, request_id, principal: principal_ });
      return { ...v, backup_id: b.id };
    } catch (e) {
      const code = (e as FingerError).code ?? 'E_STORE_UNAVAILABLE';
      if (code === 'E_FORBIDDEN') return v;
      return {
        outcome: 'deny',
        level: v.level,
        decision_id: v.decision_id,
        code,
        reason: `finger could not back up ${target} before the change, so it is refused: ${(e as Error).message}`,
      };
    }
  }

  /** A tool the principal's role has no grant for: denied (E_FORBIDDEN), audited, as the hub's grant check does. */
  async #forbidden(
    principal: Principal,
    call: DelegatedCall,
    request_id: string,
    role: string,
    reason: string,
  ): Promise<DelegatedVerdict> {
    const session_id = `${call.agent}:${call.session_id}`;
    await this.#o.audit.append({
      type: 'tool.call',
      actor: { kind: principal.kind, id: principal.id },
      request_id,
      correlation_id: request_id,
      tool: call.tool,
      args: call.args,
      decision: 'deny',
      details: { ...detailsOf(call), layer: 'permission', code: 'E_FORBIDDEN', role },
    });
    this.#o.events.emit(
      'FIREWALL_VERDICT',
      { request_id, correlation_id: request_id, session_id, target: call.tool },
      {
        action: 'deny',
        level: 'DENY',
        layer: 'permission',
        tool: call.tool,
        role,
        principal: { kind: principal.kind, id: principal.id },
        reasons: [reason],
        direct: false,
        delegated: { agent: call.agent, ...(call.cwd !== undefined ? { cwd: call.cwd } : {}) },
      },
    );
    return { outcome: 'deny', level: 'DENY', decision_id: request_id, code: 'E_FORBIDDEN', reason };
  }

  /** Pending holds and kept answers (for health and tests). */
  stats(): { held: number; claims: number; pre_decisions: number } {
    return { held: this.#held.size, claims: this.#claims.size, pre_decisions: this.#pre.size };
  }

  #allowed(principal: Principal, call: DelegatedCall, ev: Evaluation, key: string): DelegatedVerdict {
    bounded(
      this.#pre,
      this.#preKey(principal, call, key),
      { decision_id: ev.decision_id, tool: call.tool },
      MAX_PRE_DECISIONS,
    );
    void this.#o.safety?.recordSuccess(principal.id);
    return { outcome: 'allow', level: ev.level, decision_id: ev.decision_id, reason: ev.reasons[0] ?? ev.level };
  }

  /** A person's (or the gate's) answer to this exact call. */
  async #answered(
    principal: Principal,
    call: DelegatedCall,
    ev: Evaluation,
    key: string,
    d: GateDecision,
  ): Promise<DelegatedVerdict> {
    const base = {
      level: ev.level,
      decision_id: ev.decision_id,
      ...(d.approval_id ? { approval_id: d.approval_id } : {}),
    };
    if (!d.approved) {
      const code = d.code ?? 'E_REJECTED_BY_HUMAN';
      // only a person's rejection (not excused) counts toward the denial breaker; a timeout does not
      if (code === 'E_REJECTED_BY_HUMAN' && !(d.approval_id !== undefined && this.#o.gate.isExcused(d.approval_id)))
        await this.#denial(principal, call, code);
      return { ...base, outcome: 'deny', code, reason: d.reason ?? 'rejected by a person' };
    }
    const args = (d.args ?? call.args) as Record<string, unknown>;
    const edited = digestOf(args) !== digestOf(call.args);
    const v = this.#allowed(principal, call, ev, key);
    return {
      ...v,
      ...base,
      reason: d.reason ?? `approved${d.approval_id ? ` (${d.approval_id})` : ''}`,
      ...(edited ? { args, edited: true } : {}),
    };
  }

  async #hold(
    principal: Principal,
    call: DelegatedCall,
    facts: ToolCallFacts,
    ev: Evaluation,
    key: string,
    hold_ms: number,
    origin: string,
    signal: AbortSignal | undefined,
  ): Promise<DelegatedVerdict> {
    let held = this.#held.get(key);
    if (held === undefined) {
      const h: HeldCall = { approval_id: undefined, waiter: undefined };
      held = h;
      const gate = this.#o.gate;
      const answer = gate.hold(ev, facts);
      // the gate made its pending approval synchronously (or answered at once)
      h.approval_id = gate
        .list({ session_id: facts.session_id })
        .find((a) => a.facts.request_id === facts.request_id)?.id;
      this.#held.set(key, h);
      void answer.then((d) => {
        this.#held.delete(key);
        const w = h.waiter;
        h.waiter = undefined;
        if (w !== undefined) w(d);
        // nobody waits: kept for the retry of this exact call (a timeout or a closed gate is not kept)
        else if (d.approved || d.decided_by === 'human' || d.decided_by === 'reviewer')
          bounded(this.#claims, key, { decision: d, expires: this.#now() + CLAIM_TTL_MS }, MAX_CLAIMS);
      });
    }
    const h = held;
    const d = await new Promise<GateDecision | undefined>((resolve) => {
      const previous = h.waiter;
      if (previous !== undefined) h.waiter = undefined;
      let done = false;
      const finish = (v: GateDecision | undefined): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', gone);
        if (h.waiter === take) h.waiter = undefined;
        resolve(v);
      };
      const take = (v: GateDecision): void => finish(v);
      const gone = (): void => finish(undefined);
      const timer = setTimeout(gone, hold_ms);
      timer.unref?.();
      h.waiter = take;
      if (signal?.aborted === true) gone();
      else signal?.addEventListener('abort', gone, { once: true });
    });
    if (d !== undefined) return this.#answered(principal, call, ev, key, d);
    const id = h.approval_id;
    const url = id !== undefined ? `${origin}/ui/approvals/${id}` : `${origin}/ui/approvals`;
    const how = id !== undefined ? `\`myfinger approve ${id}\` or ${url}` : `\`myfinger approvals\` or ${url}`;
    return {
      outcome: 'pending',
      level: ev.level,
      decision_id: ev.decision_id,
      ...(id !== undefined ? { approval_id: id } : {}),
      approval_url: url,
      reason: `held for a person as ${id ?? '(pending)'}: ask them to approve (${how}), then retry`,
    };
  }

  #takeClaim(key: string): Claim | undefined {
    const c = this.#claims.get(key);
    if (c === undefined) return undefined;
    this.#claims.delete(key);
    return c.expires > this.#now() ? c : undefined;
  }

  async #denial(principal: Principal, call: DelegatedCall, code: string): Promise<void> {
    if (principal.kind !== 'agent' || this.#o.safety === undefined) return;
    try {
      await this.#o.safety.recordDenial({ agent_id: principal.id, tool: call.tool, code });
    } catch {
      // the breaker's store is down: the verdict stands
    }
  }

  #emitVerdict(facts: ToolCallFacts, ev: Evaluation, call: DelegatedCall): void {
    this.#o.events.emit(
      'FIREWALL_VERDICT',
      {
        request_id: facts.request_id,
        correlation_id: facts.correlation_id,
        session_id: facts.session_id,
        target: facts.tool_id,
      },
      {
        tool: facts.tool_id,
        decision_id: ev.decision_id,
        action: ev.action,
        level: ev.level,
        layer: ev.layer,
        matched_rules: ev.matched_rules.map((r) => `${r.source}:${r.id}`),
        reasons: ev.reasons,
        principal: { kind: facts.principal.kind, id: facts.principal.id },
        direct: false,
        delegated: { agent: call.agent, ...(call.cwd !== undefined ? { cwd: call.cwd } : {}) },
      },
    );
  }

  /** The exact call: who asks, which tool, which arguments (the cwd is one of them for a command). */
  #key(principal: Principal, call: DelegatedCall): string {
    return createHash('sha256')
      .update(
        `${principal.kind}:${principal.id}\0${call.agent}\0${call.tool}\0${digestOf(call.args)}\0${call.cwd ?? ''}`,
      )
      .digest('hex');
  }

  #preKey(principal: Principal, call: DelegatedCall, key?: string): string {
    if (call.tool_use_id !== undefined && call.tool_use_id !== '')
      return `${principal.id}\0${call.agent}\0use:${call.tool_use_id}`;
    return `${principal.id}\0${call.agent}\0call:${key ?? this.#key(principal, call)}`;
  }
}

function detailsOf(call: DelegatedCall): Record<string, unknown> {
  return {
    delegated: true,
    agent: call.agent,
    session_id: call.session_id,
    ...(call.cwd !== undefined ? { cwd: call.cwd } : {}),
    ...(call.tool_use_id !== undefined ? { tool_use_id: call.tool_use_id } : {}),
  };
}

function denyReason(ev: Evaluation): string {
  if (ev.error !== undefined) return ev.error.message;
  const deny = ev.reasons.filter((r) => r.startsWith('DENY'));
  return `denied by policy (${ev.layer}): ${(deny.length > 0 ? deny : ev.reasons).join('; ')}`;
}

/** Rejects a tool id outside the delegated vocabulary (E_INVALID_ARGS). */
export function checkDelegatedTool(tool: string): void {
  if (
    !/^(shell\.exec|fs\.(read|list|write|patch|delete)|web\.(fetch|search)|mcp\.[A-Za-z0-9_-]+\.[A-Za-z0-9_.-]+|agent\.[A-Za-z0-9_-]+)$/.test(
      tool,
    )
  )
    throw new FingerError('E_INVALID_ARGS', `not a delegated tool id: ${JSON.stringify(tool)}`, { tool });
}
