import type { Envelope } from '@finger/protocol';
import { FingerError } from '@finger/protocol';

import type { DirectSink } from './reply-sink.js';
import type {
  Canceller,
  CancelReceiver,
  DirectHandler,
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

const noTarget = (target: string): FingerError =>
  new FingerError('E_NO_TARGET', `no module serves "${target}"`, { target });

/** Delivers envelopes to handlers in the same process: the embedded default transport. */
export class InProcessTransport implements Transport {
  readonly name = 'inprocess';
  private readonly handlers = new Map<string, DirectHandler>();
  /** target → handler, so the hot path does not slice the module id out of every target. */
  private readonly byTarget = new Map<string, DirectHandler>();
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
    const handler = this.handlerOf(request.target);
    if (handler === undefined) return Promise.reject(noTarget(request.target));
    const channel = new InProcessChannel(hooks);
    if (hooks) hooks.canceller = channel;
    if (!this.copy) return handler(request, channel);
    return handler(jsonCopy(request), channel).then(jsonCopy);
  }

  /**
   * request() answering `sink`: a module host's handler (copy `none`) hands over its tool's
   * result or error as they are, with no reply envelope and no promise of its own; otherwise
   * the reply envelope goes to `sink.onReply`. E_NO_TARGET reaches `sink.onFailed` from a microtask.
   */
  deliver(request: Envelope, sink: DirectSink): void {
    const handler = this.handlerOf(request.target);
    if (handler === undefined) {
      const e = noTarget(request.target);
      queueMicrotask(() => sink.onFailed(e));
      return;
    }
    const direct = this.copy ? undefined : handler.direct;
    if (direct === undefined) {
      this.request(request, sink).then(
        (reply) => sink.onReply(reply),
        (e: unknown) => sink.onFailed(e),
      );
      return;
    }
    const channel = new InProcessChannel(sink);
    sink.canceller = channel;
    direct(request, channel, sink);
  }

  /** The handler serving `target` (cached per target, so the hot path does not slice the module id out of it). */
  private handlerOf(target: string): DirectHandler | undefined {
    let handler = this.byTarget.get(target);
    if (handler === undefined) {
      handler = this.handlers.get(moduleOf(target));
      if (handler !== undefined && this.byTarget.size < 100_000) this.byTarget.set(target, handler);
    }
    return handler;
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
