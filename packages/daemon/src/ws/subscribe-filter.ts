// The `{"op":"subscribe",…}` message of `/v1/events`: which filter fields a subscriber may set, checked.

import { type EventType, FingerError, isEventType } from '@finger/protocol';

/** The filter fields a subscriber may set, as echoed in `{"type":"subscribed"}`. */
export interface WireFilter {
  types?: EventType[];
  session_id?: string;
  request_id?: string;
  correlation_id?: string;
}

/** The filter of a subscribe message; E_INVALID_ARGS naming every bad or unknown key. */
export function parseSubscribe(msg: Record<string, unknown>): WireFilter {
  const issues: { path: string; message: string }[] = [];
  const out: WireFilter = {};
  if (msg.types !== undefined) {
    if (!Array.isArray(msg.types)) issues.push({ path: '$.types', message: 'must be an array of event types' });
    else {
      msg.types.forEach((t, i) => {
        if (!isEventType(t)) issues.push({ path: `$.types[${i}]`, message: `unknown event type ${JSON.stringify(t)}` });
      });
      if (msg.types.length > 0) out.types = msg.types as EventType[];
    }
  }
  for (const key of ['session_id', 'request_id', 'correlation_id'] as const) {
    const v = msg[key];
    if (v === undefined || v === null || v === '') continue;
    if (typeof v !== 'string' || v.length > 256)
      issues.push({ path: `$.${key}`, message: 'must be a string (≤ 256 chars)' });
    else out[key] = v;
  }
  for (const key of Object.keys(msg)) {
    if (!['op', 'types', 'session_id', 'request_id', 'correlation_id'].includes(key))
      issues.push({ path: `$.${key}`, message: 'is not an allowed key' });
  }
  if (issues.length)
    throw new FingerError(
      'E_INVALID_ARGS',
      `bad subscribe: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
      { issues },
    );
  return out;
}
