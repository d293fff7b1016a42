import type { ToolCallContext } from '@finger/hub';
import { ulid } from '@finger/protocol';

/**
 * A ToolCallContext for calling a module's tools directly in a test: a system principal, a
 * deadline `timeout_ms` from now, a fresh never-aborted signal, no-op lease and progress, and no
 * nested calls. `over` replaces any member.
 */
export function toolContext(timeout_ms = 5000, over: Partial<ToolCallContext> = {}): ToolCallContext {
  const id = ulid();
  return {
    call_id: id,
    request_id: id,
    correlation_id: id,
    session_id: 's',
    workflow_id: 'w',
    lease_id: id,
    deadline: Date.now() + timeout_ms,
    source: { kind: 'system', id: 'test', roles: [] },
    signal: new AbortController().signal,
    extendLease() {},
    progress() {},
    call: () => Promise.reject(new Error('no nested calls')),
    ...over,
  };
}
