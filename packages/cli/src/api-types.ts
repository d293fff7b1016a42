/**
 * Wire shapes of the daemon's HTTP answers as the CLI reads them (.briefs/http-api.md). Kept here
 * instead of importing the daemon: the CLI talks to it over HTTP only.
 */
import type { FingerEvent } from '@finger/protocol';

import type { ErrorBody } from './errors.js';

/** `GET /v1/health`. */
export interface HealthResult {
  status: 'ok' | 'degraded' | string;
  version: string;
  uptime_s: number;
  pid: number;
  modules: number;
  home: string;
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
}
