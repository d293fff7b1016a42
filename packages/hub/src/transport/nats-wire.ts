import { createHmac } from 'node:crypto';

import { FrameMac, SIG_LEN } from './nats-mac.js';

/**
 * The wire format of the hub over NATS (subjects, frames, authentication).
 *
 * Subjects of a cluster `c`: module calls `finger.c.call.<module>` (queue group per module),
 * cancels `finger.c.cancel`, events `finger.c.events.<type>`, registry `finger.c.registry.<hb|hello|bye>`.
 *
 * Every message is one frame: an ASCII line `FW4 <kind> <node> <sig> <ssig>` and a newline, then
 * the body (a request batch, one `<token> <envelope JSON array>` line per request, see
 * nats-batch.ts and nats-envelope.ts; a reply envelope as a JSON array; the JSON of a heartbeat or control
 * message; an event batch is one event JSON per line). No NATS headers: building and parsing
 * nats.js header objects cost about as much as the rest of a call, and a frame line is read with
 * one `indexOf`.
 *
 * Authentication: `ssig` = MAC(serve key, kind \n node \n body) and, from daemons, `sig` = the
 * same MAC under the cluster key, where MAC is keyed BLAKE2s-256 for a message (the MAC's input)
 * of at most 384 bytes and HMAC-SHA256 above (nats-mac.ts; the length decides, so no field names
 * the algorithm); a signature left out is `-` (daemons leave the serve
 * signature out where no serve process has to verify: replies, progress and lease messages, which
 * only daemons receive). The serve key is derived from the cluster key ({@link serveKeyOf});
 * `module serve` processes hold only the serve key, so they can never produce a daemon signature:
 * a daemon treats a message that only carries a valid serve signature as coming from a serve
 * process (which may answer calls and announce its module, never originate a request). Anything
 * else is dropped.
 */

/** Who signed a message: a daemon (cluster key) or a `module serve` process (serve key only). */
export type WireRole = 'daemon' | 'serve';

/** Kinds of NATS messages finger sends. */
export type WireKind = 'request' | 'reply' | 'progress' | 'lease' | 'cancel' | 'events' | 'hb' | 'hello' | 'bye';

/** Subject names of one cluster. */
export interface ClusterSubjects {
  call(module_id: string): string;
  queue(module_id: string): string;
  cancel: string;
  event(type: string): string;
  events: string;
  registry(kind: 'hb' | 'hello' | 'bye'): string;
  registryAll: string;
}

/** The subjects of cluster `cluster` (validated like config `cluster`). */
export function clusterSubjects(cluster: string): ClusterSubjects {
  if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(cluster)) throw new Error(`invalid cluster name "${cluster}"`);
  const p = `finger.${cluster}`;
  return {
    call: (m) => `${p}.call.${m}`,
    queue: (m) => `q.${m}`,
    cancel: `${p}.cancel`,
    event: (t) => `${p}.events.${t}`,
    events: `${p}.events.>`,
    registry: (k) => `${p}.registry.${k}`,
    registryAll: `${p}.registry.*`,
  };
}

const SERVE_KEY_LABEL = 'finger-serve-key-v1';

/** The serve key of a cluster key (hex): what `module serve` processes are given. */
export function serveKeyOf(clusterKey: string | Uint8Array): string {
  return createHmac('sha256', clusterKey).update(SERVE_KEY_LABEL).digest('hex');
}

/** Options of {@link WireAuth}. */
export interface WireAuthOptions {
  /** `daemon` needs `cluster_key`; `serve` needs `serve_key`. */
  role: WireRole;
  /** This process's node id (unique in the cluster). */
  node: string;
  cluster_key?: string;
  serve_key?: string;
}

/**
 * A frame that passed {@link WireAuth.open}: who signed it, and its body. The body is read from the
 * frame in place: {@link text} decodes it without a view of it being made first.
 */
export class OpenedFrame {
  readonly ok = true as const;

  constructor(
    readonly role: WireRole,
    readonly node: string,
    readonly kind: WireKind,
    private readonly frame: Buffer,
    /** Where the body starts in `frame`. */
    private readonly at: number,
  ) {}

  /** The body's bytes (a view of the frame). */
  get body(): Buffer {
    return this.frame.subarray(this.at);
  }

  /** The body decoded from UTF-8. */
  text(): string {
    return this.frame.toString('utf8', this.at);
  }
}

/** Result of opening one frame: the opened frame, or why it was refused. */
export type WireCheck =
  | OpenedFrame
  /** `claimed_node`: the node the frame line names — not authenticated, a hint for the operator. */
  | { ok: false; reason: string; claimed_node?: string };

/** The kind and node of a frame line seen recently, with the MAC prefix they make. */
interface LineHead {
  /** The line's bytes from the kind to the space after the node. */
  bytes: Uint8Array;
  kind: WireKind;
  node: string;
  prefix: string;
}
/** Frame-line heads remembered (a process hears from few peers, mostly one per call). */
const HEADS = 4;

/**
 * Frame version 4: a request frame carries a batch of requests (nats-batch.ts, since FW2), the
 * envelopes in their version-2 compact form (nats-envelope.ts, since FW3), small messages signed
 * with keyed BLAKE2s (nats-mac.ts, since FW4).
 */
export const FRAME_MAGIC = 'FW4 ';
const MAGIC = FRAME_MAGIC;
/** Longest frame line read: magic, kind, a node id of ≤ 128 characters, two signatures. */
const MAX_LINE = 256;
const NL = 10;
const SP = 0x20;
const DASH = 0x2d;

/** Signs outgoing and verifies incoming frames of one process (see the file comment). */
export class WireAuth {
  readonly role: WireRole;
  readonly node: string;
  private readonly clusterKey: FrameMac | undefined;
  private readonly serveKey: FrameMac;
  private readonly heads: LineHead[] = [];
  private nextHead = 0;

  constructor(o: WireAuthOptions) {
    if (!/^[\x21-\x7e]{1,128}$/.test(o.node))
      throw new Error(`invalid node id "${o.node}" (1–128 printable characters)`);
    this.role = o.role;
    this.node = o.node;
    if (o.role === 'daemon') {
      if (!o.cluster_key) throw new Error('a daemon needs the cluster key (nats.cluster_key)');
      this.clusterKey = new FrameMac(Buffer.from(o.cluster_key, 'utf8'));
      this.serveKey = new FrameMac(Buffer.from(serveKeyOf(o.cluster_key), 'utf8'));
    } else {
      if (!o.serve_key) throw new Error('a serve process needs the serve key');
      this.serveKey = new FrameMac(Buffer.from(o.serve_key, 'utf8'));
    }
  }

  /**
   * The frame of a message of `kind` with `body`. A daemon may leave out the serve signature
   * (`forServe: false`) when no serve process needs to verify the message (replies, progress and
   * lease messages go to daemons only): one HMAC less.
   */
  seal(kind: WireKind, body: Uint8Array, forServe = true): Buffer {
    const lineLen = this.lineLength(kind, forServe);
    const out = Buffer.allocUnsafe(lineLen + body.length);
    out.set(body, lineLen);
    this.writeLine(out, kind, forServe, lineLen);
    return out;
  }

  /**
   * {@link seal} for a JSON text: the frame is allocated once and the text written straight into
   * it (no separate body buffer to copy; event batches run to tens of kilobytes). With `head`
   * (ASCII, e.g. a batch line's token and space), the body is `head + json`, written without
   * joining the two strings first.
   */
  sealJson(kind: WireKind, json: string, forServe = true, jsonBytes?: number, head = ''): Buffer {
    const lineLen = this.lineLength(kind, forServe);
    const bytes = jsonBytes ?? utf8Length(json);
    const out = Buffer.allocUnsafe(lineLen + head.length + bytes);
    const at = head.length === 0 ? lineLen : putLatin1(out, lineLen, head);
    if (bytes === json.length && bytes <= SHORT) putLatin1(out, at, json);
    else out.write(json, at, 'utf8');
    this.writeLine(out, kind, forServe, lineLen);
    return out;
  }

  /** Bytes of the frame line {@link sealJson} writes for `kind` (the frame is this plus the body). */
  lineLength(kind: WireKind, forServe = true): number {
    const withSsig = forServe || this.clusterKey === undefined;
    const withSig = this.clusterKey !== undefined;
    // magic, kind, node, two signatures (or "-"): three spaces and the newline
    return MAGIC.length + kind.length + this.node.length + 4 + (withSig ? SIG_LEN : 1) + (withSsig ? SIG_LEN : 1);
  }

  /**
   * Writes the frame line `FW4 <kind> <node> <sig> <ssig>\n` into `out[0, lineLen)`, signing the
   * body after it: byte by byte, the signatures straight into place (no strings to build and copy
   * for a small frame).
   */
  private writeLine(out: Buffer, kind: WireKind, forServe: boolean, lineLen: number): void {
    const end = out.length;
    let p = putLatin1(out, 0, MAGIC);
    p = putLatin1(out, p, kind);
    out[p++] = SP;
    p = putLatin1(out, p, this.node);
    out[p++] = SP;
    const prefix = `${kind}\n${this.node}\n`;
    if (this.clusterKey !== undefined) {
      this.clusterKey.signInto(prefix, out, lineLen, end, out, p);
      p += SIG_LEN;
    } else out[p++] = DASH;
    out[p++] = SP;
    if (forServe || this.clusterKey === undefined) {
      this.serveKey.signInto(prefix, out, lineLen, end, out, p);
      p += SIG_LEN;
    } else out[p++] = DASH;
    out[p] = NL;
  }

  /**
   * Verifies a received frame and returns its body. A daemon reports `role: 'daemon'` only for a
   * valid cluster-key signature; a valid serve signature alone means `serve`. The frame line is
   * read in place (its fields located by their spaces, the signatures compared as bytes).
   */
  open(data: Uint8Array): WireCheck {
    // nats.js hands over a Buffer (a view of what the socket read): no second view made of it
    const buf = data instanceof Buffer ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const len = buf.length;
    if (len < 4 || buf[0] !== 0x46 || buf[1] !== 0x57 || buf[3] !== SP)
      return { ok: false, reason: 'unsigned message (no frame)' };
    if (buf[2] !== 0x34) return { ok: false, reason: 'unsupported frame version' }; // "FW? "
    // the frame line: "FW4 " kind SP node SP sig SP ssig NL, at most MAX_LINE bytes
    const limit = len < MAX_LINE + 1 ? len : MAX_LINE + 1;
    let s1 = -1;
    let s2 = -1;
    let s3 = -1;
    let nl = -1;
    let extra = false;
    for (let i = MAGIC.length; i < limit; i++) {
      const c = buf[i];
      if (c === NL) {
        nl = i;
        break;
      }
      if (c !== SP) continue;
      if (s1 < 0) s1 = i;
      else if (s2 < 0) s2 = i;
      else if (s3 < 0) s3 = i;
      else extra = true;
    }
    if (nl < 0) return { ok: false, reason: 'unsigned message (no frame)' };
    if (extra || s3 < 0 || s1 === MAGIC.length || s2 === s1 + 1) return { ok: false, reason: 'malformed frame line' };
    const head = this.headOf(buf, s1, s2);
    const at = nl + 1;
    const sigAt = s2 + 1;
    const sigLen = s3 - sigAt;
    const daemonSigned = !(sigLen === 1 && buf[sigAt] === DASH);
    if (this.clusterKey !== undefined && daemonSigned) {
      if (this.clusterKey.verify(head.prefix, buf, at, len, buf, sigAt, sigLen))
        return new OpenedFrame('daemon', head.node, head.kind, buf, at);
    }
    const ssigAt = s3 + 1;
    const ssigLen = nl - ssigAt;
    if (ssigLen === 1 && buf[ssigAt] === DASH) {
      return {
        ok: false,
        reason: this.clusterKey !== undefined && daemonSigned ? 'bad signature' : 'unsigned message',
        claimed_node: head.node,
      };
    }
    if (!this.serveKey.verify(head.prefix, buf, at, len, buf, ssigAt, ssigLen))
      return { ok: false, reason: 'bad signature', claimed_node: head.node };
    // a serve process cannot tell daemons from serve processes: both sign with the serve key
    return new OpenedFrame(this.clusterKey === undefined ? 'daemon' : 'serve', head.node, head.kind, buf, at);
  }

  /**
   * The kind and node of the frame line in `buf` (kind from byte 4 to `s1`, node to `s2`): one
   * remembered when the same bytes came before (the same peer sending the same kind), so a lone
   * call decodes no strings and builds no MAC prefix for its frame line.
   */
  private headOf(buf: Buffer, s1: number, s2: number): LineHead {
    const from = MAGIC.length;
    const n = s2 - from;
    for (const h of this.heads) {
      const b = h.bytes;
      if (b.length !== n) continue;
      let i = 0;
      while (i < n && b[i] === buf[from + i]) i++;
      if (i === n) return h;
    }
    const kind = buf.toString('latin1', from, s1) as WireKind;
    const node = buf.toString('latin1', s1 + 1, s2);
    const head: LineHead = { bytes: Uint8Array.from(buf.subarray(from, s2)), kind, node, prefix: `${kind}\n${node}\n` };
    this.heads[this.nextHead] = head;
    this.nextHead = (this.nextHead + 1) % HEADS;
    return head;
  }
}

/**
 * Texts up to this length are measured and copied in JavaScript when they are ASCII (see {@link utf8Length}):
 * a lone envelope line. Longer ones (batches) are faster through the bindings once warm.
 */
const SHORT = 384;

/**
 * UTF-8 bytes of `s`. A short ASCII text (a lone envelope line) is measured by a loop here rather
 * than `Buffer.byteLength`, and {@link WireAuth.sealJson} then copies it the same way: on the
 * path of a lone call, which runs cold after an idle wait, each trip into a Node binding costs a
 * few microseconds; a loop over 200 characters costs less.
 */
export function utf8Length(s: string): number {
  if (s.length > SHORT) return Buffer.byteLength(s, 'utf8');
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return Buffer.byteLength(s, 'utf8');
  return s.length;
}

/** Writes Latin-1 text `s` at `out[at]` (ASCII text: its UTF-8 bytes); returns the index after it. */
function putLatin1(out: Uint8Array, at: number, s: string): number {
  for (let i = 0; i < s.length; i++) out[at + i] = s.charCodeAt(i);
  return at + s.length;
}

/** UTF-8 bytes of `value`'s JSON. */
export function encodeJson(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

/** Parses a message body (UTF-8 bytes, or text already decoded) as JSON; undefined when it is not JSON. */
export function decodeJson(data: string | Uint8Array): unknown {
  try {
    if (typeof data === 'string') return JSON.parse(data);
    const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    return JSON.parse(buf.toString('utf8'));
  } catch {
    return undefined;
  }
}
