/** Every event type (§3.9). */
export const EVENT_TYPES = [
  'INPUT_RECEIVED',
  'MODE_PARSED',
  'ROUTE_DECIDED',
  'JSON_REPAIRED',
  'DISPATCH_SENT',
  'DISPATCH_RESULT',
  'ROUTE_FAILED',
  'TOOL_CALL_REQUESTED',
  'FIREWALL_VERDICT',
  'APPROVAL_REQUESTED',
  'APPROVAL_RESOLVED',
  'POLICY_CHANGED',
  'BREAKER_TRIPPED',
  'HALTED',
  'UNLOCKED',
  'LEASE_EXPIRED',
  'MODULE_REGISTERED',
  'MODULE_UNREGISTERED',
  'MODULE_HEALTH',
  'TASK_STATE',
  'DEGRADED',
  'FLAG',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** One event: the correlation fields of the envelope it concerns, plus `data`. */
export interface FingerEvent<D = Record<string, unknown>> {
  id: string;
  type: EventType;
  ts: string;
  request_id: string;
  correlation_id: string;
  session_id: string;
  workflow_id: string;
  target: string;
  data: D;
  /** The cluster node the event came from (distributed mode); absent on the daemon that emitted it. */
  origin?: string;
}

const EVENT_TYPE_SET: ReadonlySet<string> = new Set(EVENT_TYPES);

/** True when `t` is a known event type. */
export function isEventType(t: unknown): t is EventType {
  return typeof t === 'string' && EVENT_TYPE_SET.has(t);
}
