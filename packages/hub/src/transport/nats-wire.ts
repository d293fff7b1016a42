import { createHmac } from 'node:crypto';

import { Sha256Mac } from './nats-mac.js';

/**
 * The wire format of the hub over NATS (subjects, frames, authentication).
 *
 * Subjects of a cluster `c`: module calls `finger.c.call.<module>` (queue group per module),
 * cancels `finger.c.cancel`, events `finger.c.events.<type>`, registry `finger.c.registry.<hb|hello|bye>`.
 *
 * Every message is one frame: an ASCII line `FW3 <kind> <node> <sig> <ssig>` and a newline, then
 * the body (a request batch, one `<token> <envelope JSON array>` line per request, see
 * nats-batch.ts and nats-envelope.ts; a reply envelope as a JSON array; the JSON of a heartbeat or control
 * message; an event batch is one event JSON per line). No NATS headers: building and parsing
 * nats.js header objects cost about as much as the rest of a call, and a frame line is read with
 * one `indexOf`.
 *
 * Authentication: `ssig` = HMAC-SHA256(serve key, kind \n node \n body) and, from daemons,
 * `sig` = the same HMAC under the cluster key; a signature left out is `-` (daemons leave the serve
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

/** Result of opening one frame: who signed it, and its body. */
export type WireCheck =
  { ok: true; role: WireRole; node: string; kind: WireKind; body: Buffer } | { ok: false; reason: string };

/**
 * Frame version 3: a request frame carries a batch of requests (nats-batch.ts, since FW2), the
 * envelopes in their version-2 compact form (nats-envelope.ts, since FW3).
 */
export const FRAME_MAGIC = 'FW3 ';
const MAGIC = FRAME_MAGIC;
/** Length of a signature: base64url of 32 bytes, unpadded. */
const SIG_LEN = 43;
/** Longest frame line read: magic, kind, a node id of ≤ 128 characters, two signatures. */
const MAX_LINE = 256;
const NL = 10;

/** Signs outgoing and verifies incoming frames of one process (see the file comment). */
export class WireAuth {
  readonly role: WireRole;
  readonly node: string;
  private readonly clusterKey: Sha256Mac | undefined;
  private readonly serveKey: Sha256Mac;

  constructor(o: WireAuthOptions) {
    if (!/^[\x21-\x7e]{1,128}$/.test(o.node))
      throw new Error(`invalid node id "${o.node}" (1–128 printable characters)`);
    this.role = o.role;
    this.node = o.node;
    if (o.role === 'daemon') {
      if (!o.cluster_key) throw new Error('a daemon needs the cluster key (nats.cluster_key)');
      this.clusterKey = new Sha256Mac(Buffer.from(o.cluster_key, 'utf8'));
      this.serveKey = new Sha256Mac(Buffer.from(serveKeyOf(o.cluster_key), 'utf8'));
    } else {
      if (!o.serve_key) throw new Error('a serve process needs the serve key');
      this.serveKey = new Sha256Mac(Buffer.from(o.serve_key, 'utf8'));
    }
  }

  /**
   * The frame of a message of `kind` with `body`. A daemon may leave out the serve signature
   * (`forServe: false`) when no serve process needs to verify the message (replies, progress and
   * lease messages go to daemons only): one HMAC less.
   */
  seal(kind: WireKind, body: Uint8Array, forServe = true): Buffer {
    const ssig = forServe || this.clusterKey === undefined ? mac(this.serveKey, kind, this.node, body) : '-';
    const sig = this.clusterKey !== undefined ? mac(this.clusterKey, kind, this.node, body) : '-';
    const line = `${MAGIC}${kind} ${this.node} ${sig} ${ssig}\n`;
    const out = Buffer.allocUnsafe(line.length + body.length);
    out.write(line, 0, 'latin1');
    out.set(body, line.length);
    return out;
  }

  /**
   * {@link seal} for a JSON text: the frame is allocated once and the text written straight into
   * it (no separate body buffer to copy; event batches run to tens of kilobytes).
   */
  sealJson(kind: WireKind, json: string, forServe = true, jsonBytes?: number): Buffer {
    const withSsig = forServe || this.clusterKey === undefined;
    const withSig = this.clusterKey !== undefined;
    const lineLen = this.lineLength(kind, forServe);
    const out = Buffer.allocUnsafe(lineLen + (jsonBytes ?? Buffer.byteLength(json, 'utf8')));
    out.write(json, lineLen, 'utf8');
    const body = out.subarray(lineLen);
    const ssig = withSsig ? mac(this.serveKey, kind, this.node, body) : '-';
    const sig = withSig ? mac(this.clusterKey!, kind, this.node, body) : '-';
    out.write(`${MAGIC}${kind} ${this.node} ${sig} ${ssig}\n`, 0, 'latin1');
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
   * Verifies a received frame and returns its body. A daemon reports `role: 'daemon'` only for a
   * valid cluster-key signature; a valid serve signature alone means `serve`.
   */
  open(data: Uint8Array): WireCheck {
    const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    if (buf.length < MAGIC.length || buf.toString('latin1', 0, MAGIC.length) !== MAGIC) {
      const older = buf.length >= 4 && buf[0] === 0x46 && buf[1] === 0x57 && buf[3] === 0x20; // "FW? "
      return { ok: false, reason: older ? 'unsupported frame version' : 'unsigned message (no frame)' };
    }
    const nl = buf.indexOf(NL);
    if (nl < 0 || nl > MAX_LINE) return { ok: false, reason: 'unsigned message (no frame)' };
    const f = buf.toString('latin1', MAGIC.length, nl).split(' ');
    if (f.length !== 4 || !f[0] || !f[1]) return { ok: false, reason: 'malformed frame line' };
    const kind = f[0] as WireKind;
    const node = f[1];
    const body = buf.subarray(nl + 1);
    if (this.clusterKey !== undefined && f[2] !== '-') {
      if (same(f[2]!, mac(this.clusterKey, kind, node, body))) return { ok: true, role: 'daemon', node, kind, body };
    }
    const ssig = f[3]!;
    if (ssig === '-') {
      const daemonSigned = this.clusterKey !== undefined && f[2] !== '-';
      return { ok: false, reason: daemonSigned ? 'bad signature' : 'unsigned message' };
    }
    if (!same(ssig, mac(this.serveKey, kind, node, body))) return { ok: false, reason: 'bad signature' };
    // a serve process cannot tell daemons from serve processes: both sign with the serve key
    return { ok: true, role: this.clusterKey === undefined ? 'daemon' : 'serve', node, kind, body };
  }
}

function mac(key: Sha256Mac, kind: string, node: string, body: Uint8Array): string {
  return key.sign(`${kind}\n${node}\n`, body);
}

/** Constant-time comparison of two signatures (no early exit on the first difference). */
function same(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
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
