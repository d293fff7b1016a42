/**
 * Wire shapes of the daemon's HTTP answers as the CLI reads them (.briefs/http-api.md). Kept here
 * instead of importing the daemon: the CLI talks to it over HTTP only.
 */
import type { FingerEvent } from '@finger/protocol';

import type { ErrorBody } from './errors.js';

/** `GET /v1/health`: without a valid token only `status`, `reasons` and `modules` (no names, no pid). */
export interface HealthResult {
  status: 'ok' | 'degraded' | string;
  modules: number;
  version?: string;
  uptime_s?: number;
  pid?: number;
  home?: string;
}

/** `POST /v1/input` and `POST /v1/messages`: 200 (blocking, done) or 202 (running). */
export interface DispatchResult {
  request_id: string;
  correlation_id: string;
  status: 'succeeded' | 'running';
  target: string;
  result?: unknown;
}

/** `GET /v1/requests/:id`. */
export interface RequestRecord {
  request_id: string;
  correlation_id: string;
  target: string;
  status: 'running' | 'succeeded' | 'failed';
  created_at: string;
  finished_at?: string;
  result?: unknown;
  error?: ErrorBody;
}

/** One tool of a module as listed in ModuleInfo (only the fields the CLI shows). */
export interface ToolInfo {
  name: string;
  description?: string;
}

/** One entry of `GET /v1/modules`. */
export interface ModuleInfo {
  id: string;
  name?: string;
  version: string;
  kind?: string;
  runtime: string;
  tools: ToolInfo[];
  status: string;
  healthy?: boolean;
  inflight: number;
  concurrency?: number;
  registered_at?: string;
  source?: string;
  /** Where it runs (distributed mode): `local`, or `remote` on `nodes`. */
  location?: 'local' | 'remote';
  nodes?: { node: string; role?: string; healthy?: boolean; last_seen?: number }[];
}

/** `GET /v1/modules/:id/health`. */
export interface ModuleHealthInfo {
  id: string;
  healthy: boolean;
  checked_at: string;
  detail?: string;
  consecutive_failures: number;
}

/** One entry of `GET /v1/tokens`. */
export interface TokenInfo {
  name: string;
  role: string;
  created_at: string;
  last_used_at?: string;
}

/** `POST /v1/tokens`: the secret is in this answer only. */
export interface CreatedToken {
  name: string;
  role: string;
  token: string;
}

/** `GET /v1/whoami`: the caller as the daemon resolved it from its token or browser session. */
export interface WhoAmI {
  principal: { kind: string; id: string };
  roles: string[];
  token: { name?: string };
  via: 'bearer' | 'session';
}

/** A message on the `/v1/events` WebSocket, server → client. */
export type EventStreamMessage =
  | { type: 'ready' }
  | { type: 'subscribed'; filter: Record<string, unknown> }
  | { type: 'event'; event: FingerEvent }
  | { type: 'dropped'; count: number }
  | { type: 'error'; error: ErrorBody };

/** `FINGER_HOME/daemon.json`, written by a running daemon. */
export interface DaemonInfo {
  pid: number;
  url: string;
  started_at?: string;
  home?: string;
  version?: string;
  /** The admin token file (absolute), when the daemon moved it (config `token_file` / FINGER_TOKEN_FILE). */
  token_file?: string;
}

/** One entry of `GET /v1/tools` (a tool of the hub's ToolRegistry). */
export interface RegisteredTool {
  id: string;
  module: string;
  name: string;
  description?: string;
  input_schema?: unknown;
  output_schema?: unknown;
  risk_level?: string;
  capability_level?: string;
  permission?: string;
  side_effects?: boolean;
  idempotent?: boolean;
  timeout_ms?: number;
  context_cost?: number;
  provider: string;
  runtime?: string;
  grants?: string[];
  quarantined?: { reason: string };
  also_offered_by?: string[];
}

/** Which provider answers for a tool name, and by which rule. */
export interface ProviderChoice {
  /** The short tool name. */
  name?: string;
  /** Tool id the bare short name resolves to. */
  chosen: string;
  /** Every tool id offering the name, most preferred first. */
  candidates: string[];
  /** `only_provider`, `preferred_provider_order` or `default_order`. */
  rule: string;
}

/** `GET /v1/tools/:id`. */
export interface ToolDetails {
  tool: RegisteredTool;
  provider_choice: ProviderChoice;
}

/** `GET /v1/grants`: tool-id globs per agent role. */
export interface GrantsResult {
  grants: Record<string, string[]>;
}

/** One entry of `GET /v1/backups`. */
export interface BackupInfo {
  id: string;
  path: string;
  ts: string;
  size: number;
  kind: 'write' | 'delete' | 'patch' | 'undo' | string;
  existed: boolean;
}

/** `POST /v1/undo`. */
export interface UndoResult {
  /** The backup restored; `existed: false` means the path did not exist then and was removed. */
  restored: { id: string; path: string; bytes: number; existed?: boolean; type?: string };
  /** Backup of the state the undo replaced (`myfinger undo <backup_id>` reverses the undo). */
  backup_id?: string;
}
