import type { Envelope } from '@finger/protocol';

import type { DirectSink } from './reply-sink.js';

/**
 * The serving side's view of one in-flight request: how a module host reports progress, extends
 * the lease and learns of cancellation. Everything it carries is serialisable, so the same
 * contract holds over NATS.
 */
export interface ServerChannel {
  /** Ask the caller's hub to extend the lease to `ttl_ms` from now (heartbeat). */
  extendLease(ttl_ms: number): void;
  /** Report progress to the caller. */
  progress(message: string, fraction?: number): void;
  /** Register the receiver of a cancel from the caller (lease expiry, deadline, abort). */
  onCancel(receiver: CancelReceiver): void;
}

/** Sends a cancel for one in-flight request (filled in by the transport). */
export interface Canceller {
  cancel(reason: string): void;
}

/** Receives a cancel for one in-flight request. */
export interface CancelReceiver {
  onCancelled(reason: string): void;
}

/**
 * Serves requests for one target; resolves with a reply envelope (a tool's failure is a reply
 * carrying `error`). A module host never rejects; a handler that passes the call on (a module
 * hosted elsewhere, a node taking calls from NATS) rejects with the FingerError of a transport
 * failure (E_NO_TARGET, E_TIMEOUT, …), which the transport answers with its code.
 */
export type TransportHandler = (request: Envelope, channel: ServerChannel) => Promise<Envelope>;

/**
 * A handler that can also answer a {@link DirectSink} without building a reply envelope (the
 * module host's, for the in-process transport's `deliver()`): `direct` has the handler's
 * outcomes, the reply's payload and error handed over as they are.
 */
export interface DirectHandler extends TransportHandler {
  direct?(request: Envelope, channel: ServerChannel, sink: DirectSink): void;
}

/**
 * The caller's side of one request: callbacks the server's channel reaches, and a `cancel` slot
 * the transport fills in so the caller can cancel without any lookup table.
 */
export interface RequestHooks {
  onLeaseExtend?(ttl_ms: number): void;
  onProgress?(message: string, fraction?: number): void;
  /** Set by the transport during `request()`: sends a cancel for this request. */
  canceller?: Canceller;
}

/** Removes a served target; resolves when it no longer receives requests. */
export type Unserve = () => Promise<void>;

/**
 * Moves envelopes between a caller and the host serving a target. Implementations: in-process
 * (default), NATS (distributed). The contract is honest for a wire: async, envelopes are plain
 * JSON, and no object reference is shared between caller and server (the in-process transport
 * can prove it with `copy: 'json'`).
 */
export interface Transport {
  readonly name: string;
  /** Starts serving `target`. Rejects with E_CONFLICT when it is already served here. */
  serve(target: string, handler: TransportHandler): Promise<Unserve>;
  /**
   * Sends a request envelope and resolves with the reply envelope (which may carry `error`).
   * Rejects with E_NO_TARGET when nobody serves `request.target`.
   */
  request(request: Envelope, hooks?: RequestHooks): Promise<Envelope>;
  /**
   * request() for a caller that settles by callback (the hub's PendingCall), where the transport
   * can skip the reply envelope (in-process): the same outcomes and errors, to `sink`. Optional.
   */
  deliver?(request: Envelope, sink: DirectSink): void;
  /** True when someone serves `target` on this transport. */
  serves(target: string): boolean;
  /** Stops everything; idempotent. */
  close(): Promise<void>;
}
