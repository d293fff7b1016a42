import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Finding the real servers that integration tests need (DESIGN §4).
 *
 * For each service: the `FINGER_TEST_<NAME>_URL` environment variable, else the loopback default,
 * else (when the binary is installed) a server started here on a free loopback port and stopped
 * when the test process exits. When none answers, the service is reported loudly as skipped and
 * the getter resolves `undefined` (tests use `describe.skipIf(!url)`); with
 * `FINGER_REQUIRE_SERVICES=1` (CI) it throws instead, so a run without the servers fails.
 *
 * To add a service (Redis): write its probe and launcher, then a `<name>UrlForTests()` that calls
 * {@link serviceUrlForTests}, like {@link natsUrlForTests}.
 */

/** How one service is found. */
export interface ServiceSpec {
  /** Display name (`nats`, `redis`). */
  name: string;
  /** Environment variable naming the URL to use (`FINGER_TEST_NATS_URL`). */
  envVar: string;
  /** URL tried when the variable is unset. */
  defaultUrl: string;
  /** Resolves true when a server of this kind answers at `url`. Must give up within ~1 s. */
  probe(url: string): Promise<boolean>;
  /** Starts a private server and resolves its URL, or undefined when the binary is missing. */
  start?(): Promise<string | undefined>;
}

const found = new Map<string, Promise<string | undefined>>();

/** Where {@link serviceUrlForTests} looks and reports (the test of the skip mechanism passes its own). */
export interface ServiceLookup {
  /** Environment (default `process.env`): the spec's URL variable and `FINGER_REQUIRE_SERVICES`. */
  env?: Record<string, string | undefined>;
  /** Receives the SKIPPED banner (default `console.warn`: a real skip is loud). */
  warn?: (banner: string) => void;
}

/**
 * Resolves the URL of a running server for `spec` (memoised per test process), or undefined after
 * printing a loud SKIPPED banner. Throws when `FINGER_REQUIRE_SERVICES=1` and none was found.
 */
export function serviceUrlForTests(spec: ServiceSpec, lookup: ServiceLookup = {}): Promise<string | undefined> {
  let p = found.get(spec.name);
  if (p === undefined) {
    p = locate(spec, lookup.env ?? process.env, lookup.warn ?? ((b) => console.warn(b)));
    found.set(spec.name, p);
  }
  return p;
}

async function locate(
  spec: ServiceSpec,
  env: Record<string, string | undefined>,
  warn: (banner: string) => void,
): Promise<string | undefined> {
  const fromEnv = env[spec.envVar];
  const tried: string[] = [];
  for (const url of fromEnv ? [fromEnv] : [spec.defaultUrl]) {
    tried.push(url);
    if (await spec.probe(url)) return url;
  }
  if (!fromEnv && spec.start) {
    const started = await spec.start().catch(() => undefined);
    if (started !== undefined) return started;
    tried.push(`(no ${spec.name} binary could be started)`);
  }
  const message = `${spec.name} not reachable (tried ${tried.join(', ')}; set ${spec.envVar})`;
  if (env.FINGER_REQUIRE_SERVICES === '1') {
    throw new Error(`FINGER_REQUIRE_SERVICES=1 but ${message}`);
  }
  const bar = '!'.repeat(78);
  warn(`\n${bar}\n!! SKIPPED: tests needing ${spec.name} — ${message}\n${bar}\n`);
  return undefined;
}

/** host:port of a nats://, redis:// or tcp:// URL (the first host of a comma list). */
export function hostPort(url: string): { host: string; port: number } {
  const u = new URL(url.split(',')[0]!.trim());
  return { host: u.hostname || '127.0.0.1', port: Number(u.port) || 4222 };
}

/**
 * Connects to `url` and resolves with the first bytes the server sends (NATS greets with
 * `INFO {…}`), or undefined when nothing answers within `timeout_ms`.
 */
export function firstBytes(url: string, timeout_ms = 1000, send?: string): Promise<string | undefined> {
  const { host, port } = hostPort(url);
  return new Promise((resolve) => {
    const s = new Socket();
    const done = (v: string | undefined) => {
      s.destroy();
      resolve(v);
    };
    s.setTimeout(timeout_ms, () => done(undefined));
    s.once('error', () => done(undefined));
    s.once('data', (d) => done(d.toString('utf8')));
    s.connect(port, host, () => {
      if (send !== undefined) s.write(send);
    });
  });
}

/** A free TCP port on 127.0.0.1 (closed again before returning). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * `path` (a binary a suite runs itself, e.g. a private nats-server), or undefined after a loud
 * SKIPPED banner naming `suite` and `hint` when it is missing; throws instead under
 * `FINGER_REQUIRE_SERVICES=1` (CI), so a suite cannot skip there.
 */
export function binaryForTests(path: string | undefined, suite: string, hint: string): string | undefined {
  if (path !== undefined) return path;
  if (process.env.FINGER_REQUIRE_SERVICES === '1')
    throw new Error(`FINGER_REQUIRE_SERVICES=1 but ${suite} cannot run: ${hint}`);
  console.warn(`\n!! SKIPPED: ${suite} — ${hint}\n`);
  return undefined;
}

/** Path of the nats-server binary (`NATS_SERVER_BIN`, PATH, /usr/sbin), or undefined. */
export function natsServerBinary(): string | undefined {
  const candidates = [
    process.env.NATS_SERVER_BIN,
    '/usr/sbin/nats-server',
    '/usr/local/bin/nats-server',
    '/usr/bin/nats-server',
  ];
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir) candidates.push(join(dir, 'nats-server'));
  return candidates.find((c): c is string => c !== undefined && existsSync(c));
}

const isNats = async (url: string) => (await firstBytes(url))?.startsWith('INFO ') === true;

/** Starts a JetStream-enabled nats-server on a free loopback port, stopped at process exit. */
async function startPrivateNats(): Promise<string | undefined> {
  const bin = natsServerBinary();
  if (bin === undefined) return undefined;
  const port = await freePort();
  const store = mkdtempSync(join(tmpdir(), 'finger-nats-'));
  const child = spawn(bin, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store], { stdio: 'ignore' });
  process.once('exit', () => {
    child.kill('SIGKILL');
    rmSync(store, { recursive: true, force: true });
  });
  const url = `nats://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i++) {
    if (await isNats(url)) return url;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  return undefined;
}

/** A nats-server child of the test process (see {@link startConfiguredNats}). */
export interface NatsServerChild {
  port: number;
  /** `nats://127.0.0.1:<port>`. */
  url: string;
  stop(): void;
}

/**
 * Starts a private nats-server on a free loopback port with `config` (nats-server.conf text —
 * users, TLS, operator mode…; the `listen` line is added here) and waits until it greets. For
 * suites that need a server set up differently from the shared one; killed by `stop()` or at exit.
 * Throws when `bin` does not start a server within 5 s.
 */
export async function startConfiguredNats(bin: string, config: string): Promise<NatsServerChild> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'finger-nats-conf-'));
  const file = join(dir, 'nats.conf');
  writeFileSync(file, `listen: "127.0.0.1:${port}"\n${config}`);
  const child = spawn(bin, ['-c', file], { stdio: 'ignore' });
  const stop = () => {
    // test files share a worker's process (isolate: false): a stopped server leaves no listener behind
    process.off('exit', stop);
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stop);
  const url = `nats://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i++) {
    if (await isNats(url)) return { port, url, stop };
    await new Promise((r) => setTimeout(r, 100));
  }
  stop();
  throw new Error(`nats-server with the given config did not start on port ${port}`);
}

/**
 * The NATS server for integration tests: `FINGER_TEST_NATS_URL`, else nats://127.0.0.1:4222, else a
 * private nats-server. Undefined (loudly) when none; throws under `FINGER_REQUIRE_SERVICES=1`.
 * Tests isolate themselves with their own cluster name, never by a server of their own.
 */
export function natsUrlForTests(): Promise<string | undefined> {
  return serviceUrlForTests({
    name: 'nats',
    envVar: 'FINGER_TEST_NATS_URL',
    defaultUrl: 'nats://127.0.0.1:4222',
    probe: isNats,
    start: startPrivateNats,
  });
}

/** A cluster name unique to one test (`t-<prefix>-<random>`), valid for config `cluster`. */
export function testClusterName(prefix = 'c'): string {
  return `t-${prefix}-${Math.random().toString(36).slice(2, 10)}`.toLowerCase();
}
