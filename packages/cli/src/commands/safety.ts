import type { Command } from 'commander';

import { action, type RunState } from '../context.js';
import { EXIT } from '../exit-codes.js';

/**
 * The `safety` part of `GET /v1/health`. Without a valid token the daemon answers only
 * `{state, locked}`: every other field may be missing.
 */
export interface SafetyHealth {
  state: 'open' | 'halting' | 'halting_immediate' | 'locked' | string;
  locked: boolean;
  agents_locked?: string[];
  breakers_tripped?: Record<string, string>;
  lockout?: { cause: string; reason: string; by: string; at: string; breaker?: string };
  agents?: LockedAgent[];
}

/** One locked agent as health details list it. */
interface LockedAgent {
  agent_id?: string;
  cause: string;
  breaker?: string;
  reason: string;
  at: string;
}

/** Lines for `daemon status`: the lockout state and every locked agent or tripped breaker. */
export function safetyLines(s: SafetyHealth): string[] {
  const lines: string[] = [];
  const l = s.lockout;
  lines.push(
    s.state === 'open'
      ? 'open'
      : l
        ? `SAFETY_LOCKOUT (${l.cause}${l.breaker ? ` ${l.breaker}` : ''} by ${l.by} at ${l.at}: ${l.reason}) — myfinger unlock`
        : `${s.state === 'locked' ? 'SAFETY_LOCKOUT' : s.state.toUpperCase()} — myfinger unlock`,
  );
  const locked = s.agents_locked ?? [];
  const agents: LockedAgent[] =
    s.agents ?? locked.map((agent_id) => ({ agent_id, cause: 'breaker', reason: '', at: '' }));
  for (const a of agents)
    lines.push(
      `agent ${a.agent_id} locked${a.breaker ? ` (${a.breaker})` : ''}${a.reason ? `: ${a.reason}` : ''} — myfinger unlock --agent ${a.agent_id}`,
    );
  for (const [id, status] of Object.entries(s.breakers_tripped ?? {}))
    if (!locked.includes(id)) lines.push(`agent ${id}: ${status}`);
  return lines;
}

/**
 * `halt [--reason text]` — POST /v1/halt (admin or operator): the kill switch; a second halt
 * while the first runs kills at once. `unlock [--agent id]` — POST /v1/unlock (admin only).
 */
export function registerSafety(program: Command, state: RunState): void {
  program
    .command('halt')
    .description('kill switch: stop every tool call and task now, then lock until an admin unlocks')
    .option('--reason <text>', 'why (recorded in the audit log)')
    .action(
      action<{ reason?: string }>(state, async (ctx, _args, opts) => {
        const client = await ctx.client();
        const { body } = await client.post<{ phase: string; state: string }>(
          '/v1/halt',
          opts.reason !== undefined ? { reason: opts.reason } : {},
        );
        if (ctx.out.json) ctx.out.printJson(body);
        else
          ctx.out.line(
            body.phase === 'locked'
              ? 'already halted: the system is in SAFETY_LOCKOUT'
              : `halted (${body.phase}); the system is in SAFETY_LOCKOUT until an admin runs: myfinger unlock`,
          );
        return EXIT.OK;
      }),
    );

  program
    .command('unlock')
    .description('leave SAFETY_LOCKOUT (admin only): the whole system, or one agent with --agent')
    .option('--agent <id>', 'unlock one agent instead of the system')
    .action(
      action<{ agent?: string }>(state, async (ctx, _args, opts) => {
        const client = await ctx.client();
        const { body } = await client.post<{ unlocked: boolean }>(
          '/v1/unlock',
          opts.agent !== undefined ? { agent_id: opts.agent } : {},
        );
        const what = opts.agent !== undefined ? `agent ${opts.agent}` : 'the system';
        if (ctx.out.json) ctx.out.printJson(body);
        else ctx.out.line(body.unlocked ? `unlocked ${what}` : `${what} was not locked`);
        return EXIT.OK;
      }),
    );
}
