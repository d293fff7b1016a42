import { createHmac } from 'node:crypto';

import { FrameKey, MAC_LEN, signingHeader } from './nats-mac.js';

/**
 * The wire format of the hub over NATS (subjects, frames, authentication).
 *
 * Subjects of a cluster `c`: module calls `finger.c.call.<module>` (queue group per module),
 * cancels `finger.c.cancel`, events `finger.c.events.<type>`, registry `finger.c.registry.<hb|hello|bye>`.
 *
 * Every message is one frame: an ASCII line, then the body (a request batch, one `<token>
 * <envelope JSON array>` line per request, see nats-batch.ts and nats-envelope.ts; a reply
 * envelope as a JSON array; the JSON of a heartbeat or control message; an event batch is one
 * event JSON per line). No NATS headers: building and parsing nats.js header objects cost about
 * as much as the rest of a call. The line (version 6):
 *
 *     FW6 <kind> <node> <ts> <sig> <ssig>\n
 *
 * - `ts`: the sender's clock, milliseconds since the epoch, 13 digits. A receiver refuses a frame
 *   whose `ts` is more than `max_skew_ms` (2 min) from its own clock (`stale frame`); within that
 *   window the id windows refuse replays (a request's id at its server, an event's id, a registry
 *   message's `seq`).
 * - `sig`: `c:<mac>` under the cluster key, from daemons only, or `-`.
 * - `ssig`: `m.<module>:<mac>` under the serve secret of one module, for (or from) the serve
 *   hosts of that module; `r:<mac>` under the registry secret, for every serve host (a daemon's
 *   registry messages); or `-`.
 * - `<mac>` = base64url(HMAC-SHA256(key, `FW6\n<key id>\n<kind>\n<node>\n<ts>\n<subject>\n` ‖
 *   body)), the whole 256-bit tag (43 characters), made and checked with `node:crypto`
 *   (nats-mac.ts; compared with `timingSafeEqual`). The key id is `c`, `r` or `m.<module>`; the
 *   subject is the NATS subject the frame is published on, so a frame replayed on another subject
 *   (another module's calls, another inbox, another event type) fails.
 *
 * A serve host holds only its module's serve secret and the registry secret ({@link serveKeyOf},
 * derived from the cluster key), so it can never produce a daemon signature, nor speak for a host
 * of another module: a daemon treats a message carrying only a valid serve signature as coming
 * from a serve host of the module the signature names (which may answer that module's calls and
 * announce it, never originate a request), and a message of a serve host with a registry
 * signature as unsigned. Anything else is dropped, with a code: `E_UNAUTHENTICATED` (no frame, no
 * or a wrong MAC, a stale timestamp) or `E_INVALID_ENVELOPE` (a malformed line, or a frame of
 * another version — `FW1`–`FW5` came before this format: every node of a cluster is upgraded
 * together).
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
  /** The clock frames are stamped and checked with (ms since the epoch). Default `Date.now`. */
  now?: () => number;
  /** How far a frame's timestamp may be from this clock, in ms. Default {@link MAX_FRAME_SKEW_MS}. */
  max_skew_ms?: number;
}

/** How far a frame's timestamp may be from the receiver's clock by default (ms): keep clocks in step (NTP). */
export const MAX_FRAME_SKEW_MS = 120_000;

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

/** Why a frame was refused: `E_UNAUTHENTICATED` (no frame, no or a wrong MAC, stale) or `E_INVALID_ENVELOPE` (malformed, another version). */
export type WireRefusalCode = 'E_UNAUTHENTICATED' | 'E_INVALID_ENVELOPE';

/** Result of opening one frame: the opened frame, or why it was refused. */
export type WireCheck =
  | OpenedFrame
  /**
   * `claimed_node`: the node the frame line names — not authenticated, a hint for the operator.
   * `quiet`: a message a serve host is not meant to read (signed for another module's hosts, or
   * for daemons only), ignored without a report. `version`: the version a frame of another
   * format names (`FW5`).
   */
  | { ok: false; code: WireRefusalCode; reason: string; claimed_node?: string; quiet?: true; version?: string };

/** The frame format's version: its line starts `FW6 `. */
export const FRAME_VERSION = 'FW6';
/** How a frame starts. */
export const FRAME_MAGIC = `${FRAME_VERSION} `;
const MAGIC = FRAME_MAGIC;
/** Digits of a frame's timestamp (ms since the epoch, zero-padded). */
const TS_LEN = 13;
const TS_RE = /^[0-9]{13}$/;
/** Longest frame line read: magic, kind, a node id of ≤ 128 characters, the timestamp, two signatures, a module id. */
const MAX_LINE = 400;
const KINDS: ReadonlySet<string> = new Set<WireKind>([
  'request',
  'reply',
  'progress',
  'lease',
  'cancel',
  'events',
  'hb',
  'hello',
  'bye',
]);
/** Kinds a daemon signs with the registry secret for serve hosts. */
const REGISTRY_KINDS = new Set<WireKind>(['hb', 'hello', 'bye']);
const NL = 10;
const SP = 0x20;
const COLON = 0x3a;
const DASH = 0x2d;
/** Serve keys a daemon keeps (one per module it signs for or hears from; least recent out). */
const MAX_SCOPES = 1024;

/** Signs outgoing and verifies incoming frames of one process (see the file comment). */
export class WireAuth {
  readonly role: WireRole;
  readonly node: string;
  /** A serve host's module (the one its key signs for); undefined on a daemon. */
  readonly module: string | undefined;
  private readonly clusterKey: FrameKey | undefined;
  /** Daemon: the cluster key, to derive serve keys from. */
  private readonly clusterSecret: string | undefined;
  /** The registry secret: a daemon signs its registry messages with it, a serve host verifies them. */
  private readonly registryKey: FrameKey;
  /** Serve host: its module's serve secret. */
  private readonly ownKey: FrameKey | undefined;
  /** Daemon: serve keys by module (bounded, {@link MAX_SCOPES}). */
  private readonly scoped = new Map<string, FrameKey>();
  private readonly now: () => number;
  private readonly maxSkew: number;
  /** The millisecond {@link stampText} was made for (-1: none yet). */
  private stampMs = -1;
  private stampText = '';

  constructor(o: WireAuthOptions) {
    if (!/^[\x21-\x7e]{1,128}$/.test(o.node))
      throw new Error(`invalid node id "${o.node}" (1–128 printable characters)`);
    this.role = o.role;
    this.node = o.node;
    this.now = o.now ?? Date.now;
    this.maxSkew = o.max_skew_ms ?? MAX_FRAME_SKEW_MS;
    if (o.role === 'daemon') {
      if (!o.cluster_key) throw new Error('a daemon needs the cluster key (nats.cluster_key)');
      this.clusterKey = new FrameKey('c', o.cluster_key);
      this.clusterSecret = o.cluster_key;
      this.registryKey = new FrameKey('r', registrySecret(o.cluster_key));
      this.module = undefined;
    } else {
      if (!o.serve_key) throw new Error('a serve process needs the serve key');
      const k = parseServeKey(o.serve_key);
      if (typeof k === 'string') throw new Error(k);
      this.module = k.module;
      this.ownKey = new FrameKey(`m.${k.module}`, k.module_secret);
      this.registryKey = new FrameKey('r', k.registry_secret);
    }
  }

  /**
   * The frame of a message of `kind` with `body`, to be published on `subject`, signed for the
   * serve hosts `forServe` names ({@link ServeScope}; a daemon leaves the serve signature out for
   * `false`: one MAC less). A serve host always signs with its own module's key.
   */
  seal(subject: string, kind: WireKind, body: Uint8Array, forServe: ServeScope = true): Buffer {
    const lineLen = this.lineLength(kind, forServe);
    const out = Buffer.allocUnsafe(lineLen + body.length);
    out.set(body, lineLen);
    this.writeLine(out, subject, kind, forServe, lineLen);
    return out;
  }

  /**
   * {@link seal} for a JSON text: the frame is allocated once and the text written straight into
   * it (no separate body buffer to copy; event batches run to tens of kilobytes). With `head`
   * (ASCII, e.g. a batch line's token and space), the body is `head + json`, written without
   * joining the two strings first.
   */
  sealJson(
    subject: string,
    kind: WireKind,
    json: string,
    forServe: ServeScope = true,
    jsonBytes?: number,
    head = '',
  ): Buffer {
    const lineLen = this.lineLength(kind, forServe);
    const bytes = jsonBytes ?? utf8Length(json);
    const out = Buffer.allocUnsafe(lineLen + head.length + bytes);
    const at = head.length === 0 ? lineLen : putLatin1(out, lineLen, head);
    if (bytes === json.length && bytes <= SHORT) putLatin1(out, at, json);
    else out.write(json, at, 'utf8');
    this.writeLine(out, subject, kind, forServe, lineLen);
    return out;
  }

  /** Bytes of the frame line {@link sealJson} writes for `kind` (the frame is this plus the body). */
  lineLength(kind: WireKind, forServe: ServeScope = true): number {
    const scope = this.scopeOf(forServe);
    const sig = this.clusterKey !== undefined ? 2 + MAC_LEN : 1;
    const ssig = scope === false ? 1 : scope === true ? 2 + MAC_LEN : 3 + scope.length + MAC_LEN;
    // magic, kind, node, timestamp, two signatures: four spaces and the newline
    return MAGIC.length + kind.length + this.node.length + TS_LEN + sig + ssig + 5;
  }

  /** Whom this process signs a message for: a serve host, always its own module. */
  private scopeOf(forServe: ServeScope): ServeScope {
    return this.module ?? forServe;
  }

  /**
   * Writes the frame line `FW6 <kind> <node> <ts> <sig> <ssig>\n` into `out[0, lineLen)`, signing
   * the body after it. Each field and tag goes straight into the frame (no line string built,
   * no Buffer of a tag made and read back).
   */
  private writeLine(out: Buffer, subject: string, kind: WireKind, forServe: ServeScope, lineLen: number): void {
    const ts = this.stamp();
    const scope = this.scopeOf(forServe);
    let serveKey: FrameKey | undefined;
    if (scope === true) serveKey = this.registryKey;
    else if (scope !== false) {
      serveKey = this.serveKeyFor(scope);
      if (serveKey === undefined) throw new Error(`cannot sign for the serve hosts of "${scope}" (not a module id)`);
    }
    let p = putLatin1(out, 0, MAGIC);
    p = putLatin1(out, p, kind);
    out[p++] = SP;
    p = putLatin1(out, p, this.node);
    out[p++] = SP;
    p = putLatin1(out, p, ts);
    out[p++] = SP;
    p =
      this.clusterKey !== undefined ? this.signInto(this.clusterKey, out, p, subject, kind, ts, lineLen) : dash(out, p);
    out[p++] = SP;
    p = serveKey !== undefined ? this.signInto(serveKey, out, p, subject, kind, ts, lineLen) : dash(out, p);
    if (p !== lineLen - 1) throw new Error('frame line length mismatch'); // lineLength and this line disagree: a bug
    out[p] = NL;
  }

  /** Writes `<key id>:<mac>` at `out[at]`, the MAC of the body after the line; returns the index after it. */
  private signInto(
    key: FrameKey,
    out: Buffer,
    at: number,
    subject: string,
    kind: WireKind,
    ts: string,
    lineLen: number,
  ): number {
    const p = putLatin1(out, at, key.id);
    out[p] = COLON;
    const header = signingHeader(FRAME_VERSION, key.id, kind, this.node, ts, subject);
    key.macInto(header, out, lineLen, out.length, out, p + 1);
    return p + 1 + MAC_LEN;
  }

  /**
   * This clock as a frame timestamp (13 digits). The text is kept for the millisecond it stands
   * for: frames sent in the same millisecond (a busy caller's) share it.
   */
  private stamp(): string {
    const ms = Math.max(0, Math.floor(this.now()));
    if (ms === this.stampMs) return this.stampText;
    const ts = String(ms).padStart(TS_LEN, '0');
    if (ts.length !== TS_LEN) throw new Error(`clock out of range for a frame timestamp: ${ts}`);
    this.stampMs = ms;
    this.stampText = ts;
    return ts;
  }

  /** The key of module `module_id`'s serve hosts: a serve host has its own only, a daemon derives any. */
  private serveKeyFor(module_id: string): FrameKey | undefined {
    if (this.ownKey !== undefined) return module_id === this.module ? this.ownKey : undefined;
    let key = this.scoped.get(module_id);
    if (key !== undefined) return key;
    if (!MODULE_ID_RE.test(module_id)) return undefined;
    key = new FrameKey(`m.${module_id}`, moduleServeSecret(this.clusterSecret!, module_id));
    if (this.scoped.size >= MAX_SCOPES) this.scoped.delete(this.scoped.keys().next().value!);
    this.scoped.set(module_id, key);
    return key;
  }

  /**
   * Verifies a frame received on `subject` and returns its body. A daemon reports `role: 'daemon'`
   * only for a valid cluster-key signature; a valid module serve signature alone means `serve`
   * (with its module as `scope`). A serve host reports `daemon` for a frame signed with its
   * module's key or, for a registry message, the registry key; one signed for another module's
   * hosts, or for daemons only, is `quiet`. A frame that verifies but whose timestamp is more than
   * `max_skew_ms` from this clock is refused (`stale frame`).
   */
  open(data: Uint8Array, subject: string): WireCheck {
    // nats.js hands over a Buffer (a view of what the socket read): no second view made of it
    const buf = data instanceof Buffer ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const len = buf.length;
    if (len < 4 || buf[0] !== 0x46 || buf[1] !== 0x57 || buf[3] !== SP) return unsigned('unsigned message (no frame)');
    const v = buf[2]!;
    if (v !== 0x36) {
      if (v < 0x30 || v > 0x39) return unsigned('unsigned message (no frame)');
      return { ok: false, code: 'E_INVALID_ENVELOPE', reason: 'unsupported frame version', version: `FW${v - 0x30}` };
    }
    const nl = buf.subarray(0, Math.min(len, MAX_LINE + 1)).indexOf(NL);
    if (nl < 0) return unsigned('unsigned message (no frame)');
    const fields = buf.toString('latin1', MAGIC.length, nl).split(' ');
    const [kind = '', node = '', ts = '', sig = '', ssig = ''] = fields;
    if (fields.length !== 5 || !KINDS.has(kind) || node === '' || !TS_RE.test(ts) || sig === '' || ssig === '')
      return { ok: false, code: 'E_INVALID_ENVELOPE', reason: 'malformed frame line' };
    const k = kind as WireKind;
    const at = nl + 1;
    const sigAt = MAGIC.length + kind.length + node.length + ts.length + 3;
    const ssigAt = sigAt + sig.length + 1;
    const verify = (key: FrameKey, macAt: number, macLen: number) =>
      key.verify(signingHeader(FRAME_VERSION, key.id, kind, node, ts, subject), buf, at, len, buf, macAt, macLen);
    const daemonSigned = sig !== '-';
    if (this.clusterKey !== undefined && daemonSigned && sig.startsWith('c:'))
      if (verify(this.clusterKey, sigAt + 2, sig.length - 2))
        return this.fresh(ts, new OpenedFrame('daemon', node, k, buf, at));
    const bad = { ok: false, code: 'E_UNAUTHENTICATED', reason: 'bad signature', claimed_node: node } as const;
    if (ssig === '-') {
      if (this.clusterKey === undefined && daemonSigned)
        return { ok: false, code: 'E_UNAUTHENTICATED', reason: 'for daemons', quiet: true };
      return { ...bad, reason: this.clusterKey !== undefined && daemonSigned ? 'bad signature' : 'unsigned message' };
    }
    const colon = ssig.indexOf(':');
    if (colon < 0) return bad;
    const keyId = ssig.slice(0, colon);
    const macAt = ssigAt + colon + 1;
    const macLen = ssig.length - colon - 1;
    if (keyId === 'r') {
      // the registry secret: every serve host holds it, so only a serve host trusts it (for a daemon's registry message)
      if (this.clusterKey !== undefined || !REGISTRY_KINDS.has(k) || !verify(this.registryKey, macAt, macLen))
        return bad;
      return this.fresh(ts, new OpenedFrame('daemon', node, k, buf, at));
    }
    if (!keyId.startsWith('m.')) return bad;
    const scope = keyId.slice(2);
    if (this.module !== undefined && scope !== this.module)
      return { ok: false, code: 'E_UNAUTHENTICATED', reason: `for module ${scope}`, quiet: true };
    const key = this.serveKeyFor(scope);
    if (key === undefined || !verify(key, macAt, macLen)) return bad;
    // a serve host cannot tell daemons from other hosts of its module: both sign with its key
    return this.fresh(
      ts,
      this.clusterKey === undefined
        ? new OpenedFrame('daemon', node, k, buf, at)
        : new OpenedFrame('serve', node, k, buf, at, scope),
    );
  }

  /** The opened frame, or `stale frame` when its timestamp is too far from this clock. */
  private fresh(ts: string, frame: OpenedFrame): WireCheck {
    if (Math.abs(this.now() - Number(ts)) <= this.maxSkew) return frame;
    return {
      ok: false,
      code: 'E_UNAUTHENTICATED',
      reason: 'stale frame',
      claimed_node: frame.node,
    };
  }
}

function unsigned(reason: string): WireCheck {
  return { ok: false, code: 'E_UNAUTHENTICATED', reason };
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

/** Writes `-` (no signature) at `out[at]`; returns the index after it. */
function dash(out: Uint8Array, at: number): number {
  out[at] = DASH;
  return at + 1;
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
