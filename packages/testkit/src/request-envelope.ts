import type { Envelope, Principal } from '@finger/protocol';
import { rfc3339, ulid } from '@finger/protocol';

/**
 * A fresh top-level blocking request envelope (all ids one new ULID, empty session and workflow),
 * for tests that put envelopes on a transport themselves. `deadline` defaults to 5 s from now,
 * `source` to a human admin.
 */
export function requestEnvelope(
  target: string,
  payload: unknown,
  opts: { deadline?: number; source?: Principal } = {},
): Envelope {
  const id = ulid();
  return {
    id,
    kind: 'request',
    request_id: id,
    correlation_id: id,
    session_id: '',
    workflow_id: '',
    source: opts.source ?? { kind: 'human', id: 'alice', roles: ['admin'] },
    target,
    blocking: true,
    timestamp: rfc3339(Date.now()),
    deadline: opts.deadline ?? Date.now() + 5000,
    execution_chain: [],
    nesting_depth: 0,
    payload,
  };
}
