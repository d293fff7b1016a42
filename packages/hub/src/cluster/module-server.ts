import { randomBytes } from 'node:crypto';

import type { NatsConnection } from 'nats';

import { FingerError } from '@finger/protocol';

import { type Logger, silentLogger } from '../logger.js';
import { MessageHub } from '../message-hub.js';
import { type DroppedMessage, failedAuthentication } from '../transport/nats-options.js';
import { logRefusals } from '../transport/nats-subscribe.js';
import { parseServeKey, WireAuth } from '../transport/nats-wire.js';
import { ClusterNode } from './cluster-node.js';
import { connectNats, type NatsConnectOptions } from './connect.js';

/** Options of {@link startModuleServer} (`myfinger module serve`). */
export interface ModuleServerOptions {
  /** Path of the module.json to host (in-process, stdio or MCP runtime). */
  manifestFile: string;
  nats: NatsConnectOptions;
  cluster: string;
  /** The module's serve key (`serveKeyOf(cluster key, module id)`), never the cluster key itself. */
  serve_key: string;
  /** Node id; default `serve-<module>-<random>`. */
  node?: string;
  logger?: Logger;
  /** Environment stdio children pick their minimal env from. */
  baseEnv?: Record<string, string | undefined>;
  heartbeat_ms?: number;
  /** Operator settings handed to the module. */
  settings?: Record<string, unknown>;
}

/** A running `module serve` host. */
export interface ModuleServer {
  readonly node: string;
  readonly module_id: string;
  readonly connection: NatsConnection;
  /** Stops announcing, lets in-flight calls finish (up to `drain_ms`), closes the module and drains NATS. */
  close(drain_ms?: number): Promise<void>;
}

/**
 * Hosts one module on a machine that only reaches NATS: a local MessageHub runs the module, a
 * ClusterNode (role `serve`) serves it on `finger.<cluster>.call.<module>` and announces it —
 * once a message of a daemon of the cluster (or another host of the module) verified under its
 * serve key, so a host holding a wrong key never takes calls it would drop. It
 * signs with its module's serve key only, so daemons accept its replies, heartbeats and module
 * events for that module and no other, but refuse any request it would originate. The module's nested calls reach only this local hub.
 * Rejects with E_INVALID_MANIFEST / E_NOT_FOUND for a bad module.json and E_STORE_UNAVAILABLE
 * when NATS cannot be reached.
 */
export async function startModuleServer(o: ModuleServerOptions): Promise<ModuleServer> {
  const logger = o.logger ?? silentLogger;
  const hub = new MessageHub({
    logger,
    ...(o.baseEnv ? { baseEnv: o.baseEnv } : {}),
    ...(o.settings ? { settingsFor: () => o.settings } : {}),
  });
  let nc: NatsConnection | undefined;
  let member: ClusterNode | undefined;
  try {
    const info = await hub.registry.loadFile(o.manifestFile);
    const key = parseServeKey(o.serve_key);
    if (typeof key === 'string') throw new FingerError('E_INVALID_ARGS', `the serve key: ${key}`);
    if (key.module !== info.id)
      throw new FingerError(
        'E_INVALID_ARGS',
        `the serve key is for module ${key.module}, the manifest is module ${info.id}: print ${info.id}'s with \`myfinger module serve-key ${info.id}\` where the cluster key is`,
        { key_module: key.module, module: info.id },
      );
    const node = o.node ?? `serve-${info.id}-${randomBytes(4).toString('hex')}`;
    nc = await connectNats({ ...o.nats, name: `finger-${node}` });
    const connection = nc;
    const auth = new WireAuth({ role: 'serve', node, serve_key: o.serve_key });
    member = new ClusterNode({
      hub,
      connection,
      cluster: o.cluster,
      auth,
      logger,
      importRemote: false,
      bridgeEvents: true,
      onDropped: warnUnauthenticated(logger),
      ...(o.heartbeat_ms !== undefined ? { heartbeat_ms: o.heartbeat_ms } : {}),
    });
    void logRefusals(connection, logger);
    // a module no heartbeat can carry would never be called: refuse to serve it at all
    const left = member.unannounceable()[0];
    if (left !== undefined)
      throw new FingerError(
        'E_INVALID_ARGS',
        `module ${left.id} cannot be announced: its manifest (${left.bytes} bytes) does not fit in a heartbeat under the NATS server's max_payload (${connection.info?.max_payload ?? '?'} bytes) — raise max_payload in the server's config, or serve a module with fewer or smaller tools`,
        { module: left.id, bytes: left.bytes, max_payload: connection.info?.max_payload },
      );
    await member.start();
    const served = member;
    let closing: Promise<void> | undefined;
    return {
      node,
      module_id: info.id,
      connection,
      close(drain_ms = 10_000) {
        closing ??= (async () => {
          // the calls it serves come over NATS: the member drains them (then answers the rest)
          await served.close(drain_ms);
          await hub.close(drain_ms);
          await connection.drain().catch(() => undefined);
        })();
        return closing;
      },
    };
  } catch (e) {
    await member?.close(0).catch(() => undefined);
    await hub.close(0).catch(() => undefined);
    await nc?.close().catch(() => undefined);
    throw e;
  }
}

/**
 * What a serve host does with a message that fails authentication: says so, once per sender (at
 * most 64), since a host whose serve key is not the cluster's would otherwise run on in silence
 * while every daemon drops its heartbeats.
 */
function warnUnauthenticated(logger: Logger): (d: DroppedMessage) => void {
  const told = new Set<string>();
  return (d) => {
    if (!failedAuthentication(d)) return;
    const from = d.claimed_node ?? '?';
    if (told.has(from) || told.size >= 64) return;
    told.add(from);
    logger.warn(
      { reason: d.reason, subject: d.subject, claimed_node: d.claimed_node },
      `messages from node "${from}" fail authentication: this host's serve key, or that node's key, is not the cluster's (print the module's serve key with \`myfinger module serve-key <module>\` where the cluster key is), or someone forges them`,
    );
  };
}
