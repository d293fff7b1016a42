import type { NatsConnection } from 'nats';

import type { Envelope, ModuleManifest } from '@finger/protocol';
import { toErrorInfo } from '@finger/protocol';

import { type Clock, systemClock } from '../clock.js';
import { type Logger, silentLogger } from '../logger.js';
import type { MessageHub } from '../message-hub.js';
import { NatsRuntime } from '../runtime/nats.js';
import type { ModuleRuntime, RuntimeOptions } from '../runtime/runtime.js';
import { ChannelLink } from '../transport/channel-link.js';
import { moduleOf } from '../transport/in-process.js';
import { type DroppedMessage, NatsTransport } from '../transport/nats.js';
import type { WireAuth } from '../transport/nats-wire.js';
import type { ServerChannel, TransportHandler, Unserve } from '../transport/transport.js';
import { announced, type ClusterChange, ClusterRegistry, type ModuleLocation } from './cluster-registry.js';
import { NatsEventBridge, type NatsEventBridgeOptions, type PublishingEventBus } from './event-bridge.js';
import type { LeftOut } from './heartbeat-fit.js';
import { distrustServeAnnounced } from './serve-manifest.js';

/** Options of {@link ClusterNode}. */
export interface ClusterNodeOptions {
  hub: MessageHub;
  connection: NatsConnection;
  cluster: string;
  auth: WireAuth;
  clock?: Clock;
  logger?: Logger;
  /** Daemons import the cluster's modules into their registry; `module serve` processes do not. */
  importRemote: boolean;
  /** Bridge the hub's events to the cluster (the hub's bus must be a LocalEventBus). */
  bridgeEvents: boolean;
  heartbeat_ms?: number;
  unhealthy_after_ms?: number;
  onDropped?: (info: DroppedMessage) => void;
  /** Events of these types from other daemons, after their delivery here (see NatsEventBridgeOptions). */
  onDaemonEvent?: NatsEventBridgeOptions['onDaemonEvent'];
  /**
   * A serve host that has verified no other node's message this long warns that it is not serving
   * yet (default 10 s; see {@link ClusterNode.start}).
   */
  key_check_warn_ms?: number;
}

/** Where a module runs, as `module list` shows it. */
export interface ModulePlacement {
  location: 'local' | 'remote';
  nodes: ModuleLocation[];
}

/**
 * One hub's membership of a cluster: serves every local module of the hub on NATS (the serving
 * side only executes — the calling daemon already ran its interceptors), announces them in the
 * cluster registry once their subscriptions are flushed, imports the other nodes' modules as
 * `{type: "nats"}` modules (so local grants and firewall run before any remote call), marks them
 * unhealthy when their heartbeats stop, and bridges events. The hub must be built with
 * {@link ClusterNode.createRuntime}-aware runtime creation (see `runtimeSwitch`).
 */
export class ClusterNode {
  readonly transport: NatsTransport;
  readonly registry: ClusterRegistry;
  readonly bridge: NatsEventBridge | undefined;
  private readonly o: ClusterNodeOptions;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly unserves = new Map<string, Unserve>();
  /** Local modules whose serving waits (for {@link keyChecked}) or is being set up. */
  private readonly starting = new Set<string>();
  /**
   * Resolved once a message of another node verified under this node's key. A node joins its
   * modules' queue groups only then: a node whose key is not the cluster's (a serve key from
   * another cluster key, a daemon or serve host missed when the cluster key changed) would take
   * its share of the calls and answer none. A node that calls this one says hello first, and the
   * answer to a hello is a heartbeat, so the check costs a joining node one round trip.
   */
  private readonly keyChecked: Promise<void>;
  private keyCheckedNow: () => void = () => undefined;
  private keyCheckWarning: unknown;
  private stopListening: (() => void) | undefined;
  private closed = false;
  /** The cluster changes being applied, one after the other. */
  private changes: Promise<void> = Promise.resolve();
  /** The newest change of each module not applied yet (at most one per module: the queue is bounded). */
  private readonly waiting = new Map<string, ClusterChange>();

  constructor(o: ClusterNodeOptions) {
    this.o = o;
    this.logger = o.logger ?? silentLogger;
    const clock = o.clock ?? systemClock;
    this.clock = clock;
    this.keyChecked = new Promise<void>((r) => (this.keyCheckedNow = r));
    const common = { connection: o.connection, cluster: o.cluster, auth: o.auth, logger: this.logger };
    this.transport = new NatsTransport({
      ...common,
      clock,
      // Requests always carry the serve signature too: a serve replica that joined the queue group a
      // moment ago may take a request before this node has heard its first heartbeat.
      ...(o.onDropped ? { onDropped: o.onDropped } : {}),
    });
    this.registry = new ClusterRegistry({
      ...common,
      clock,
      local: () => this.localManifests(),
      onChange: (c) => this.apply(c),
      onPeer: () => this.keyCheckedNow(),
      ...(o.onDropped ? { onDropped: o.onDropped } : {}),
      ...(o.heartbeat_ms !== undefined ? { heartbeat_ms: o.heartbeat_ms } : {}),
      ...(o.unhealthy_after_ms !== undefined ? { unhealthy_after_ms: o.unhealthy_after_ms } : {}),
    });
    this.bridge = o.bridgeEvents
      ? new NatsEventBridge({
          ...common,
          bus: o.hub.events as PublishingEventBus,
          clock,
          // a `module serve` process only sends its module's events (see NatsEventBridgeOptions.receive)
          receive: o.auth.role !== 'serve',
          ...(o.onDropped ? { onDropped: o.onDropped } : {}),
          ...(o.onDaemonEvent ? { onDaemonEvent: o.onDaemonEvent } : {}),
          isDaemonNode: (node) => this.registry.isDaemonNode(node),
        })
      : undefined;
  }

  /** A runtime for a `{type: "nats"}` manifest, bound to this node's transport and registry. */
  createRuntime(opts: RuntimeOptions): ModuleRuntime {
    const id = opts.manifest.id;
    return new NatsRuntime({ ...opts, transport: this.transport, remoteHealth: () => this.registry.health(id) });
  }

  /** Serves the local modules, starts the registry and the event bridge. */
  async start(): Promise<void> {
    /** Local modules being unregistered (a remote one of the id may be imported once they are gone). */
    const leaving = new Set<string>();
    const stopServing = this.o.hub.registry.onChange((change) => {
      if (change.module.runtime === 'nats') return;
      if (change.type === 'registered') void this.serveLocal(change.module.id).then(() => this.registry.heartbeat());
      else {
        leaving.add(change.module.id);
        void this.unserveLocal(change.module.id).then(() => this.registry.heartbeat());
      }
    });
    // a module of an id some node still announces is gone from the hub: a local one that won over
    // the remote one (unregistered, drained), or the import itself (`module unregister` of a
    // remote module): the remote one is imported (again) — no node would announce it anew, so it
    // would otherwise stay missing here while its nodes serve it, until a restart
    const stopImporting = this.o.hub.events.subscribe({ types: ['MODULE_UNREGISTERED'] }, (e) => {
      const id = e.target;
      const reimport = () => {
        const remote = this.registry.get(id);
        if (!this.closed && remote !== undefined && this.o.hub.registry.get(id) === undefined)
          this.apply({ type: 'up', module: remote });
      };
      if (leaving.delete(id)) reimport();
      // an import gone: after this turn, as a local module of the id taking its place (the
      // registry unregisters the import first) has reserved the id by then
      else if (!this.closed) setImmediate(reimport);
    });
    this.stopListening = () => {
      stopServing();
      stopImporting();
    };
    const local = this.o.hub.registry.list().filter((m) => m.runtime !== 'nats');
    if (this.o.auth.role === 'serve') {
      // a `module serve` process exists to serve its module: NATS refusing it fails its start
      // (checked now); it joins the module's queue group once its key has proven the cluster's
      for (const m of local) await this.transport.checkServe(m.id);
      await this.bridge?.start();
      await this.registry.start();
      this.serveAll(local.map((m) => m.id));
      this.warnUntilKeyChecked(local.map((m) => m.id));
      return;
    }
    // a daemon logs a module it cannot serve and keeps its other modules and the cluster; it
    // serves them once its key has proven the cluster's (a daemon alone in its cluster is called
    // by nobody over NATS: the first node to join says hello, and its answer checks the key)
    await this.bridge?.start();
    await this.registry.start();
    this.serveAll(local.map((m) => m.id));
  }

  /** Serves local modules `ids` (each once the key check passed), then announces them in one heartbeat. */
  private serveAll(ids: string[]): void {
    void Promise.all(ids.map((id) => this.serveLocal(id))).then(() => this.registry.heartbeat());
  }

  /**
   * Local modules a heartbeat of this node could not carry under the NATS server's
   * `max_payload` (largest first): checked before a serve host starts serving.
   */
  unannounceable(): readonly LeftOut[] {
    const ids = this.o.hub.registry
      .list()
      .filter((m) => m.runtime !== 'nats')
      .map((m) => m.id);
    return this.registry.wouldLeaveOut(this.manifestsOf(ids));
  }

  /** A serve host still waiting for its key check after `key_check_warn_ms` says so, once. */
  private warnUntilKeyChecked(modules: string[]): void {
    let checked = false;
    void this.keyChecked.then(() => {
      checked = true;
      if (this.keyCheckWarning !== undefined) this.clock.clearTimeout(this.keyCheckWarning);
    });
    this.keyCheckWarning = this.clock.setTimeout(() => {
      this.keyCheckWarning = undefined;
      if (checked || this.closed) return;
      this.logger.warn(
        { modules, cluster: this.o.cluster, waited_ms: this.o.key_check_warn_ms ?? 10_000 },
        `not serving ${modules.join(', ')} yet: no message of another node of cluster ${this.o.cluster} verified under this host's serve key — no daemon of the cluster is running, or the key is not the cluster's (print the module's with \`myfinger module serve-key <module>\` where the cluster key is)`,
      );
    }, this.o.key_check_warn_ms ?? 10_000);
  }

  /** Where module `id` runs: here, or on which nodes. */
  placement(id: string): ModulePlacement {
    const info = this.o.hub.registry.get(id);
    if (info !== undefined && info.runtime !== 'nats') return { location: 'local', nodes: [] };
    return { location: 'remote', nodes: this.registry.locations(id) };
  }

  /**
   * Leaves the cluster: says bye (naming `drain_ms`, so callers keep waiting for this node's
   * calls that long), stops taking calls, lets those it serves finish for `drain_ms` (default
   * the transport's, 5 s) and answers the rest with E_PROVIDER_CLOSED.
   */
  async close(drain_ms = 5000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.keyCheckWarning !== undefined) this.clock.clearTimeout(this.keyCheckWarning);
    this.keyCheckedNow(); // a serving that waits for it gives up (closed)
    this.stopListening?.();
    await this.registry.close(drain_ms);
    await Promise.all([...this.unserves.values()].map((u) => u().catch(() => undefined)));
    this.unserves.clear();
    await this.bridge?.close();
    await this.transport.close(drain_ms);
  }

  private localManifests(): ModuleManifest[] {
    return this.manifestsOf(this.unserves.keys());
  }

  /** The manifests of local modules `ids` as this node announces them. */
  private manifestsOf(ids: Iterable<string>): ModuleManifest[] {
    const out: ModuleManifest[] = [];
    for (const id of ids) {
      const info = this.o.hub.registry.get(id);
      if (info === undefined || info.runtime === 'nats') continue;
      out.push(
        announced({
          id: info.id,
          name: info.name,
          version: info.version,
          kind: info.kind,
          ...(info.description !== undefined ? { description: info.description } : {}),
          runtime: { type: 'nats' },
          tools: info.tools,
          concurrency: info.concurrency,
        }),
      );
    }
    return out;
  }

  private async serveLocal(id: string): Promise<void> {
    if (this.closed || this.unserves.has(id) || this.starting.has(id)) return;
    this.starting.add(id);
    try {
      await this.keyChecked;
      const info = this.o.hub.registry.get(id);
      if (this.closed || info === undefined || info.runtime === 'nats') return; // closed, or gone meanwhile
      this.unserves.set(id, await this.transport.serve(id, this.localHandler(id)));
    } catch (e) {
      this.logger[this.o.auth.role === 'serve' ? 'error' : 'warn'](
        { module: id, error: toErrorInfo(e) },
        'module not served on NATS',
      );
    } finally {
      this.starting.delete(id);
    }
  }

  private async unserveLocal(id: string): Promise<void> {
    const u = this.unserves.get(id);
    this.unserves.delete(id);
    await u?.().catch(() => undefined);
  }

  /**
   * Executes a call from the wire on local module `id` (no interceptors: the calling daemon ran
   * them): a call that names this module goes to the module's own handler with the NATS channel
   * itself; anything else (a target of another module sent on this module's subject, a module
   * being unregistered) takes the hub's in-process transport, which routes by target and answers
   * E_NO_TARGET for a module that is not here. A rejection is answered with its error code.
   */
  private localHandler(id: string): TransportHandler {
    const local = this.o.hub.transport;
    const registry = this.o.hub.registry;
    return (req: Envelope, channel: ServerChannel) => {
      const direct = moduleOf(req.target) === id ? registry.handlerOf(id) : undefined;
      if (direct !== undefined) return direct(req, channel);
      const link = new ChannelLink(channel);
      const p = local.request(req, link);
      channel.onCancel(link);
      return p;
    };
  }

  /**
   * Applies a change of the cluster's modules after those before it (an import may still be
   * registering, or draining, when its module changes or goes). A change of a module whose last
   * one still waits replaces it: a module whose manifest flips faster than it can be imported
   * queues one change, not one per heartbeat.
   */
  private apply(c: ClusterChange): void {
    const id = c.type === 'gone' ? c.module_id : c.module.manifest.id;
    const queued = this.waiting.has(id);
    this.waiting.set(id, c);
    if (queued) return;
    this.changes = this.changes
      .then(() => {
        const latest = this.waiting.get(id)!;
        this.waiting.delete(id);
        return this.onClusterChange(latest);
      })
      .catch((e: unknown) => this.logger.warn({ error: toErrorInfo(e) }, 'cluster change not applied'));
  }

  private async onClusterChange(c: ClusterChange): Promise<void> {
    if (!this.o.importRemote || this.closed) return;
    const reg = this.o.hub.registry;
    if (c.type === 'gone') {
      if (reg.get(c.module_id)?.runtime === 'nats') await reg.unregister(c.module_id).catch(() => undefined);
      return;
    }
    // announced by serve hosts only: their claims about the tools may raise the risk, never lower it
    const m = c.module.announced_by === 'serve' ? distrustServeAnnounced(c.module.manifest) : c.module.manifest;
    const interval = Math.max(100, Math.floor((this.o.unhealthy_after_ms ?? 6000) / 3));
    const imported = { ...m, health: { interval_ms: interval, timeout_ms: interval } };
    const known = reg.get(m.id);
    if (known !== undefined) {
      if (known.runtime !== 'nats') return; // a local module of the same id wins
      // imported already (another version, or a 'gone' a newer change replaced): takes this
      // manifest (its tools, their metadata) in place, with no moment in which the module is missing
      try {
        reg.update(imported);
        return;
      } catch (e) {
        // an invalid manifest, or an import being unregistered: imported anew (or not at all)
        this.logger.debug({ module: m.id, error: toErrorInfo(e) }, 'remote module not updated in place');
      }
      await reg.unregister(m.id).catch(() => undefined);
    }
    try {
      await reg.register(imported, { baseDir: '.' });
    } catch (e) {
      this.logger.warn({ module: m.id, error: toErrorInfo(e) }, 'remote module not imported');
    }
  }
}

/**
 * The `createRuntime` to build a clustered hub with: `{type: "nats"}` manifests get a
 * NatsRuntime of the node bound later with `bind()`, every other type the default factory.
 */
export function runtimeSwitch(fallback: (o: RuntimeOptions) => ModuleRuntime): {
  create: (o: RuntimeOptions) => ModuleRuntime;
  bind: (node: ClusterNode) => void;
} {
  let node: ClusterNode | undefined;
  return {
    create: (o) => (o.manifest.runtime.type === 'nats' && node ? node.createRuntime(o) : fallback(o)),
    bind: (n) => {
      node = n;
    },
  };
}
