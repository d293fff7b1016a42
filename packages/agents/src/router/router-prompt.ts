/**
 * The router's prompts (§3.6): a system prompt stating the decision schema and the rules, a user
 * message carrying the input with its context, and the re-ask message listing validation errors.
 * Pure string building; the capability snapshot is the only description of targets the model sees.
 */
import type { CapabilitySnapshot } from '@finger/hub';

import type { TurnRecord } from '../agent/session-memory.js';
import { shownErrors } from '../guardrail/snippet.js';

/** What the user message is built from. */
export interface RouterPromptInput {
  text: string;
  snapshot: CapabilitySnapshot;
  /** Agent ids the supervisor may hand work to. */
  agents: readonly string[];
  session_summary: string;
  feedback: readonly TurnRecord[];
}

/** The system prompt: role, schema, rules. Stable, so providers can cache it. */
export const ROUTER_SYSTEM_PROMPT = `You are the ingress router of finger, a daemon that governs what AI agents may do.
Read the user's input and decide where it should go. Answer with exactly one JSON object and nothing else:

{"decision": "direct_reply|dispatch_agent|dispatch_module|ask_human|reject",
 "target": "<tool id, module id or agent id from the lists below, or null>",
 "confidence": <number from 0 to 1>,
 "reason": "<one short sentence>",
 "payload": {<arguments for the tool, or input for the agent>},
 "requires_human": <true|false>}

Rules:
- dispatch_module: target is a tool id (<module>.<tool>) or module id from "Tools"; payload holds the tool's arguments.
- dispatch_agent: target is an agent id from "Agents"; payload is {"text": "<what the agent should do>"}.
- direct_reply: you can answer yourself; put the answer in payload {"text": "..."}; target null.
- ask_human: the input is ambiguous, risky, or needs a person's judgement; target null.
- reject: the input asks for something no listed target may do; target null.
- Never invent a target that is not listed. Set requires_human true when a person should confirm.
- confidence is your honest estimate that the decision is right.`;

const FEEDBACK_MAX = 5;

/** The user message: context first, the input last. */
export function routerUserMessage(p: RouterPromptInput): string {
  const lines: string[] = [];
  lines.push('Tools:');
  if (p.snapshot.tools.length === 0) lines.push('(none)');
  for (const t of p.snapshot.tools) {
    lines.push(`- ${t.id} [risk ${t.risk}; ${t.constraints.join('; ')}]: ${t.purpose}`);
  }
  if (p.snapshot.dropped.length > 0) lines.push(`(left out for space: ${p.snapshot.dropped.join(', ')})`);
  lines.push('', 'Agents:', p.agents.length === 0 ? '(none)' : p.agents.map((a) => `- ${a}`).join('\n'));
  if (p.session_summary !== '') lines.push('', 'Earlier in this session:', p.session_summary);
  const fb = p.feedback.slice(-FEEDBACK_MAX);
  if (fb.length > 0) {
    lines.push('', 'Recent routing problems (avoid repeating them):');
    for (const f of fb) lines.push(`- ${JSON.stringify(f.input)} → ${f.decision}: ${f.outcome}`);
  }
  lines.push('', 'Input:', p.text);
  return lines.join('\n');
}

/** The re-ask message after an answer the guardrail refused (its errors bounded: they can quote model text). */
export function routerReaskMessage(errors: readonly string[]): string {
  const list = shownErrors(errors).map((e) => `- ${e}`);
  return [
    'Your answer could not be used:',
    ...(list.length > 0 ? list : ['- it was not a valid decision object']),
    'Answer again with exactly one JSON object following the schema, and nothing else.',
  ].join('\n');
}

const INPUT_MARK = '\nInput:\n';

/**
 * The raw input inside a router request (the first user message, after its `Input:` line): what
 * the offline router scores, instead of the whole prompt. Falls back to the last user message.
 */
export function routerInputOf(params: { messages: readonly { role: string; content: string }[] }): string {
  const first = params.messages.find((m) => m.role === 'user')?.content;
  if (first !== undefined) {
    const at = first.indexOf(INPUT_MARK);
    if (at >= 0) return first.slice(at + INPUT_MARK.length);
  }
  return [...params.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
}
