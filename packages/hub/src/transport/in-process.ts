import type { Envelope } from '@finger/protocol';
import { FingerError } from '@finger/protocol';

import type {
  Canceller,
  CancelReceiver,
  RequestHooks,
  ServerChannel,
  Transport,
  TransportHandler,
  Unserve,
} from './transport.js';

/** Options of the in-process transport. */
export interface InProcessTransportOptions {
  /**
   * `none` (default) hands the envelope object to the server as-is (the hub never mutates an
   * envelope after sending it); `json` round-trips every envelope through JSON, which proves that
   * nothing relies on shared object references — the test suite runs the hub both ways.
   */
  copy?: 'none' | 'json';
}

class InProcessChannel implements ServerChannel, Canceller {
  cancelled: string | undefined;
  private receiver: CancelReceiver | undefined;

  constructor(private readonly hooks: RequestHooks | undefined) {}

  extendLease(ttl_ms: number): void {
    this.hooks?.onLeaseExtend?.(ttl_ms);
  }

  progress(message: string, fraction?: number): void {
    this.hooks?.onProgress?.(message, fraction);
  }

  onCancel(receiver: CancelReceiver): void {
    if (this.cancelled !== undefined) receiver.onCancelled(this.cancelled);
    else this.receiver = receiver;
  }

  cancel(reason: string): void {
    if (this.cancelled !== undefined) return;
    this.cancelled = reason;
    const r = this.receiver;
    this.receiver = undefined;
    r?.onCancelled(reason);
  }
}

const jsonCopy = (e: Envelope): Envelope => JSON.parse(JSON.stringify(e)) as Envelope;

/** Delivers envelopes to handlers in the same process: the embedded default transport. */
export class InProcessTransport implements Transport {
  readonly name = 'inprocess';
  private readonly handlers = new Map<string, TransportHandler>();
  /** target → handler, so the hot path does not slice the module id out of every target. */
  private readonly byTarget = new Map<string, TransportHandler>();
  private readonly copy: boolean;
  private closed = false;

  constructor(options: InProcessTransportOptions = {}) {
    this.copy = options.copy === 'json';
  }

  async serve(target: string, handler: TransportHandler): Promise<Unserve> {
    if (this.closed) throw new FingerError('E_PROVIDER_CLOSED', 'transport is closed');
    if (this.handlers.has(target)) throw new FingerError('E_CONFLICT', `target "${target}" is already served`);
    this.handlers.set(target, handler);
    return async () => {
      if (this.handlers.get(target) === handler) this.handlers.delete(target);
      this.byTarget.clear();
    };
  }

  request(request: Envelope, hooks?: RequestHooks): Promise<Envelope> {
    let handler = this.byTarget.get(request.target);
    if (handler === undefined) {
      handler = this.handlers.get(moduleOf(request.target));
      if (handler !== undefined && this.byTarget.size < 100_000) this.byTarget.set(request.target, handler);
    }
    if (handler === undefined) {
      return Promise.reject(
        new FingerError('E_NO_TARGET', `no module serves "${request.target}"`, { target: request.target }),
      );
    }
    const channel = new InProcessChannel(hooks);
    if (hooks) hooks.canceller = channel;
    if (!this.copy) return handler(request, channel);
    return handler(jsonCopy(request), channel).then(jsonCopy);
  }

  serves(target: string): boolean {
    return this.handlers.has(moduleOf(target));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.handlers.clear();
    this.byTarget.clear();
  }
}

/**
 * Transports route by module id: the part of a tool id before the first dot, except MCP tool ids
 * (`mcp.<server>.<tool>`) whose module is `mcp.<server>`.
 */
export function moduleOf(target: string): string {
  const dot = target.indexOf('.');
  if (dot < 0) return target;
  if (dot === 3 && target.startsWith('mcp.')) {
    const second = target.indexOf('.', 4);
    return second < 0 ? target : target.slice(0, second);
  }
  return target.slice(0, dot);
}
