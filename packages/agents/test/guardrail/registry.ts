import type { GuardrailRegistry } from '../../src/guardrail/guardrail-types.js';

/** The registry the guardrail tests run against: two agents, modules with tools, fs.write and shell.exec high risk. */
export const registry: GuardrailRegistry = {
  agents: ['planner', 'Researcher'],
  modules: ['echo', 'echo.say', 'fs', 'fs.write', 'fs.read', 'shell.exec'],
  high_risk: ['fs', 'fs.write', 'shell.exec'],
};

/** A clean dispatch answer. */
export const clean = {
  decision: 'dispatch_module',
  target: 'echo',
  confidence: 0.9,
  reason: 'the user greets echo',
  payload: { text: 'hi' },
  requires_human: false,
} as const;

/** `clean` as the model's JSON text. */
export const cleanText = JSON.stringify(clean);

/** `clean` with `over` applied. */
export function decision(over: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...clean, ...over };
}
