// Shared pieces of the firewall interceptor tests: a hub call builder and a rejection catcher.

import type { FirewallCall } from '../../src/engine/firewall-interceptor.js';
import { tool } from './helpers.js';

/** A hub call of `tool_id` by the executor agent (or by alice, a human operator), with the shipped tool's metadata. */
export function call(
  tool_id: string,
  payload: unknown,
  over: { direct?: boolean; human?: boolean } = {},
): FirewallCall {
  return {
    envelope: {
      request_id: 'req-1',
      correlation_id: 'corr-1',
      session_id: 'sess-1',
      workflow_id: '',
      target: tool_id,
      source: over.human
        ? { kind: 'human', id: 'alice', roles: ['operator'] }
        : { kind: 'agent', id: 'executor-1', roles: ['agent:executor'] },
      payload,
    },
    resolved: { tool_id, tool: tool(tool_id) },
    direct: over.direct ?? false,
  };
}

/** The error `p` rejects with (fails the test when it resolves). */
export async function rejection(
  p: Promise<unknown>,
): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    return e as { code: string; message: string; details: Record<string, unknown> };
  }
  throw new Error('expected a rejection');
}
