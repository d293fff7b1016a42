// The hook's answers in each agent's own format (the pure hook-answer.ts): what an agent reads
// on stdout, and the exit code, per verdict.

import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { combine, denyAnswer, type HookVerdict, preAnswer } from '../src/commands/hook-answer.js';
import { type HookAgent, parseHookEvent } from '../src/commands/hook-map.js';

const FIXTURES = path.resolve(import.meta.dirname, '../../../test/fixtures/hooks');
const fixture = (name: string): unknown => JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8'));

const claudeShaped = (decision: string, reason: string, updatedInput?: object): string =>
  `${JSON.stringify({
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: decision,
      permissionDecisionReason: reason,
      ...(updatedInput ? { updatedInput } : {}),
    },
  })}\n`;

const PAYLOAD: Record<HookAgent, string> = {
  claude: 'claude-pre-bash.json',
  codex: 'codex-pre-bash.json',
  cursor: 'cursor-pre-shell.json',
  copilot: 'copilot-pre-bash.json',
};
const eventOf = (agent: HookAgent) => parseHookEvent(agent, fixture(PAYLOAD[agent]));

const auto: HookVerdict = { outcome: 'allow', level: 'AUTO', decision_id: 'd1', reason: 'AUTO' };
const approved: HookVerdict = {
  outcome: 'allow',
  level: 'APPROVE',
  decision_id: 'd2',
  reason: 'approved (ap1)',
  approval_id: 'ap1',
};
const denied: HookVerdict = {
  outcome: 'deny',
  level: 'DENY',
  decision_id: 'd3',
  reason: 'not today',
  code: 'E_REJECTED_BY_HUMAN',
};
const pending: HookVerdict = {
  outcome: 'pending',
  level: 'APPROVE',
  decision_id: 'd4',
  reason:
    'held for a person as ap2: ask them to approve (`myfinger approve ap2` or http://x/ui/approvals/ap2), then retry',
  approval_id: 'ap2',
};

describe('denyAnswer', () => {
  it('each agent’s deny; exit 2 adds the reason on stderr', () => {
    expect(denyAnswer('claude', 'no')).toEqual({ stdout: claudeShaped('deny', 'no'), stderr: '', exit: 0 });
    expect(denyAnswer('codex', 'no', 2)).toEqual({
      stdout: claudeShaped('deny', 'no'),
      stderr: 'finger: no\n',
      exit: 2,
    });
    expect(denyAnswer('cursor', 'no', 2)).toEqual({
      stdout: `${JSON.stringify({ permission: 'deny', user_message: 'finger: no', agent_message: 'no' })}\n`,
      stderr: 'finger: no\n',
      exit: 2,
    });
    expect(denyAnswer('copilot', 'no')).toEqual({
      stdout: `${JSON.stringify({ permissionDecision: 'deny', permissionDecisionReason: 'no' })}\n`,
      stderr: '',
      exit: 0,
    });
  });
});

describe('preAnswer', () => {
  it('AUTO/NOTIFY: no opinion, except Cursor’s fail-closed hook, which must say allow', () => {
    for (const agent of ['claude', 'codex', 'copilot'] as const)
      expect(preAnswer(agent, eventOf(agent), auto, 'ask')).toEqual({ stdout: '', stderr: '', exit: 0 });
    expect(preAnswer('cursor', eventOf('cursor'), auto, 'ask')).toEqual({
      stdout: `${JSON.stringify({ permission: 'allow', agent_message: 'AUTO' })}\n`,
      stderr: '',
      exit: 0,
    });
  });

  it('a person’s approval: allow where the agent takes it (Codex: no output lets it run)', () => {
    expect(preAnswer('claude', eventOf('claude'), approved, 'ask').stdout).toBe(
      claudeShaped('allow', 'approved (ap1)'),
    );
    expect(preAnswer('codex', eventOf('codex'), approved, 'ask').stdout).toBe('');
    expect(preAnswer('cursor', eventOf('cursor'), approved, 'ask').stdout).toBe(
      `${JSON.stringify({ permission: 'allow', agent_message: 'approved (ap1)' })}\n`,
    );
    expect(preAnswer('copilot', eventOf('copilot'), approved, 'ask').stdout).toBe(
      `${JSON.stringify({ permissionDecision: 'allow', permissionDecisionReason: 'approved (ap1)' })}\n`,
    );
  });

  it('deny: the reason, exit 0 (a verdict, not a failure)', () => {
    for (const agent of ['claude', 'codex', 'cursor', 'copilot'] as const)
      expect(preAnswer(agent, eventOf(agent), denied, 'ask')).toEqual(denyAnswer(agent, 'not today'));
  });

  it('pending: ask for Claude Code and Copilot (when so configured), else a deny saying how to approve and retry', () => {
    expect(preAnswer('claude', eventOf('claude'), pending, 'ask').stdout).toBe(
      claudeShaped('ask', `finger: ${pending.reason}`),
    );
    expect(preAnswer('copilot', eventOf('copilot'), pending, 'ask').stdout).toBe(
      `${JSON.stringify({ permissionDecision: 'ask', permissionDecisionReason: `finger: ${pending.reason}` })}\n`,
    );
    expect(preAnswer('claude', eventOf('claude'), pending, 'deny')).toEqual(denyAnswer('claude', pending.reason));
    // Codex rejects `ask` (the call would then proceed) and Cursor has none: always a deny
    expect(preAnswer('codex', eventOf('codex'), pending, 'ask')).toEqual(denyAnswer('codex', pending.reason));
    expect(preAnswer('cursor', eventOf('cursor'), pending, 'ask')).toEqual(denyAnswer('cursor', pending.reason));
  });

  it('approved with edits: updatedInput for Claude Code and Codex; a deny naming the edited call elsewhere', () => {
    const edited: HookVerdict = { ...approved, edited: true, args: { command: 'ls -a', cwd: '/home/user/proj' } };
    const claude = eventOf('claude');
    expect(preAnswer('claude', claude, edited, 'ask').stdout).toBe(
      claudeShaped('allow', 'approved (ap1)', { ...claude.input, command: 'ls -a' }),
    );
    const codex = eventOf('codex');
    expect(preAnswer('codex', codex, edited, 'ask').stdout).toBe(
      claudeShaped('allow', 'approved (ap1)', { ...codex.input, command: 'ls -a' }),
    );
    const why = `a person approved an edited version instead (ap1): ${JSON.stringify(edited.args)}; run that instead`;
    expect(preAnswer('cursor', eventOf('cursor'), edited, 'ask')).toEqual(denyAnswer('cursor', why));
    expect(preAnswer('copilot', eventOf('copilot'), edited, 'ask')).toEqual(denyAnswer('copilot', why));
    // an edit that cannot be said in the agent's terms (an Edit's patch) is a deny too
    const edit = parseHookEvent('claude', fixture('claude-pre-edit.json'));
    const patched: HookVerdict = { ...approved, edited: true, args: { path: '/x', edits: [] } };
    expect(preAnswer('claude', edit, patched, 'ask').stdout).toContain('"permissionDecision":"deny"');
  });
});

describe('combine (a Codex patch over several files)', () => {
  it('deny > pending > allow; pending reasons joined; an edit among several files is a deny to retry', () => {
    expect(combine([auto, denied, pending])).toBe(denied);
    expect(combine([auto, pending, { ...pending, reason: 'second' }])).toEqual({
      ...pending,
      reason: `${pending.reason}\nsecond`,
    });
    expect(combine([auto])).toBe(auto);
    expect(combine([auto, approved])).toBe(auto);
    expect(combine([auto, { ...approved, edited: true, args: {} }])).toMatchObject({
      outcome: 'deny',
      code: 'E_REJECTED_BY_HUMAN',
      reason: 'approved with edits; retry with the edited call',
    });
  });
});
