import { Events, type Msg, type NatsConnection, type Subscription } from 'nats';

import type { ModuleManifest } from '@finger/protocol';
import { jsonLimitError, manifestIssues, MAX_WIRE_JSON_DEPTH } from '@finger/protocol';

import { type Clock, systemClock } from '../clock.js';
import { type Logger, silentLogger } from '../logger.js';
import type { DroppedMessage } from '../transport/nats.js';
import { daemonNodeClaimed, frameRefused } from '../transport/nats-options.js';
import { subscribeChecked } from '../transport/nats-subscribe.js';
import {
  type ClusterSubjects,
  clusterSubjects,
  decodeJson,
  type OpenedFrame,
  type WireAuth,
} from '../transport/nats-wire.js';
import { fitHeartbeat, type LeftOut } from './heartbeat-fit.js';

/** Most modules one daemon's heartbeat may announce (a serve host: one). */
export const MAX_MODULES_PER_NODE = 256;
/** Most remote modules a node keeps track of. */
export const MAX_REMOTE_MODULES = 4096;
/** Most nodes one remote module may have (node ids are not bound to keys: a serve host may claim any). */
export const MAX_NODES_PER_MODULE = 256;
/**
 * Most characters of manifest JSON the registry holds over all announcements (each node's copy
 * is kept): a serve host claiming node after node, each announcing a manifest near the server's
 * `max_payload`, would otherwise grow every daemon's memory without end.
 */
export const MAX_ANNOUNCED_CHARS = 64 * 1024 * 1024;

/** One node hosting a remote module. */
export interface ModuleLocation {
  node: string;
  role: 'daemon' | 'serve';
  /** Epoch ms of its last heartbeat. */
  last_seen: number;
  healthy: boolean;
  /** The node's own heartbeat period, when it announces one: its silence is judged by it too. */
  hb_ms?: number;
}

/** A module some other node of the cluster serves. */
export interface RemoteModule {
  /** The announced manifest, runtime replaced by `{type: "nats"}`. */
  manifest: ModuleManifest;
  /** Who announced that manifest: a daemon, or only `module serve` hosts (whose claims are not trusted). */
  announced_by: 'daemon' | 'serve';
  nodes: Map<string, ModuleLocation>;
}

/**
 * What the registry tells its owner. `changed`: the module's manifest is now another — the one
 * the node that announced it last began announcing (a new version rolled out, or rolled back
 * when that node left).
 */
export type ClusterChange =
  | { type: 'up'; module: RemoteModule }
  | { type: 'changed'; module: RemoteModule }
  | { type: 'gone'; module_id: string; manifest: ModuleManifest };

/** One node's announcement of a module: its manifest's JSON, and since when it announces that. */
interface Announcement {
  json: string;
  manifest: ModuleManifest;
  role: 'daemon' | 'serve';
  since: number;
}

/** Options of {@link ClusterRegistry}. */
export interface ClusterRegistryOptions {
  connection: NatsConnection;
  cluster: string;
  auth: WireAuth;
  /** Manifests of the modules this node serves on NATS (asked at every heartbeat). */
  local: () => ModuleManifest[];
  onChange?: (change: ClusterChange) => void;
  onDropped?: (info: DroppedMessage) => void;
  /** A registry message of another node verified: this node's key is the cluster's. */
  onPeer?: () => void;
  clock?: Clock;
  logger?: Logger;
  /** Heartbeat period (ms). Default 2000. */
  heartbeat_ms?: number;
  /** A node silent this long is unhealthy for its modules (ms). Default 3 × heartbeat. */
  unhealthy_after_ms?: number;
  /** A node silent this long is forgotten; a module left with no node is gone (ms). Default 10 × heartbeat. */
  forget_after_ms?: number;
  /** Most characters of manifest JSON held over all announcements. Default {@link MAX_ANNOUNCED_CHARS}. */
  max_announced_chars?: number;
}

interface Heartbeat {
  node: string;
  /** The sender's heartbeat period (ms). */
  hb_ms?: number;
  /** See {@link RegistryMessage.seq}. */
  seq?: number;
  modules: ModuleManifest[];
}

/** What every registry message (hello, hb, bye) may carry besides its own fields. */
interface RegistryMessage {
  /**
   * The sender's clock in ms, made strictly increasing per node: a message whose `seq` is not
   * above the last one heard from its node (a capture published again) is dropped, and so is one
   * more than {@link MAX_REGISTRY_SKEW_MS} away from this node's clock (a dead node's capture).
   * Absent from older peers: then neither is checked.
   */
  seq?: unknown;
}

/** How far a registry message's `seq` may be from this node's clock (keep the clocks in step, e.g. NTP). */
export const MAX_REGISTRY_SKEW_MS = 120_000;
/** Most nodes whose last `seq` is remembered (the oldest go first). */
const MAX_SEQ_NODES = 65_536;

/** Heartbeat periods a node may announce (ms); outside them its announcement is not believed. */
const MIN_HB_MS = 100;
const MAX_HB_MS = 600_000;

/** The longest drain a bye may name (10 min): a node that says more is believed for this long. */
const MAX_BYE_DRAIN_MS = 600_000;

/**
 * The cluster's module directory on plain NATS subjects (`finger.<cluster>.registry.hb|hello|bye`):
 * every node publishes a heartbeat listing the manifests it serves every `heartbeat_ms`, answers
 * a `hello` (a node that just joined) with an immediate heartbeat, and says `bye` on close. A node
 * silent for `unhealthy_after_ms` makes its modules unhealthy there; after `forget_after_ms` it is
 * dropped, and a module with no node left is `gone`. Soft state rebuilt within one heartbeat, so
 * no JetStream is needed. Heartbeats failing authentication or manifest validation are dropped.
 * Nodes of one module may announce different manifests (a version rolled out node by node): the
 * module's is that of the node that began announcing its own last, a daemon's before any serve
 * host's (`changed` when that moves).
 * Runtime details (commands, env, entry paths) are never announced: manifests go out with
 * runtime `{type: "nats"}`.
 */
export class ClusterRegistry {
  private readonly o: ClusterRegistryOptions;
  private readonly subjects: ClusterSubjects;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly hbMs: number;
  private readonly unhealthyMs: number;
  /** Module id → until when a node of it that said bye may still answer the calls it took. */
  private readonly leaving = new Map<string, number>();
  private readonly forgetMs: number;
  private readonly modules = new Map<string, RemoteModule>();
  /** Per remote module, what each of its nodes announces (a manifest checked once per change). */
  private readonly announced = new Map<string, Map<string, Announcement>>();
  /**
   * Nodes heard signing with the cluster key, with when they were last heard. Node ids are not
   * bound to a key: a serve host (whose key every serve host shares) naming one of them is not
   * believed, or its `bye` or empty heartbeat would make every daemon forget that daemon's modules.
   */
  private readonly daemons = new Map<string, number>();
  private sub: Subscription | undefined;
  private timer: unknown;
  private closed = false;
  /** False while disconnected: heartbeats are skipped rather than buffered by nats.js. */
  private up = true;
  /** The `seq` this node last sent (strictly increasing, see RegistryMessage). */
  private seq = 0;
  /** The last `seq` heard from each node, oldest first. */
  private readonly heardSeq = new Map<string, number>();
  /** Characters of manifest JSON held in {@link announced} (bounded by MAX_ANNOUNCED_CHARS). */
  private announcedChars = 0;
  /** Ids of the modules the last heartbeat left out (heartbeat-fit.ts), comma-joined. */
  private leftOut = '';
  /** Those modules, with the bytes of their manifests. */
  private leftOutModules: LeftOut[] = [];

  constructor(o: ClusterRegistryOptions) {
    this.o = o;
    this.subjects = clusterSubjects(o.cluster);
    this.clock = o.clock ?? systemClock;
    this.logger = o.logger ?? silentLogger;
    this.hbMs = o.heartbeat_ms ?? 2000;
    this.unhealthyMs = o.unhealthy_after_ms ?? 3 * this.hbMs;
    this.forgetMs = o.forget_after_ms ?? 10 * this.hbMs;
  }

  /** Subscribes, says hello and starts heartbeating. */
  async start(): Promise<void> {
    const checked = subscribeChecked(this.o.connection, this.subjects.registryAll, (msg) => this.onMessage(msg), {
      logger: this.logger,
    });
    this.sub = checked.sub;
    await this.o.connection.flush();
    const refused = checked.refused();
    if (refused !== undefined) throw refused; // a node that cannot hear the registry cannot take part
    void this.watchStatus();
    this.publish('hello', { node: this.o.auth.node });
    this.heartbeat();
    this.timer = this.clock.setInterval(() => this.tick(), this.hbMs);
  }

  /**
   * Publishes a heartbeat now (after a local module changed). Manifests that would take it past
   * the server's `max_payload` are left out, largest first, and named in an error log (once per
   * change of what is left out).
   */
  heartbeat(): void {
    const modules = this.o.local().map(announced);
    const max = this.o.connection.info?.max_payload;
    const seq = this.nextSeq();
    if (max === undefined) {
      this.publish('hb', { node: this.o.auth.node, hb_ms: this.hbMs, seq, modules } satisfies Heartbeat);
      return;
    }
    const fit = fitHeartbeat(this.o.auth.node, modules, max - this.o.auth.lineLength('hb'), this.hbMs, seq);
    const key = fit.leftOut.map((m) => m.id).join(',');
    this.leftOutModules = fit.leftOut;
    if (key !== this.leftOut) {
      this.leftOut = key;
      if (fit.leftOut.length > 0)
        this.logger.error(
          { left_out: fit.leftOut, max_payload: max },
          "modules not announced: their manifests do not fit in a heartbeat under the NATS server's max_payload (raise max_payload or serve them from another node)",
        );
    }
    this.publishJson('hb', fit.json);
  }

  /**
   * The local modules the last heartbeat could not announce (their manifests do not fit under
   * the server's `max_payload`), largest first; empty when every one was announced.
   */
  notAnnounced(): readonly LeftOut[] {
    return this.leftOutModules;
  }

  /** Which of `modules` a heartbeat of this node could not carry under the server's `max_payload` (largest first). */
  wouldLeaveOut(modules: readonly ModuleManifest[]): LeftOut[] {
    const max = this.o.connection.info?.max_payload;
    if (max === undefined) return [];
    const seq = this.clock.now(); // as long as the sequence numbers heartbeats carry
    return fitHeartbeat(this.o.auth.node, modules.map(announced), max - this.o.auth.lineLength('hb'), this.hbMs, seq)
      .leftOut;
  }

  /** Whether `node` was heard signing with the cluster key lately (a daemon; see {@link daemons}). */
  isDaemonNode(node: string): boolean {
    return this.daemons.has(node);
  }

  /** Remote modules by id (a snapshot). */
  list(): RemoteModule[] {
    return [...this.modules.values()];
  }

  /** The remote module `id`, if some node announces it. */
  get(id: string): RemoteModule | undefined {
    return this.modules.get(id);
  }

  /** Where a remote module runs, with per-node health (empty when unknown). */
  locations(module_id: string): ModuleLocation[] {
    const m = this.modules.get(module_id);
    if (m === undefined) return [];
    const now = this.clock.now();
    return [...m.nodes.values()].map((n) => ({ ...n, healthy: now - n.last_seen < this.silentAfter(n) }));
  }

  /**
   * Healthy when at least one node announced the module within `unhealthy_after_ms`. `draining`
   * when none did but a node of it said bye lately and may still answer the calls it took (for
   * the drain time its bye named): its calls in flight are not given up yet.
   */
  health(module_id: string): { ok: boolean; detail?: string; draining?: boolean } {
    const locs = this.locations(module_id);
    if (locs.some((l) => l.healthy)) return { ok: true };
    const draining = (this.leaving.get(module_id) ?? 0) > this.clock.now();
    const detail =
      locs.length === 0
        ? 'no node announces this module'
        : `no heartbeat from ${locs.map((l) => `${l.node} for ${this.clock.now() - l.last_seen} ms`).join(', ')}`;
    return draining
      ? { ok: false, detail: `${detail}; a node that left still drains its calls`, draining }
      : { ok: false, detail };
  }

  /** How long a node may be silent before its modules turn unhealthy: ours, or three of its own heartbeats if longer. */
  private silentAfter(loc: ModuleLocation): number {
    return loc.hb_ms === undefined ? this.unhealthyMs : Math.max(this.unhealthyMs, 3 * loc.hb_ms);
  }

  /** Says bye (naming how long this node still answers the calls it took) and stops; idempotent. */
  async close(drain_ms = 5000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== undefined) this.clock.clearInterval(this.timer);
    if (!this.o.connection.isClosed()) {
      this.publish('bye', { node: this.o.auth.node, drain_ms });
      await this.o.connection.flush().catch(() => undefined);
      this.sub?.unsubscribe();
    }
  }

  private async watchStatus(): Promise<void> {
    for await (const s of this.o.connection.status()) {
      if (s.type === Events.Disconnect) this.up = false;
      else if (s.type === Events.Reconnect) {
        this.up = true;
        this.publish('hello', { node: this.o.auth.node }); // catch up at once
        this.heartbeat();
      }
    }
  }

  private tick(): void {
    this.heartbeat();
    const now = this.clock.now();
    for (const [id, until] of this.leaving) if (until <= now) this.leaving.delete(id);
    for (const [node, seen] of this.daemons) if (now - seen >= this.forgetMs) this.daemons.delete(node);
    for (const [id, m] of this.modules) {
      for (const [node, loc] of m.nodes)
        if (now - loc.last_seen >= Math.max(this.forgetMs, 10 * (loc.hb_ms ?? 0))) this.leave(id, m, node);
    }
  }

  private gone(id: string, m: RemoteModule): void {
    this.modules.delete(id);
    for (const a of this.announced.get(id)?.values() ?? []) this.announcedChars -= a.json.length;
    this.announced.delete(id);
    this.o.onChange?.({ type: 'gone', module_id: id, manifest: m.manifest });
  }

  /** A hello or bye: the message with the next {@link RegistryMessage.seq}. */
  private publish(kind: 'hb' | 'hello' | 'bye', data: Record<string, unknown>): void {
    this.publishJson(kind, JSON.stringify('seq' in data ? data : { ...data, seq: this.nextSeq() }));
  }

  /** This node's clock, made strictly increasing. */
  private nextSeq(): number {
    this.seq = Math.max(this.seq + 1, this.clock.now());
    return this.seq;
  }

  /**
   * Whether a message of `node` with `body` is new: its `seq` above the last heard from the node
   * and near this node's clock (see {@link RegistryMessage.seq}); reports it when it is not.
   */
  private fresh(kind: string, body: RegistryMessage | undefined, check: OpenedFrame, subject: string): boolean {
    const seq = body?.seq;
    if (typeof seq !== 'number') return true; // an older peer
    const node = check.node;
    // a serve host's sequence is its module's and its node's: a host of another module naming the
    // same node cannot push it past what the real host sends next
    const key = check.scope === undefined ? node : `${check.scope} ${node}`;
    const last = this.heardSeq.get(key);
    const stale = Math.abs(this.clock.now() - seq) > MAX_REGISTRY_SKEW_MS;
    if (stale || (last !== undefined && seq <= last)) {
      this.o.onDropped?.({
        reason: stale ? `stale registry ${kind} (clocks more than 2 min apart?)` : `replayed registry ${kind}`,
        subject,
        node,
      });
      return false;
    }
    this.heardSeq.delete(key);
    this.heardSeq.set(key, seq);
    if (this.heardSeq.size > MAX_SEQ_NODES) this.heardSeq.delete(this.heardSeq.keys().next().value!);
    return true;
  }

  private publishJson(kind: 'hb' | 'hello' | 'bye', json: string): void {
    if (this.closed && kind !== 'bye') return;
    if (!this.up || this.o.connection.isClosed()) return;
    try {
      const subject = this.subjects.registry(kind);
      this.o.connection.publish(subject, this.o.auth.sealJson(subject, kind, json));
    } catch (e) {
      this.logger.warn({ error: (e as Error).message }, 'registry message not sent');
    }
  }

  private onMessage(msg: Msg): void {
    const check = this.o.auth.open(msg.data, msg.subject);
    if (!check.ok) {
      if (check.quiet) return; // a serve host hears other modules' hosts: not for it
      this.o.onDropped?.(frameRefused(check, msg.subject));
      return;
    }
    if (check.node === this.o.auth.node) return;
    this.o.onPeer?.();
    const body = decodeJson(check.text()) as (RegistryMessage & Record<string, unknown>) | undefined;
    // a manifest's schemas are compiled and hashed by recursive code: nothing past the nesting limit gets there
    const tooDeep = jsonLimitError(body, 'registry message', { maxDepth: MAX_WIRE_JSON_DEPTH });
    if (tooDeep) {
      this.o.onDropped?.({ reason: tooDeep.message, subject: msg.subject, node: check.node });
      return;
    }
    if (!this.fresh(check.kind, body, check, msg.subject)) return;
    if (check.role === 'daemon') {
      if (check.kind === 'bye') this.daemons.delete(check.node);
      else this.daemons.set(check.node, this.clock.now());
    } else if (this.daemons.has(check.node)) {
      this.o.onDropped?.(daemonNodeClaimed(msg.subject, check.node));
      return;
    }
    if (check.kind === 'hello') {
      this.heartbeat();
      return;
    }
    if (check.kind === 'bye') {
      // the node still answers the calls it took for the drain time it names (bounded; 30 s when it names none)
      const named = body?.drain_ms;
      const drain = typeof named === 'number' && named >= 0 ? Math.min(named, MAX_BYE_DRAIN_MS) : 30_000;
      const until = this.clock.now() + drain + 1000;
      // a serve host leaves only the module its key signs for
      for (const [id, m] of this.modules)
        if (m.nodes.has(check.node) && (check.scope === undefined || id === check.scope)) {
          this.leaving.set(id, Math.max(this.leaving.get(id) ?? 0, until));
          this.leave(id, m, check.node);
        }
      return;
    }
    if (check.kind !== 'hb') return;
    const hb = body as Heartbeat | undefined;
    if (hb === undefined || !Array.isArray(hb.modules) || hb.node !== check.node) {
      this.o.onDropped?.({ reason: 'invalid heartbeat', subject: msg.subject, node: check.node });
      return;
    }
    const now = this.clock.now();
    const hbMs = typeof hb.hb_ms === 'number' && hb.hb_ms >= MIN_HB_MS && hb.hb_ms <= MAX_HB_MS ? hb.hb_ms : undefined;
    const listed = new Set<string>();
    // bounded by what a peer may announce: a serve host hosts one module, a daemon at most
    // MAX_MODULES_PER_NODE, and the cluster at most MAX_REMOTE_MODULES (each is a registration on
    // every daemon)
    const limit = check.role === 'serve' ? 1 : MAX_MODULES_PER_NODE;
    if (hb.modules.length > limit)
      this.o.onDropped?.({
        reason:
          check.role === 'serve' ? 'a serve host announces one module' : `more than ${limit} modules in a heartbeat`,
        subject: msg.subject,
        node: check.node,
      });
    for (const manifest of hb.modules.slice(0, limit)) {
      const id = (manifest as { id?: unknown } | null)?.id;
      if (check.scope !== undefined && id !== check.scope) {
        // a serve host's key signs for one module: it cannot announce another
        this.o.onDropped?.({
          reason: `a serve host of ${check.scope} announces another module`,
          subject: msg.subject,
          node: check.node,
        });
        continue;
      }
      const json = JSON.stringify(manifest);
      const before = typeof id === 'string' ? this.announced.get(id)?.get(check.node) : undefined;
      // checked when a node first announces it, or announces another: not at every heartbeat
      if (before?.json !== json && (manifestIssues(manifest).length > 0 || manifest.runtime?.type !== 'nats')) {
        this.o.onDropped?.({ reason: 'invalid manifest in heartbeat', subject: msg.subject, node: check.node });
        continue;
      }
      let m = this.modules.get(manifest.id);
      if (m !== undefined && !m.nodes.has(check.node) && m.nodes.size >= MAX_NODES_PER_MODULE) {
        this.o.onDropped?.({ reason: 'node limit of a module reached', subject: msg.subject, node: check.node });
        continue;
      }
      const grows = before?.json !== json ? json.length - (before?.json.length ?? 0) : 0;
      if (grows > 0 && this.announcedChars + grows > (this.o.max_announced_chars ?? MAX_ANNOUNCED_CHARS)) {
        this.o.onDropped?.({
          reason: 'announced manifests over the size limit',
          subject: msg.subject,
          node: check.node,
        });
        continue;
      }
      const isNew = m === undefined;
      if (m === undefined) {
        if (this.modules.size >= MAX_REMOTE_MODULES) {
          this.o.onDropped?.({ reason: 'remote module limit reached', subject: msg.subject, node: check.node });
          continue;
        }
        m = { manifest, announced_by: check.role, nodes: new Map() };
        this.modules.set(manifest.id, m);
        this.announced.set(manifest.id, new Map());
      }
      listed.add(manifest.id);
      const loc: ModuleLocation = { node: check.node, role: check.role, last_seen: now, healthy: true };
      if (hbMs !== undefined) loc.hb_ms = hbMs;
      m.nodes.set(check.node, loc);
      if (before?.json !== json) {
        this.announced.get(manifest.id)!.set(check.node, { json, manifest, role: check.role, since: now });
        this.announcedChars += grows;
      }
      if (isNew) this.o.onChange?.({ type: 'up', module: m });
      else if (before?.json !== json) this.adopt(manifest.id, m);
    }
    // modules this node no longer serves
    for (const [id, m] of this.modules)
      if (!listed.has(id) && m.nodes.has(check.node) && (check.scope === undefined || id === check.scope))
        this.leave(id, m, check.node);
  }

  /** `node` no longer serves module `id`: the module is gone with its last node, or may go back to an older manifest. */
  private leave(id: string, m: RemoteModule, node: string): void {
    m.nodes.delete(node);
    const a = this.announced.get(id);
    this.announcedChars -= a?.get(node)?.json.length ?? 0;
    a?.delete(node);
    if (m.nodes.size === 0) this.gone(id, m);
    else this.adopt(id, m);
  }

  /** Makes the manifest of the node that began announcing its own last the module's, telling the owner when that is another. */
  private adopt(id: string, m: RemoteModule): void {
    let best: Announcement | undefined;
    for (const a of this.announced.get(id)?.values() ?? []) if (best === undefined || preferred(a, best)) best = a;
    if (
      best === undefined ||
      (best.role === m.announced_by && (best.manifest === m.manifest || best.json === JSON.stringify(m.manifest)))
    )
      return;
    m.manifest = best.manifest;
    m.announced_by = best.role;
    this.o.onChange?.({ type: 'changed', module: m });
  }
}

/**
 * Whether announcement `a` is to be used over `b`: a daemon's over a serve host's (daemons hold
 * the cluster key; a serve host's claims about its tools are not trusted), then the one its node
 * began announcing later.
 */
function preferred(a: Announcement, b: Announcement): boolean {
  if (a.role !== b.role) return a.role === 'daemon';
  return a.since >= b.since;
}

/** A manifest as announced: runtime details replaced by `{type: "nats"}`. */
export function announced(m: ModuleManifest): ModuleManifest {
  return { ...m, runtime: { type: 'nats' } };
}
