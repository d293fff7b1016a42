// The daemon's wire shapes the console reads (docs/contracts.md §8–§10 and the web contract).
// Declared here, not imported from @finger/firewall, so the browser bundle never pulls server code;
// every field the daemon may leave out is optional.

export type Level = 'AUTO' | 'NOTIFY' | 'CONFIRM' | 'APPROVE' | 'DENY';
export const LEVELS: readonly Level[] = ['AUTO', 'NOTIFY', 'CONFIRM', 'APPROVE', 'DENY'];

export interface MatchedRule {
  source: string;
  id: string;
  level: Level;
  reason: string;
}

export interface Preview {
  kind: 'diff' | 'command' | 'args';
  text: string;
  path?: string;
  cwd?: string;
}

export interface Evaluation {
  level: Level;
  action: string;
  layer: string;
  matched_rules: MatchedRule[];
  reasons: string[];
  preview?: Preview;
  error?: { code: string; message: string };
}

export interface CallShape {
  kind: 'shell' | 'path' | 'url' | 'args';
  tool: string;
  [key: string]: unknown;
}

export type StandingOffer =
  { offered: true; shape: CallShape; description: string } | { offered: false; reason: string };

export interface PendingApproval {
  id: string;
  tool_id: string;
  args: unknown;
  level: Level;
  evaluation: Evaluation;
  facts: {
    principal: { kind: string; id: string; roles: string[] };
    session_id: string;
    request_id: string;
    correlation_id: string;
  };
  risk: string;
  human_only: boolean;
  standing: StandingOffer;
  status: 'reviewing' | 'waiting';
  created_at: string;
  expires_at: string;
}

export interface StandingApproval {
  id: string;
  tool_id: string;
  level: Level;
  principal: string;
  scope: string;
  session_id?: string;
  expires_at?: string;
  by: string;
  created_at: string;
  description?: string;
}

export interface ModuleInfo {
  id: string;
  version: string;
  status: string;
  healthy: boolean;
  inflight: number;
  queued: number;
  source?: string;
  location?: string;
  tools?: { name: string }[];
}

/** One step of a task's checkpoint (`GET /v1/tasks/:id`). */
export interface TaskStep {
  step: number;
  calls?: { tool: string; class?: string; summary?: string; error?: { code?: string; message?: string } }[];
  [key: string]: unknown;
}

export interface TaskInfo {
  id: string;
  state: string;
  text?: string;
  step?: number;
  max_steps?: number;
  updated_at?: string;
  steps_done?: number;
  usage?: { input_tokens?: number; output_tokens?: number; cost?: number };
  question?: { kind: string; message: string };
}

/** One agent's breaker counters (`safety.breakers` of the snapshot, keyed by agent id). */
export interface Breaker {
  id: string;
  status: string;
  repeat?: number;
  errors?: number;
  denials?: number;
}

/** A lockout: of the whole system (no agent_id) or of one agent. */
export interface Lockout {
  agent_id?: string;
  cause?: string;
  breaker?: string;
  reason: string;
  by: string;
  at: string;
}

export interface SafetyState {
  state?: string;
  locked?: boolean;
  agents_locked?: string[];
  lockout?: Lockout | null;
  agents?: Lockout[];
  [key: string]: unknown;
}

export interface AuditState {
  state: 'intact' | 'broken' | 'unknown';
  entries: number;
  first_bad?: { seq: number | null; reason: string } | null;
  checked_at?: string;
}

/** Counts of the last minutes in the snapshot (per-minute buckets, oldest first). */
export interface Counts {
  since: string;
  bucket_ms: number;
  buckets: number;
  levels: Partial<Record<Level, number[]>>;
  holds: number[];
  decisions: Record<string, number>;
  answer_ms: { count: number; p50: number | null; p90: number | null; max: number | null };
  top_hold_reasons: { reason: string; count: number }[];
}

/** `GET /v1/state`: what the console renders first, before the WebSocket's events. */
export interface Snapshot {
  generated_at: string;
  last_event_seq?: number;
  approvals: PendingApproval[];
  safety: SafetyState;
  breakers: Breaker[];
  modules: ModuleInfo[];
  tasks: TaskInfo[];
  standing_approvals: StandingApproval[];
  audit: AuditState;
  counts?: Counts;
}

export interface FingerEvent {
  id: string;
  type: string;
  ts: string;
  request_id: string;
  correlation_id: string;
  session_id: string;
  target: string;
  data: Record<string, unknown>;
}

export interface AuditEntry {
  seq: number;
  ts: string;
  type: string;
  actor?: { kind: string; id: string } | null;
  request_id?: string | null;
  tool?: string | null;
  decision?: string | null;
  args?: unknown;
  verdict?: { level?: Level; reasons?: string[] } | null;
  details?: Record<string, unknown>;
  hash: string;
}
