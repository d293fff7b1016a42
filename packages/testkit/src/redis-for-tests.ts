import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { firstBytes, freePort, serviceUrlForTests } from './services.js';

/** Path of the redis-server binary (`REDIS_SERVER_BIN`, PATH, /usr/bin), or undefined. */
export function redisServerBinary(): string | undefined {
  const candidates = [process.env.REDIS_SERVER_BIN, '/usr/bin/redis-server', '/usr/local/bin/redis-server'];
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir) candidates.push(join(dir, 'redis-server'));
  return candidates.find((c): c is string => c !== undefined && existsSync(c));
}

/** True when a Redis server answers PING at `url` (a password-protected one answers -NOAUTH). */
export async function isRedis(url: string): Promise<boolean> {
  const reply = await firstBytes(url, 1000, 'PING\r\n');
  return reply?.startsWith('+PONG') === true || reply?.startsWith('-NOAUTH') === true;
}

/** redis-server children still running. */
const live = new Set<ChildProcess>();
let exitHook = false;

/**
 * Kills `child` when the test process exits, through one listener for all of them: test files
 * share a worker's process (vitest.config.ts `isolate: false`), one listener per server would pile up.
 */
function killAtExit(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const c of live) c.kill('SIGKILL');
  });
}

/**
 * A redis-server child of the test process on a fixed free loopback port, without persistence
 * (`--save "" --appendonly no`), that a test may stop and start again (outage tests). Never the
 * shared server on 6379. Killed at process exit.
 */
export class RedisServerChild {
  private child: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    private readonly bin: string,
    private readonly extraArgs: readonly string[],
  ) {}

  /**
   * Starts one on a free port (`extraArgs` added to its command line, e.g. `--requirepass x`);
   * undefined when no redis-server binary is installed.
   */
  static async start(extraArgs: readonly string[] = []): Promise<RedisServerChild | undefined> {
    const bin = redisServerBinary();
    if (bin === undefined) return undefined;
    const s = new RedisServerChild(await freePort(), bin, extraArgs);
    await s.restart();
    return s;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts the server again on the same port and waits until it answers (10 s at most). */
  async restart(): Promise<void> {
    if (this.child !== undefined) return;
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      ...this.extraArgs,
    ];
    const child = spawn(this.bin, args, { stdio: 'ignore' });
    this.child = child;
    killAtExit(child);
    child.once('exit', () => (this.child = undefined));
    for (let i = 0; i < 100; i++) {
      if (await isRedis(this.url)) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`redis-server on port ${this.port} did not answer`);
  }

  /** Kills the server (SIGKILL: an outage, not a shutdown) and waits for it to be gone. */
  async stop(): Promise<void> {
    const c = this.child;
    if (c === undefined) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  }
}

/** Starts a private redis-server on a free loopback port, stopped at process exit. */
async function startPrivateRedis(): Promise<string | undefined> {
  return (await RedisServerChild.start())?.url;
}

/**
 * The Redis server for integration tests: `FINGER_TEST_REDIS_URL`, else redis://127.0.0.1:6379,
 * else a private redis-server. Undefined (loudly) when none; throws under
 * `FINGER_REQUIRE_SERVICES=1`. Tests isolate themselves with {@link testRedisPrefix}.
 */
export function redisUrlForTests(): Promise<string | undefined> {
  return serviceUrlForTests({
    name: 'redis',
    envVar: 'FINGER_TEST_REDIS_URL',
    defaultUrl: 'redis://127.0.0.1:6379',
    probe: isRedis,
    start: startPrivateRedis,
  });
}

/** A key prefix unique to one test (`finger-test:<random>:`); the test deletes its keys after. */
export function testRedisPrefix(): string {
  return `finger-test:${Math.random().toString(36).slice(2, 12)}:`;
}
