// Distributed shared state (§3.14): when config `redis.url` is set, the daemon keeps idempotency
// records, leases, safety state and an audit mirror in Redis under `finger:<cluster>:`, so every
// daemon of the cluster shares them. Built by app.ts; nothing here reads process.env.

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

import type { AuditHeadStore, AuditLog, PolicyStore, SessionState, StandingApprovals } from '@finger/firewall';
import type { Clock, EventBus, Logger } from '@finger/hub';
import type { RedisAuditMirror, RedisConnection, RedisKv, RedisLeaseStore, RedisRequestStore } from '@finger/hub/redis';

import { RedisFirewallSync } from './redis-firewall-sync.js';
import { RedisSafetyStore } from './redis-safety-store.js';

/** What {@link wireRedis} needs (from config `redis.url` and `cluster`). */
export interface RedisWiringOptions {
  url: string;
  cluster: string;
  logger: Logger;
  clock?: Clock;
  /** Where DEGRADED events go (`data.component: "redis"`) when Redis is lost and found again. */
  events?: EventBus;
  /** Names this daemon in the audit stream. Default `<hostname>/<pid>/<random>` (two daemons may share a process). */
  node?: string;
  /** How long the start waits for Redis before refusing to start (E_STORE_UNAVAILABLE). Default 3000 ms. */
  ready_timeout_ms?: number;
  /** Tests: a key prefix instead of `finger:<cluster>:`. */
  prefix?: string;
}

/** The Redis-backed stores of one daemon. */
export interface RedisWiring {
  readonly connection: RedisConnection;
  /** The hub's RequestStore: one execution per caller `request_id` across daemons. */
  readonly requests: RedisRequestStore;
  /** Named leases shared by the cluster. */
  readonly leases: RedisLeaseStore;
  readonly mirror: RedisAuditMirror;
  /** The SafetyMonitor's store (budgets, lockouts, breakers shared by the cluster); opened once. */
  safetyStore(): Promise<RedisSafetyStore>;
  /**
   * Shares the UserPolicy and the gate's session approvals with the cluster (E_STORE_UNAVAILABLE
   * when Redis cannot be read: the daemon must not start on a possibly stale policy).
   */
  shareFirewall(parts: {
    policy: PolicyStore;
    sessions: SessionState;
    standing?: StandingApprovals;
  }): Promise<RedisFirewallSync>;
  /** Mirrors every durable audit entry into the `<prefix>audit` stream. */
  mirrorAudit(audit: AuditLog): void;
  /** The head of the audit log in `dir`, kept under `<prefix>audit:head:<host>:<dir digest>` (audit-head.ts). */
  auditHead(dir: string): AuditHeadStore;
  /** For `/v1/health` and `doctor`: whether Redis answers right now, and the mirror's counters. */
  health(): {
    connected: boolean;
    prefix: string;
    last_error?: string;
    held_outcomes: number;
    audit_mirror: ReturnType<RedisAuditMirror['stats']>;
  };
  /** Flushes the mirror (one attempt), stops the stores, closes the connections. Idempotent. */
  close(): Promise<void>;
}

/**
 * Connects to Redis and builds the stores. A daemon does not start without its shared state:
 * rejects with E_STORE_UNAVAILABLE naming the URL (without credentials) and the last cause
 * (password refused or missing, connection refused, TLS handshake failed, database index the
 * server does not have) when Redis is not ready within `ready_timeout_ms`, at once for a refused
 * password or database. Throws E_INVALID_ARGS for a malformed URL or a cluster name that is not a
 * valid key segment. Once started, a lost Redis only degrades the daemon (DEGRADED events).
 */
export async function wireRedis(o: RedisWiringOptions): Promise<RedisWiring> {
  // loaded only here, only with redis.url set: a daemon without Redis never loads ioredis
  const { RedisAuditHeadStore, RedisAuditMirror, RedisConnection, RedisKv, RedisLeaseStore, RedisRequestStore } =
    await import('@finger/hub/redis');
  const logger = o.logger;
  const connection = new RedisConnection({
    url: o.url,
    cluster: o.cluster,
    logger,
    ...(o.prefix !== undefined ? { prefix: o.prefix } : {}),
  });
  // Lost and found again: a DEGRADED event each way (shared-state calls fail meanwhile).
  const state = { up: false, closed: false, last_error: undefined as string | undefined };
  connection.client.on('error', (e: Error) => (state.last_error = e.message));
  connection.client.on('ready', () => {
    if (!state.up) {
      if (state.last_error !== undefined)
        o.events?.emit('DEGRADED', {}, { component: 'redis', degraded: false, prefix: connection.prefix });
      state.up = true;
    }
  });
  connection.client.on('close', () => {
    if (!state.up || state.closed) return;
    state.up = false;
    state.last_error ??= 'connection closed';
    logger.warn({ prefix: connection.prefix }, 'redis connection lost: shared-state calls fail until it returns');
    o.events?.emit('DEGRADED', {}, { component: 'redis', degraded: true, reason: state.last_error });
  });
  try {
    await connection.open(o.ready_timeout_ms ?? 3000);
  } catch (e) {
    state.closed = true;
    await connection.close();
    throw e;
  }
  logger.info({ url: connection.url, prefix: connection.prefix }, 'redis connected');
  const requests = new RedisRequestStore(connection, {
    logger,
    ...(o.clock !== undefined ? { clock: o.clock } : {}),
  });
  const leases = new RedisLeaseStore(connection);
  const mirror = new RedisAuditMirror(
    connection,
    o.node ?? `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`,
    { logger },
  );
  const kvs: RedisKv[] = [];
  let safety: Promise<RedisSafetyStore> | undefined;
  let firewall: RedisFirewallSync | undefined;
  let offAudit: (() => void) | undefined;
  let closing: Promise<void> | undefined;
  return {
    connection,
    requests,
    leases,
    mirror,
    safetyStore() {
      safety ??= (async () => {
        const kv = new RedisKv(connection, 'safety');
        kvs.push(kv);
        return RedisSafetyStore.open(kv, logger);
      })();
      return safety;
    },
    async shareFirewall(parts) {
      const kv = new RedisKv(connection, 'firewall');
      kvs.push(kv);
      firewall = await RedisFirewallSync.open(
        kv,
        parts.policy,
        parts.sessions,
        { logger, available: () => connection.available },
        parts.standing,
      );
      return firewall;
    },
    mirrorAudit(audit) {
      offAudit?.();
      offAudit = audit.onAppended((entry) => mirror.push(entry));
    },
    auditHead(dir) {
      return new RedisAuditHeadStore(connection, dir);
    },
    health() {
      return {
        connected: connection.available,
        prefix: connection.prefix,
        ...(!connection.available && state.last_error !== undefined ? { last_error: state.last_error } : {}),
        held_outcomes: requests.pendingCount,
        audit_mirror: mirror.stats(),
      };
    },
    close() {
      closing ??= (async () => {
        state.closed = true;
        offAudit?.();
        await firewall?.close().catch(() => undefined);
        await mirror.close().catch(() => undefined);
        if (safety !== undefined) await (await safety.catch(() => undefined))?.close();
        await requests.close().catch(() => undefined);
        for (const kv of kvs) await kv.close().catch(() => undefined);
        await connection.close();
      })();
      return closing;
    },
  };
}
