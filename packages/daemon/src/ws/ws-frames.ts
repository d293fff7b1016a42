// The bytes of the event stream: one WebSocket text frame per event, framed by `ws`'s own framer
// once per event, and written to subscribers as batches — the frames of one flush window joined
// into one Buffer that every client of a filter gets, as it is.

import * as wsLib from 'ws';

/** ws's readyState of an open socket. */
export const OPEN = 1;

/** ws send options of an event frame: a text frame from a Buffer (no per-socket encoding). */
export const TEXT = { binary: false } as const;

/** What the gateway uses of a ws client's TCP socket. */
export interface RawSocket {
  write(data: Buffer, cb: (err?: Error | null) => void): boolean;
}

/**
 * The events of one flush window of one filter, shared by every client of that filter: `wire` is
 * their WebSocket frames back to back (what a client without an extension is written, in one
 * write); `payloads` their frames' payloads, kept only when a client that negotiated an extension
 * (sent through ws, frame by frame) was there to need them.
 */
export interface EventBatch {
  readonly wire: Buffer;
  readonly payloads: readonly Buffer[] | undefined;
  /** Events in the batch. */
  readonly events: number;
}

/** `ws`'s frame builder (exported by `ws`, not declared by @types/ws). */
const WsSender = (wsLib as unknown as { Sender: { frame(data: Buffer, o: FrameOptions): Buffer[] } }).Sender;
interface FrameOptions {
  fin: boolean;
  opcode: number;
  mask: boolean;
  readOnly: boolean;
  rsv1: boolean;
}
const TEXT_FRAME: FrameOptions = { fin: true, opcode: 1, mask: false, readOnly: false, rsv1: false };

/**
 * The WebSocket frame of a text message (FIN, opcode 1, unmasked, no extension) as `ws`'s own
 * `Sender.frame` builds it — the library's framing, not ours: its header and the payload itself.
 */
export function textFrame(payload: Buffer): { header: Buffer; payload: Buffer } {
  const [header] = WsSender.frame(payload, TEXT_FRAME);
  return { header: header!, payload };
}

/** The payload of an event line's frame on the wire. */
export function eventPayload(json: string): Buffer {
  return Buffer.from('{"type":"event","event":' + json + '}');
}
