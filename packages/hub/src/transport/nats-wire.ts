import { createHmac, timingSafeEqual } from 'node:crypto';

import { headers as natsHeaders, type Msg, type MsgHdrs } from 'nats';

/**
 * The wire format of the hub over NATS (subjects, headers, envelope authentication).
 *
 * Subjects of a cluster `c`: module calls `finger.c.call.<module>` (queue group per module),
 * cancels `finger.c.cancel`, events `finger.c.events.<type>`, registry `finger.c.registry.<hb|hello|bye>`.
 * The body is the JSON of the envelope (or event batch, heartbeat); headers carry the message
 * kind, the sending node, its role and the signatures.
 *
 * Authentication: messages carry `F-SSig` = HMAC-SHA256(serve key, kind \n node \n body) and, from
 * daemons, `F-Sig` = the same HMAC under the cluster key (daemons leave `F-SSig` out where no serve
 * process has to verify: replies, progress and lease messages, which only daemons receive). The serve key is
 * derived from the cluster key ({@link serveKeyOf}); `module serve` processes hold only the serve
 * key, so they can never produce a daemon signature: a daemon treats a message that only carries
 * a valid serve signature as coming from a serve process (which may answer calls and announce its
 * module, never originate a request). Anything else is dropped.
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

/** Result of checking one message. */
export type WireCheck = { ok: true; role: WireRole; node: string; kind: WireKind } | { ok: false; reason: string };

const EMPTY = new Uint8Array(0);

/** Signs outgoing and verifies incoming messages of one process (see the file comment). */
export class WireAuth {
  readonly role: WireRole;
  readonly node: string;
  private readonly clusterKey: Buffer | undefined;
  private readonly serveKey: Buffer;

  constructor(o: WireAuthOptions) {
    this.role = o.role;
    this.node = o.node;
    if (o.role === 'daemon') {
      if (!o.cluster_key) throw new Error('a daemon needs the cluster key (nats.cluster_key)');
      this.clusterKey = Buffer.from(o.cluster_key, 'utf8');
      this.serveKey = Buffer.from(serveKeyOf(this.clusterKey), 'utf8');
    } else {
      if (!o.serve_key) throw new Error('a serve process needs the serve key');
      this.serveKey = Buffer.from(o.serve_key, 'utf8');
    }
  }

  /**
   * Headers for a message of `kind` with `body`, plus `extra` metadata headers. A daemon may
   * leave out the serve signature (`forServe: false`) when no serve process needs to verify the
   * message (replies, progress and lease messages go to daemons only): one HMAC less.
   */
  headers(kind: WireKind, body: Uint8Array, extra?: Record<string, string>, forServe = true): MsgHdrs {
    const h = natsHeaders();
    h.set('F-Kind', kind);
    h.set('F-Node', this.node);
    if (forServe || this.clusterKey === undefined) h.set('F-SSig', mac(this.serveKey, kind, this.node, body));
    if (this.clusterKey !== undefined) h.set('F-Sig', mac(this.clusterKey, kind, this.node, body));
    if (extra) for (const k in extra) h.set(k, extra[k]!);
    return h;
  }

  /**
   * Verifies a received message. A daemon reports `role: 'daemon'` only for a valid cluster-key
   * signature; a valid serve signature alone means `serve`, whatever `F-Role` claims.
   */
  verify(msg: Msg): WireCheck {
    const h = msg.headers;
    if (h === undefined) return { ok: false, reason: 'unsigned message (no headers)' };
    const kind = h.get('F-Kind') as WireKind;
    const node = h.get('F-Node');
    if (!kind || !node) return { ok: false, reason: 'missing F-Kind or F-Node' };
    const body = msg.data ?? EMPTY;
    if (this.clusterKey !== undefined) {
      const sig = h.get('F-Sig');
      if (sig && same(sig, mac(this.clusterKey, kind, node, body))) return { ok: true, role: 'daemon', node, kind };
    }
    const ssig = h.get('F-SSig');
    if (!ssig) return { ok: false, reason: 'unsigned message' };
    if (!same(ssig, mac(this.serveKey, kind, node, body))) return { ok: false, reason: 'bad signature' };
    // a serve process cannot tell daemons from serve processes: both sign with the serve key
    return { ok: true, role: this.clusterKey === undefined ? 'daemon' : 'serve', node, kind };
  }
}

function mac(key: Buffer, kind: string, node: string, body: Uint8Array): string {
  return createHmac('sha256', key).update(`${kind}\n${node}\n`).update(body).digest('base64url');
}

function same(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  return timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** UTF-8 bytes of `value`'s JSON. */
export function encodeJson(value: unknown): Uint8Array {
  return encoder.encode(JSON.stringify(value));
}

/** Parses a message body as JSON; undefined when it is not JSON. */
export function decodeJson(data: Uint8Array): unknown {
  try {
    return JSON.parse(decoder.decode(data));
  } catch {
    return undefined;
  }
}
