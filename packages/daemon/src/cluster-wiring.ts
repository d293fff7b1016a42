import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';

import type { Logger as PinoLogger } from 'pino';

import type { SafetyMonitor } from '@finger/firewall';
import type { RuntimeOptions } from '@finger/hub';
import {
  type Clock,
  createRuntime,
  type LocalEventBus,
  type MessageHub,
  type ModuleRuntime,
  withoutCredentials,
} from '@finger/hub';
import type { ClusterNode, DroppedMessage, ModulePlacement } from '@finger/hub/nats';
import { FingerError } from '@finger/protocol';

import { haltRelay } from './cluster-halt-relay.js';
import type { DaemonConfig } from './config.js';
import { natsConnectOptions } from './nats-connect-options.js';

/** What routes and `/v1/health` see of the daemon's cluster membership. */
export interface ClusterStatus {
  cluster: string;
  node: string;
  /** The configured NATS URL(s), credentials stripped. */
  url: string;
  connected: boolean;
  /** Last connection error while not connected. */
  last_error?: string;
  /** Remote modules currently known. */
  remote_modules: number;
  /** Envelopes dropped for failing authentication or validation. */
  dropped: number;
  /** Operations the NATS server refused this node for want of a permission (since start). */
  refused: number;
  /** The last one, e.g. `publish to "finger.prod.events.DEGRADED"`. */
  last_refused?: string;
  /** When it happened (RFC 3339); `/v1/health` says `degraded` for a minute after. */
  last_refused_at?: string;
  /** The last message dropped for failing authentication (a peer with another key, or a forgery). */
  last_unauthenticated?: string;
  /** When it happened (RFC 3339); `/v1/health` says `degraded` for a minute after. */
  last_unauthenticated_at?: string;
}

/** The daemon's side of distributed mode; absent unless `nats.url` is set. */
export interface ClusterWiring {
  status(): ClusterStatus;
  /** Where module `id` runs (`local`, or the remote nodes with their heartbeat health). */
  placement(id: string): ModulePlacement;
  /**
   * Joins (the first attempt; retries go on by themselves). Called once the daemon listens, so a
   * daemon that cannot bind its port never announces its modules to the cluster.
   */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** Late-bound runtime creation: `{type: "nats"}` manifests go to the cluster node once it exists. */
export interface ClusterRuntimes {
  create(o: RuntimeOptions): ModuleRuntime;
  bind(node: ClusterNode): void;
}

/** The `createRuntime` of a clustered hub (no `nats` import: the node is bound later). */
export function clusterRuntimes(): ClusterRuntimes {
  let node: ClusterNode | undefined;
  return {
    create: (o) => (o.manifest.runtime.type === 'nats' && node ? node.createRuntime(o) : createRuntime(o)),
    bind: (n) => {
      node = n;
    },
  };
}

/** Options of {@link wireCluster}. */
export interface WireClusterOptions {
  hub: MessageHub;
  events: LocalEventBus;
  config: DaemonConfig;
  home: string;
  runtimes: ClusterRuntimes;
  logger: PinoLogger;
  clock: Clock;
  /** Without a shared store (no `redis.url`): the halts and unlocks of other daemons reach this monitor. */
  relayHaltsTo?: SafetyMonitor;
  /** This daemon's node id in the cluster (default {@link daemonNodeId}). */
  node?: string;
}

/** A daemon's node id: `daemon-<hostname>-<pid>-<6 hex>` (new at each start). */
export function daemonNodeId(): string {
  return `daemon-${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

/** Reads the cluster key from config (`nats.cluster_key`, else `nats.cluster_key_file`). Throws E_INVALID_ARGS. */
export function clusterKey(config: DaemonConfig, home: string): string {
  const n = config.nats;
  if (n.cluster_key) return n.cluster_key;
  if (n.cluster_key_file) {
    let key: string;
    try {
      key = readFileSync(resolve(home, n.cluster_key_file), 'utf8').trim();
    } catch (e) {
      throw new FingerError('E_INVALID_ARGS', `cannot read nats.cluster_key_file: ${(e as Error).message}`);
    }
    if (key.length < 16)
      throw new FingerError('E_INVALID_ARGS', 'nats.cluster_key_file holds fewer than 16 characters');
    return key;
  }
  throw new FingerError(
    'E_INVALID_ARGS',
    'nats.url is set but no cluster key: set nats.cluster_key, nats.cluster_key_file or FINGER_CLUSTER_KEY',
    { issues: [{ path: '$.nats.cluster_key', message: 'is required with nats.url' }] },
  );
}

/** Longest close() waits for a join under way, and for the connection to drain. */
const CLOSE_WAIT_MS = 3000;

/** Whether `p` settles within `ms` (its outcome is not looked at). */
async function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([
      p.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Joins the cluster of `config.cluster` over `config.nats.url`: the hub's local modules are
 * served and announced, the other nodes' modules imported as `{type: "nats"}` modules, events
 * bridged. When NATS is unreachable (at start or later) the daemon keeps running in-process:
 * a DEGRADED event (`data.component: "nats"`) is emitted, `/v1/health` says `degraded`, remote
 * calls fail fast, and the connection is retried with backoff until NATS returns (then a
 * DEGRADED event with `degraded: false`). Throws E_INVALID_ARGS without a cluster key. Only
 * this file loads `@finger/hub/nats`, and only when `nats.url` is set. Nothing goes on the wire
 * before `start()`.
 */
export async function wireCluster(o: WireClusterOptions): Promise<ClusterWiring> {
  const { config, events, logger, hub } = o;
  const key = clusterKey(config, o.home);
  const url = config.nats.url!;
  const nats = await import('@finger/hub/nats');
  const node = o.node ?? daemonNodeId();
  const log = logger.child({ node }); // the caller's logger says component: 'cluster'
  const state = {
    connected: false,
    last_error: undefined as string | undefined,
    dropped: 0,
    closed: false,
    refused: 0,
    last_refused: undefined as { what: string; at: number } | undefined,
    last_unauthenticated: undefined as { what: string; at: number } | undefined,
  };
  let member: ClusterNode | undefined;
  let conn: import('nats').NatsConnection | undefined;
  let retry: NodeJS.Timeout | undefined;
  /** The attempt to join under way (the first one, or a retry's), for close() to wait for. */
  let joining: Promise<void> | undefined;
  let dropWindow = { at: 0, n: 0 };
  const eventsPrefix = `finger.${config.cluster}.events.`;

  const degraded = (data: Record<string, unknown>) => events.emit('DEGRADED', {}, { component: 'nats', ...data });
  const onDropped = (d: DroppedMessage) => {
    state.dropped++;
    if (nats.failedAuthentication(d)) {
      const from = d.claimed_node !== undefined ? ` from a node calling itself "${d.claimed_node}"` : '';
      const first = state.last_unauthenticated === undefined;
      state.last_unauthenticated = { what: `${d.reason}${from} on ${d.subject}`, at: Date.now() };
      if (first)
        log.warn(
          { reason: d.reason, subject: d.subject, claimed_node: d.claimed_node },
          'NATS messages fail authentication: a node of this cluster has another cluster key or serve key (or someone forges them)',
        );
    }
    // a dropped batch of events is not reported as an event: that event would cross the bridge to
    // the node whose batch it was, which — its key differing — drops it and reports that in turn,
    // and so on for as long as both run (counted above and shown in /v1/health all the same)
    if (d.subject.startsWith(eventsPrefix)) return;
    const now = o.clock.now();
    if (now - dropWindow.at > 1000) dropWindow = { at: now, n: 0 };
    // degraded as /v1/health is: for a minute after a message that failed authentication
    if (++dropWindow.n <= 10) degraded({ kind: 'envelope_dropped', degraded: nats.failedAuthentication(d), ...d });
  };
  const connectOptions = natsConnectOptions(config.nats, o.home, `finger-${node}`);

  const watch = async (nc: import('nats').NatsConnection) => {
    for await (const s of nc.status()) {
      const refusal = nats.permissionRefusal(s);
      if (refusal !== undefined) {
        // a publish or subscription the server refused (this node's NATS user lacks a permission)
        state.refused++;
        const what = `${refusal.operation === 'publish' ? 'publish to' : 'subscription to'} "${refusal.subject}"`;
        state.last_refused = { what, at: Date.now() };
        // a refused subscription is logged where it was made (subscribeChecked)
        if (refusal.operation === 'publish')
          log.error(refusal, 'NATS refused to publish: check the permissions of the daemon NATS user');
      } else if (s.type === 'disconnect' && state.connected) {
        state.connected = false;
        state.last_error = 'disconnected';
        log.warn('NATS disconnected; remote modules unavailable until it returns');
        degraded({ degraded: true, reason: 'NATS disconnected', url: withoutCredentials(url) });
      } else if (s.type === 'reconnect' && !state.connected) {
        state.connected = true;
        state.last_error = undefined;
        log.info('NATS reconnected');
        degraded({ degraded: false, reason: 'NATS reconnected', url: withoutCredentials(url) });
      }
    }
  };

  const join = async (backoff: number): Promise<void> => {
    if (state.closed) return;
    let nc: import('nats').NatsConnection | undefined;
    try {
      nc = await nats.connectNats(connectOptions);
      if (state.closed) {
        await nc.close();
        return;
      }
      conn = nc;
      const auth = new nats.WireAuth({ role: 'daemon', node, cluster_key: key });
      member = new nats.ClusterNode({
        hub,
        connection: nc,
        ...(o.relayHaltsTo ? { onDaemonEvent: haltRelay(o.relayHaltsTo, log) } : {}),
        cluster: config.cluster,
        auth,
        clock: o.clock,
        logger: log,
        importRemote: true,
        bridgeEvents: true,
        onDropped,
        ...(config.nats.heartbeat_ms !== undefined ? { heartbeat_ms: config.nats.heartbeat_ms } : {}),
        ...(config.nats.unhealthy_after_ms !== undefined ? { unhealthy_after_ms: config.nats.unhealthy_after_ms } : {}),
      });
      o.runtimes.bind(member);
      await member.start();
      if (state.closed) throw new Error('closed while joining');
      const wasDown = state.last_error !== undefined;
      state.connected = true;
      state.last_error = undefined;
      if (wasDown) degraded({ degraded: false, reason: 'NATS reachable', url: withoutCredentials(url) });
      void watch(nc);
      log.info({ cluster: config.cluster }, 'joined the cluster');
    } catch (e) {
      // joined halfway (e.g. NATS refused a subscription it needs): let go of it before retrying
      if (member !== undefined) await member.close().catch(() => undefined);
      member = undefined;
      if (nc !== undefined) await nc.close().catch(() => undefined);
      conn = undefined;
      if (state.closed) return; // close() came while this attempt ran: no retry
      const first = state.last_error === undefined;
      state.last_error = (e as Error).message;
      if (first) {
        log.warn({ error: state.last_error }, 'NATS unreachable; running in-process, retrying');
        degraded({ degraded: true, reason: state.last_error, url: withoutCredentials(url) });
      }
      retry = setTimeout(() => void attempt(Math.min(backoff * 2, 5000)), backoff);
      retry.unref();
    }
  };
  const attempt = (backoff: number): Promise<void> => {
    const p = join(backoff);
    joining = p;
    void p.finally(() => {
      if (joining === p) joining = undefined;
    });
    return p;
  };
  let started: Promise<void> | undefined;

  return {
    start() {
      started ??= attempt(250);
      return started;
    },
    status() {
      const s: ClusterStatus = {
        cluster: config.cluster,
        node,
        url: withoutCredentials(url),
        connected: state.connected,
        // the remote modules imported here (one a local module of its id hides is not)
        remote_modules:
          member?.registry.list().filter((m) => hub.registry.get(m.manifest.id)?.runtime === 'nats').length ?? 0,
        dropped: state.dropped,
        refused: state.refused,
      };
      if (state.last_error !== undefined) s.last_error = state.last_error;
      if (state.last_refused !== undefined) {
        s.last_refused = state.last_refused.what;
        s.last_refused_at = new Date(state.last_refused.at).toISOString();
      }
      if (state.last_unauthenticated !== undefined) {
        s.last_unauthenticated = state.last_unauthenticated.what;
        s.last_unauthenticated_at = new Date(state.last_unauthenticated.at).toISOString();
      }
      return s;
    },
    placement(id) {
      return member?.placement(id) ?? { location: 'local', nodes: [] };
    },
    async close() {
      state.closed = true;
      if (retry) clearTimeout(retry);
      // an attempt under way (a retry) lets go of what it made once it sees the close: draining its
      // connection meanwhile would wait for ever, as nats.js never settles a drain() that a close()
      // overtakes (which the attempt's clean-up does)
      if (joining !== undefined) await within(joining, CLOSE_WAIT_MS);
      await member?.close().catch(() => undefined);
      const nc = conn;
      if (nc !== undefined && !(await within(nc.drain(), CLOSE_WAIT_MS))) await nc.close().catch(() => undefined);
    },
  };
}
