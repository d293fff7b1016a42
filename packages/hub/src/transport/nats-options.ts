import type { NatsConnection } from 'nats';

import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import type { WireAuth, WireCheck } from './nats-wire.js';

/** Why a message was dropped, for the DEGRADED event the wiring emits. */
export interface DroppedMessage {
  reason: string;
  subject: string;
  /** The sender, authenticated. */
  node?: string;
  role?: string;
  /** The sender the frame names when it failed authentication (not proven: a hint, e.g. a host with a wrong key). */
  claimed_node?: string;
  /**
   * For a frame refused by {@link WireAuth.open}: `E_UNAUTHENTICATED` (no frame, a missing or
   * wrong MAC, a stale timestamp) or `E_INVALID_ENVELOPE` (a malformed frame line, another frame
   * version).
   */
  code?: string;
  /** The version a frame of another format names (`FW5`): its sender runs another finger. */
  version?: string;
}

/** The drop of a frame {@link WireAuth.open} refused on `subject`. */
export function frameRefused(check: Extract<WireCheck, { ok: false }>, subject: string): DroppedMessage {
  const d: DroppedMessage = { reason: check.reason, subject, code: check.code };
  if (check.claimed_node !== undefined) d.claimed_node = check.claimed_node;
  if (check.version !== undefined) d.version = check.version;
  return d;
}

/** Whether a message was dropped for failing authentication (its sender has another key, or forges). */
export function failedAuthentication(d: DroppedMessage): boolean {
  return d.reason === 'bad signature' || d.reason === 'unsigned message';
}

/**
 * The drop of a message a serve host signed naming `node`, a node heard signing with the cluster
 * key (a daemon): node ids are not bound to keys, so a serve host could otherwise speak for it.
 */
export function daemonNodeClaimed(subject: string, node: string): DroppedMessage {
  return { reason: 'a serve host names the node id of a daemon', subject, node, role: 'serve' };
}

/** Options of {@link NatsTransport}. */
export interface NatsTransportOptions {
  /** An open connection (made with `noAsyncTraces: true`). */
  connection: NatsConnection;
  cluster: string;
  auth: WireAuth;
  clock?: Clock;
  logger?: Logger;
  /** Told about every message dropped for failing authentication or validation. */
  onDropped?: (info: DroppedMessage) => void;
  /** Most requests this process serves at once; more are answered E_OVERLOADED. Default 4096. */
  max_inflight?: number;
  /** Most outstanding requests this process sends; more fail with E_OVERLOADED. Default 10,000. */
  max_pending?: number;
  /**
   * How many request ids the serving side remembers to refuse a replayed request (the same signed
   * frame published again before its deadline). Default 32,768.
   */
  replay_window?: number;
  /** Period of the deadline sweep of outstanding requests (ms). Default 25. */
  sweep_ms?: number;
  /**
   * Whether a serve process may take requests for `module_id` (its requests then carry the serve
   * signature too). Default: always — the safe answer, since a serve replica can join a queue
   * group before anyone has heard its announcement.
   */
  servedByServe?: (module_id: string) => boolean;
  /** How long close() lets requests being served finish (ms). Default 5000. */
  drain_ms?: number;
  /** close() also drains and closes the connection. Default false. */
  ownsConnection?: boolean;
}
