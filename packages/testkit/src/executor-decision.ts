import type { FakeLlmTextReply } from './fake-llm-server.js';

/**
 * A fake model reply carrying an executor decision: `preface`, then the decision as fenced JSON
 * — by default a step with no tool calls at confidence 0.9, not done; `fields` override any part.
 */
export function executorDecision(fields: Record<string, unknown>, preface = 'Working.'): FakeLlmTextReply {
  const body = { thought: 'next', tool_calls: [], confidence: 0.9, human_required: false, done: false, summary: '' };
  return { text: `${preface}\n\`\`\`json\n${JSON.stringify({ ...body, ...fields })}\n\`\`\`` };
}
