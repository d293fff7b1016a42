// The hook's answer in each agent's own format. Pure. Every agent's pre-tool hook fails open on
// a crash, a timeout or unreadable output, so every refusal here is explicit.

import { agentInputOf, type HookAgent, type HookEvent } from './hook-map.js';

/** The daemon's verdict on one call (`POST /v1/hooks/evaluate`). */
export interface HookVerdict {
  outcome: 'allow' | 'deny' | 'pending';
  level: string;
  decision_id: string;
  reason: string;
  code?: string;
  approval_id?: string;
  approval_url?: string;
  args?: Record<string, unknown>;
  edited?: boolean;
}

/** What the hook process prints and how it exits. */
export interface HookAnswer {
  stdout: string;
  stderr: string;
  exit: number;
}

/** What a still-pending hold becomes for agents that can ask their user (Claude Code, Copilot). */
export type PendingAs = 'ask' | 'deny';

/** The strictest of several verdicts (a Codex patch over several files): deny > pending > allow. */
export function combine(vs: readonly HookVerdict[]): HookVerdict {
  const deny = vs.find((v) => v.outcome === 'deny');
  if (deny !== undefined) return deny;
  const pending = vs.filter((v) => v.outcome === 'pending');
  if (pending.length > 0) return { ...pending[0]!, reason: pending.map((v) => v.reason).join('\n') };
  if (vs.length === 1) return vs[0]!;
  // edits of one file among several cannot be handed back as one input
  const edited = vs.find((v) => v.edited === true);
  if (edited !== undefined)
    return {
      ...edited,
      outcome: 'deny',
      code: 'E_REJECTED_BY_HUMAN',
      reason: 'approved with edits; retry with the edited call',
    };
  return vs[0]!;
}

const line = (o: unknown): string => `${JSON.stringify(o)}\n`;

function claudeShaped(decision: string, reason: string, updatedInput?: Record<string, unknown>): string {
  return line({
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: decision,
      permissionDecisionReason: reason,
      ...(updatedInput !== undefined ? { updatedInput } : {}),
    },
  });
}

/** An explicit deny in `agent`'s format; `exit` 2 for failures (bad input, daemon down, any exception). */
export function denyAnswer(agent: HookAgent, reason: string, exit = 0): HookAnswer {
  const stderr = exit === 0 ? '' : `finger: ${reason}\n`;
  switch (agent) {
    case 'claude':
    case 'codex':
      return { stdout: claudeShaped('deny', reason), stderr, exit };
    case 'cursor':
      return {
        stdout: line({ permission: 'deny', user_message: `finger: ${reason}`, agent_message: reason }),
        stderr,
        exit,
      };
    case 'copilot':
      return { stdout: line({ permissionDecision: 'deny', permissionDecisionReason: reason }), stderr, exit };
  }
}

/**
 * The answer to a pre event. AUTO/NOTIFY (allow without a person) → no opinion where the agent
 * lets its own permission rules decide (Claude Code, Codex, Copilot: empty output) or `allow`
 * (Cursor, whose fail-closed hooks must answer); a person's approval → `allow` (edits as
 * `updatedInput` where the agent takes it; elsewhere a deny naming the edited call); deny →
 * deny with the reason; pending → `ask` (Claude Code, Copilot, per `pendingAs`) or deny saying
 * how to approve and retry.
 */
export function preAnswer(agent: HookAgent, ev: HookEvent, v: HookVerdict, pendingAs: PendingAs): HookAnswer {
  const ok: HookAnswer = { stdout: '', stderr: '', exit: 0 };
  if (v.outcome === 'deny') return denyAnswer(agent, v.reason);
  if (v.outcome === 'pending') {
    if (pendingAs === 'ask' && agent === 'claude') return { ...ok, stdout: claudeShaped('ask', `finger: ${v.reason}`) };
    if (pendingAs === 'ask' && agent === 'copilot')
      return { ...ok, stdout: line({ permissionDecision: 'ask', permissionDecisionReason: `finger: ${v.reason}` }) };
    return denyAnswer(agent, v.reason);
  }
  const byPerson = v.approval_id !== undefined;
  let updated: Record<string, unknown> | undefined;
  if (v.edited === true && v.args !== undefined) {
    const tool = ev.calls.length === 1 ? ev.calls[0]!.tool : '';
    updated = agentInputOf(ev, tool, v.args);
    if (updated === undefined || agent === 'cursor' || agent === 'copilot')
      return denyAnswer(
        agent,
        `a person approved an edited version instead (${v.approval_id ?? 'approval'}): ${JSON.stringify(v.args)}; run that instead`,
      );
  }
  switch (agent) {
    case 'claude':
      return byPerson || updated !== undefined ? { ...ok, stdout: claudeShaped('allow', v.reason, updated) } : ok;
    case 'codex':
      // Codex takes `allow` only with updatedInput; otherwise no output lets the call run
      return updated !== undefined ? { ...ok, stdout: claudeShaped('allow', v.reason, updated) } : ok;
    case 'cursor':
      return { ...ok, stdout: line({ permission: 'allow', agent_message: v.reason }) };
    case 'copilot':
      return byPerson
        ? { ...ok, stdout: line({ permissionDecision: 'allow', permissionDecisionReason: v.reason }) }
        : ok;
  }
}
