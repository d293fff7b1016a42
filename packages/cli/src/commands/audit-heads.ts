// The copies of the audit head that offline `audit verify` and `audit acknowledge` compare the log
// with: `<home>/state/audit-head.json`, the head in Redis when the home's config sets redis.url
// (the key the daemon of this home on this machine writes), and an operator's copy (`--anchor`).

import path from 'node:path';

import type { AuditHeadStore, SourcedHead } from '@finger/firewall';

import type { CommandContext } from '../context.js';
import { CliError } from '../errors.js';

/** The heads of one offline command, and what closes the Redis connection opened for them. */
export interface OfflineHeads {
  /** Recorded heads: the state file and, with redis.url, Redis. */
  stores: AuditHeadStore[];
  /** `--anchor` copies: compared, never written. */
  copies: SourcedHead[];
  /** What could not be consulted (verify goes on without it). */
  warnings: string[];
  close(): Promise<void>;
}

/**
 * Collects the heads for the log of `ctx.home` (none when `dir` names another directory: an
 * archive has no recorded head, only `--anchor`). `strict` (acknowledge): a config or Redis that
 * cannot be read fails with its code, as the daemon's start would; otherwise it becomes a warning.
 * Rejects with E_NOT_FOUND / E_INVALID_ARGS for an `--anchor` file that is missing or not a head.
 */
export async function offlineHeads(
  ctx: CommandContext,
  o: { anchor?: string; dir?: string; strict: boolean },
): Promise<OfflineHeads> {
  const fw = await import('@finger/firewall');
  const copies: SourcedHead[] = [];
  if (o.anchor !== undefined) {
    const file = path.resolve(o.anchor);
    let head;
    try {
      head = await fw.readAuditHeadFile(file);
    } catch (e) {
      throw new CliError('E_INVALID_ARGS', `--anchor: ${(e as Error).message}`);
    }
    if (head === undefined) throw new CliError('E_NOT_FOUND', `--anchor: ${file} does not exist`);
    copies.push({ ...head, source: `the anchor copy ${file}` });
  }
  const stores: AuditHeadStore[] = [];
  const warnings: string[] = [];
  let close = async (): Promise<void> => {};
  if (o.dir === undefined) {
    stores.push(new fw.FileAuditHeadStore(fw.auditHeadPath(ctx.home)));
    try {
      const redis = await redisHead(ctx);
      if (redis !== undefined) {
        stores.push(redis.store);
        close = redis.close;
      }
    } catch (e) {
      if (o.strict) throw e;
      warnings.push(`the audit head in Redis was not checked: ${(e as Error).message}`);
    }
  }
  return { stores, copies, warnings, close };
}

/** The Redis head of this home's log when its config sets redis.url (connected; close it after). */
async function redisHead(
  ctx: CommandContext,
): Promise<{ store: AuditHeadStore; close: () => Promise<void> } | undefined> {
  const d = await import('@finger/daemon');
  const config = d.resolveConfig(d.readConfigFile(ctx.home), ctx.io.env);
  if (config.redis.url === undefined) return undefined;
  const { RedisAuditHeadStore, RedisConnection } = await import('@finger/hub/redis');
  const connection = new RedisConnection({ url: config.redis.url, cluster: config.cluster });
  try {
    await connection.open(3000);
  } catch (e) {
    await connection.close();
    throw e;
  }
  return {
    store: new RedisAuditHeadStore(connection, path.join(ctx.home, 'audit')),
    close: () => connection.close(),
  };
}
