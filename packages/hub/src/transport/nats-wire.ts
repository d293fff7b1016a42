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
 * Authentication: `sig` = MAC(cluster key, kind \n node \n body), from daemons only; `ssig` =
 * `<mac>.<module>`, the same MAC under the serve key of one module, for the serve hosts of that
 * module, or a bare `<mac>` under the registry key, for every serve host (a daemon's registry
 * messages). MAC is keyed BLAKE2s-256 for a message (the MAC's input) of at most 384 bytes and
 * HMAC-SHA256 above (nats-mac.ts; the length decides, so no field names the algorithm); a
 * signature left out is `-` (daemons leave the serve signature out where no serve host has to
 * verify: replies, progress and lease messages, events). A serve host holds only its module's
 * serve key and the registry key ({@link serveKeyOf}, derived from the cluster key), so it can
 * never produce a daemon signature, nor speak for a host of another module: a daemon treats a
 * message carrying only a valid serve signature as coming from a serve host of the module the
 * signature names (which may answer that module's calls and announce it, never originate a
 * request), and a message of a serve host with a bare registry signature as unsigned. Anything
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

const SERVE_KEY_LABEL = 'finger-serve-key-v2';
/** How a serve key starts: `fsk2.<module>.<module key>.<registry key>` (64 hex digits each). */
const SERVE_KEY_RE = /^fsk2\.([a-z0-9][a-z0-9_.-]{0,63})\.([0-9a-f]{64})\.([0-9a-f]{64})$/;
/** A module id (manifest.ts: MODULE_ID_PATTERN, or `mcp.<name>`). */
const MODULE_ID_RE = /^(?:[a-z0-9][a-z0-9_-]{0,63}|mcp\.[a-z0-9_]{1,60})$/;

/** The secret of module `module_id`'s serve hosts. */
function moduleServeSecret(clusterKey: string, module_id: string): string {
  return createHmac('sha256', clusterKey).update(`${SERVE_KEY_LABEL}\nmodule\n${module_id}`).digest('hex');
}

/** The secret daemons sign their registry messages with for serve hosts (every serve host holds it). */
function registrySecret(clusterKey: string): string {
  return createHmac('sha256', clusterKey).update(`${SERVE_KEY_LABEL}\nregistry`).digest('hex');
}

/**
 * The serve key of module `module_id` (what `module serve` hosts of that module are given, never
 * the cluster key): `fsk2.<module>.<module secret>.<registry secret>`. Its module secret signs
 * what the host sends and verifies the calls daemons send it; the registry secret verifies the
 * daemons' registry messages. A host of one module cannot sign for another.
 */
export function serveKeyOf(clusterKey: string, module_id: string): string {
  if (!MODULE_ID_RE.test(module_id)) throw new Error(`invalid module id "${module_id}"`);
  return `fsk2.${module_id}.${moduleServeSecret(clusterKey, module_id)}.${registrySecret(clusterKey)}`;
}

/** A serve key read by {@link parseServeKey}. */
export interface ServeKey {
  module: string;
  module_secret: string;
  registry_secret: string;
}

/** Reads a serve key; a string says what is wrong with it (never echoing the secret). */
export function parseServeKey(text: string): ServeKey | string {
  const m = SERVE_KEY_RE.exec(text.trim());
  if (m !== null && MODULE_ID_RE.test(m[1]!)) return { module: m[1]!, module_secret: m[2]!, registry_secret: m[3]! };
  if (/^[0-9a-f]{64}$/.test(text.trim()))
    return "64 hex digits are no serve key: the cluster key itself (never give it to a serve host), or a cluster-wide serve key of an earlier finger — serve keys are per module now: print this module's with `myfinger module serve-key <module>` where the cluster key is";
  return `not a serve key (expected fsk2.<module>.<64 hex>.<64 hex>, ${text.trim().length} characters given): print one with \`myfinger module serve-key <module>\` where the cluster key is`;
}

/**
 * Who a serve signature is for: `false` nobody (no serve signature), `true` every serve host (the
 * registry secret: a daemon's registry messages), or a module id (that module's serve hosts).
 */
export type ServeScope = boolean | string;

/** Options of {@link WireAuth}. */
export interface WireAuthOptions {
  /** `daemon` needs `cluster_key`; `serve` needs `serve_key`. */
  role: WireRole;
  /** This process's node id (unique in the cluster). */
  node: string;
  cluster_key?: string;
  /** A serve host's {@link serveKeyOf} (the module it may speak for is named in it). */
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
    /**
     * On a daemon, for `role: 'serve'`: the module whose serve key signed the frame — the only
     * module the sender may speak for.
     */
    readonly scope?: string,
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
  /**
   * `claimed_node`: the node the frame line names — not authenticated, a hint for the operator.
   * `quiet`: a message a serve host is not meant to read (signed for another module's hosts, or
   * for daemons only), ignored without a report.
   */
  | { ok: false; reason: string; claimed_node?: string; quiet?: true };

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
 * Frame version 5: a request frame carries a batch of requests (nats-batch.ts, since FW2), the
 * envelopes in their version-2 compact form (nats-envelope.ts, since FW3), small messages signed
 * with keyed BLAKE2s (nats-mac.ts, since FW4), serve signatures per module (since FW5).
 */
export const FRAME_MAGIC = 'FW5 ';
const MAGIC = FRAME_MAGIC;
/** Longest frame line read: magic, kind, a node id of ≤ 128 characters, two signatures, a module id. */
const MAX_LINE = 320;
/** Kinds a daemon signs with the registry secret for serve hosts. */
const REGISTRY_KINDS = new Set<WireKind>(['hb', 'hello', 'bye']);
const NL = 10;
const SP = 0x20;
const DASH = 0x2d;

/** Serve-key MACs a daemon keeps (one per module it signs for or hears from; least recent out). */
const MAX_SCOPES = 1024;
const DOT = 0x2e;

/** Signs outgoing and verifies incoming frames of one process (see the file comment). */
export class WireAuth {
  readonly role: WireRole;
  readonly node: string;
  /** A serve host's module (the one its key signs for); undefined on a daemon. */
  readonly module: string | undefined;
  private readonly clusterKey: FrameMac | undefined;
  /** Daemon: the cluster key, to derive serve keys from. */
  private readonly clusterSecret: string | undefined;
  /** Registry-secret MAC: a daemon signs its registry messages with it, a serve host verifies them. */
  private readonly registryKey: FrameMac;
  /** Serve host: its module's serve key. */
  private readonly ownKey: FrameMac | undefined;
  /** Daemon: serve-key MACs by module (bounded, {@link MAX_SCOPES}). */
  private readonly scoped = new Map<string, FrameMac>();
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
      this.clusterSecret = o.cluster_key;
      this.registryKey = new FrameMac(Buffer.from(registrySecret(o.cluster_key), 'utf8'));
      this.module = undefined;
    } else {
      if (!o.serve_key) throw new Error('a serve process needs the serve key');
      const k = parseServeKey(o.serve_key);
      if (typeof k === 'string') throw new Error(k);
      this.module = k.module;
      this.ownKey = new FrameMac(Buffer.from(k.module_secret, 'utf8'));
      this.registryKey = new FrameMac(Buffer.from(k.registry_secret, 'utf8'));
    }
  }

  /**
   * The frame of a message of `kind` with `body`, signed for the serve hosts `forServe` names
   * ({@link ServeScope}; a daemon leaves the serve signature out for `false`: one MAC less). A
   * serve host always signs with its own module's key.
   */
  seal(kind: WireKind, body: Uint8Array, forServe: ServeScope = true): Buffer {
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
  sealJson(kind: WireKind, json: string, forServe: ServeScope = true, jsonBytes?: number, head = ''): Buffer {
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
  lineLength(kind: WireKind, forServe: ServeScope = true): number {
    const scope = this.scopeOf(forServe);
    const withSig = this.clusterKey !== undefined;
    const ssig = scope === false ? 1 : scope === true ? SIG_LEN : SIG_LEN + 1 + scope.length;
    // magic, kind, node, two signatures (or "-"): three spaces and the newline
    return MAGIC.length + kind.length + this.node.length + 4 + (withSig ? SIG_LEN : 1) + ssig;
  }

  /** Whom this process signs a message for: a serve host, always its own module. */
  private scopeOf(forServe: ServeScope): ServeScope {
    return this.module ?? forServe;
  }

  /**
   * Writes the frame line `FW5 <kind> <node> <sig> <ssig>\n` into `out[0, lineLen)`, signing the
   * body after it: byte by byte, the signatures straight into place (no strings to build and copy
   * for a small frame).
   */
  private writeLine(out: Buffer, kind: WireKind, forServe: ServeScope, lineLen: number): void {
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
    const scope = this.scopeOf(forServe);
    if (scope === false) out[p++] = DASH;
    else if (scope === true) {
      this.registryKey.signInto(prefix, out, lineLen, end, out, p);
      p += SIG_LEN;
    } else {
      const mac = this.serveKeyFor(scope);
      if (mac === undefined) throw new Error(`cannot sign for the serve hosts of "${scope}" (not a module id)`);
      mac.signInto(prefix, out, lineLen, end, out, p);
      p += SIG_LEN;
      out[p++] = DOT;
      p = putLatin1(out, p, scope);
    }
    out[p] = NL;
  }

  /** The MAC of module `module_id`'s serve key: a serve host has its own only, a daemon derives any. */
  private serveKeyFor(module_id: string): FrameMac | undefined {
    if (this.ownKey !== undefined) return module_id === this.module ? this.ownKey : undefined;
    let mac = this.scoped.get(module_id);
    if (mac !== undefined) return mac;
    if (!MODULE_ID_RE.test(module_id)) return undefined;
    mac = new FrameMac(Buffer.from(moduleServeSecret(this.clusterSecret!, module_id), 'utf8'));
    if (this.scoped.size >= MAX_SCOPES) this.scoped.delete(this.scoped.keys().next().value!);
    this.scoped.set(module_id, mac);
    return mac;
  }

  /**
   * Verifies a received frame and returns its body. A daemon reports `role: 'daemon'` only for a
   * valid cluster-key signature; a valid module serve signature alone means `serve` (with its
   * module as `scope`). A serve host reports `daemon` for a frame signed with its module's key or,
   * for a registry message, the registry key; one signed for another module's hosts, or for
   * daemons only, is `quiet`. The frame line is read in place (its fields located by their
   * spaces, the signatures compared as bytes).
   */
  open(data: Uint8Array): WireCheck {
    // nats.js hands over a Buffer (a view of what the socket read): no second view made of it
    const buf = data instanceof Buffer ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const len = buf.length;
    if (len < 4 || buf[0] !== 0x46 || buf[1] !== 0x57 || buf[3] !== SP)
      return { ok: false, reason: 'unsigned message (no frame)' };
    if (buf[2] !== 0x35) return { ok: false, reason: 'unsupported frame version' }; // "FW? "
    // the frame line: "FW5 " kind SP node SP sig SP ssig NL, at most MAX_LINE bytes
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
      if (this.clusterKey === undefined && daemonSigned) return { ok: false, reason: 'for daemons', quiet: true };
      return {
        ok: false,
        reason: this.clusterKey !== undefined && daemonSigned ? 'bad signature' : 'unsigned message',
        claimed_node: head.node,
      };
    }
    if (ssigLen === SIG_LEN) {
      // the registry secret: every serve host holds it, so only a serve host trusts it (for a daemon's registry message)
      if (this.clusterKey !== undefined || !REGISTRY_KINDS.has(head.kind))
        return { ok: false, reason: 'bad signature', claimed_node: head.node };
      if (!this.registryKey.verify(head.prefix, buf, at, len, buf, ssigAt, SIG_LEN))
        return { ok: false, reason: 'bad signature', claimed_node: head.node };
      return new OpenedFrame('daemon', head.node, head.kind, buf, at);
    }
    if (ssigLen < SIG_LEN + 2 || buf[ssigAt + SIG_LEN] !== DOT)
      return { ok: false, reason: 'bad signature', claimed_node: head.node };
    const scope = buf.toString('latin1', ssigAt + SIG_LEN + 1, nl);
    if (this.module !== undefined && scope !== this.module)
      return { ok: false, reason: `for module ${scope}`, quiet: true };
    const mac = this.serveKeyFor(scope);
    if (mac === undefined || !mac.verify(head.prefix, buf, at, len, buf, ssigAt, SIG_LEN))
      return { ok: false, reason: 'bad signature', claimed_node: head.node };
    // a serve host cannot tell daemons from other hosts of its module: both sign with its key
    return this.clusterKey === undefined
      ? new OpenedFrame('daemon', head.node, head.kind, buf, at)
      : new OpenedFrame('serve', head.node, head.kind, buf, at, scope);
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
