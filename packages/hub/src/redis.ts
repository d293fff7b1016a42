// `@finger/hub/redis`: the Redis stores of distributed mode. A separate entry so the root
// `@finger/hub` never loads ioredis (a test asserts it).

export { redisAccessRefusals } from './store/redis-access.js';
export type { RedisAuditHeadValue } from './store/redis-audit-head.js';
export { auditHeadId, RedisAuditHeadStore } from './store/redis-audit-head.js';
export type { MirroredEntry, RedisAuditMirrorOptions } from './store/redis-audit-mirror.js';
export { RedisAuditMirror } from './store/redis-audit-mirror.js';
export { redisCause } from './store/redis-cause.js';
export type { RedisConnectionOptions } from './store/redis-client.js';
export { RedisConnection, storeUnavailable } from './store/redis-client.js';
export { RedisKv } from './store/redis-kv.js';
export { RedisLeaseStore } from './store/redis-lease-store.js';
export { pingRedis } from './store/redis-ping.js';
export type { RedisRequestStoreOptions } from './store/redis-request-store.js';
export { RedisRequestStore } from './store/redis-request-store.js';
