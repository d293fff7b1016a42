// The bytes of the event stream: one WebSocket text frame per event, built by `ws`'s own framer
// once and written to every subscriber's TCP socket as the same Buffer.

import * as wsLib from 'ws';

/** ws's readyState of an open socket. */
export const OPEN = 1;

/** ws send options of an event frame: a text frame from a Buffer (no per-socket encoding). */
export const TEXT = { binary: false } as const;

/** What the gateway uses of a ws client's TCP socket. */
export interface RawSocket {
  cork(): void;
  uncork(): void;
  write(data: Buffer, cb: (err?: Error | null) => void): boolean;
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

/**
 * The whole WebSocket frame of a text message (FIN, opcode 1, unmasked, no extension), framed by
 * `ws`'s own `Sender.frame` — the library's framing, not ours — and joined into one buffer so every
 * client's socket gets the same bytes.
 */
export function textFrame(payload: Buffer): Buffer {
  return Buffer.concat(WsSender.frame(payload, { fin: true, opcode: 1, mask: false, readOnly: false, rsv1: false }));
}
