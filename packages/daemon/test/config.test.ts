import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { build, DEFAULT_CONFIG, describeStartError, exampleConfig, resolveConfig, resolveHome } from '@finger/daemon';
import type { FingerError } from '@finger/protocol';
import { thrownBy } from '@finger/testkit';

import { tempDir } from './helpers.js';

describe('resolveConfig', () => {
  it('gives the defaults for an absent file and no env', () => {
    expect(resolveConfig(undefined, {}, {})).toEqual(DEFAULT_CONFIG);
    expect(DEFAULT_CONFIG.server).toEqual({ host: '127.0.0.1', port: 7770, allowed_hosts: [] });
    expect(DEFAULT_CONFIG.ws.max_buffered_events).toBe(1000);
    expect(DEFAULT_CONFIG.shutdown.drain_ms).toBe(10_000);
    expect(DEFAULT_CONFIG.workspace).toEqual({ roots: ['~/finger-workspace'] });
    expect(DEFAULT_CONFIG.approvals).toEqual({});
    expect(DEFAULT_CONFIG.token_file).toBeUndefined();
  });

  it('takes token_file from FINGER_TOKEN_FILE over the file, and approvals.answerers as token names', () => {
    const cfg = resolveConfig(
      { token_file: 'keys/token', approvals: { answerers: ['alice', 'ops-bot'] } },
      { FINGER_TOKEN_FILE: '/run/finger/token' },
    );
    expect([cfg.token_file, cfg.approvals]).toEqual(['/run/finger/token', { answerers: ['alice', 'ops-bot'] }]);
    expect(() => resolveConfig({ approvals: { answerers: [] } })).toThrow(/\$\.approvals\.answerers/);
    expect(() => resolveConfig({ token_file: '' })).toThrow(/\$\.token_file/);
  });

  it('merges file < env < overrides', () => {
    const cfg = resolveConfig(
      { server: { host: '0.0.0.0', port: 1000 }, log: { level: 'debug' }, hub: { max_nesting_depth: 6 } },
      { FINGER_PORT: '2000', FINGER_LOG_LEVEL: 'warn', FINGER_MODULE_PATHS: ['/a', '/b'].join(delimiter) },
      { server: { port: 3000 } },
    );
    expect(cfg.server).toEqual({ host: '0.0.0.0', port: 3000, allowed_hosts: [] });
    expect(cfg.log.level).toBe('warn');
    expect(cfg.modules).toEqual({ paths: ['/a', '/b'], builtin: true, settings: {} });
    expect(cfg.hub).toEqual({ max_nesting_depth: 6 });
    expect(resolveConfig({}, { FINGER_HOST: '::1' }).server.host).toBe('::1');
  });

  it('names the key path of a bad value', () => {
    const err = thrownBy(() => resolveConfig({ server: { port: 'eighty' } }));
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.message).toContain('config.json: $.server.port must be integer');
    expect(err.details).toEqual({
      source: 'config.json',
      issues: [{ path: '$.server.port', message: 'must be integer' }],
    });
  });

  it('takes server.allowed_hosts as host names or IP addresses, and names a bad entry in words', () => {
    const names = ['finger.internal', '10.0.0.5', '::1', '[fe80::1]', 'My-Host'];
    expect(resolveConfig({ server: { allowed_hosts: names } }).server.allowed_hosts).toEqual(names);
    const err = thrownBy(() =>
      resolveConfig({ server: { allowed_hosts: ['ok.example', 'evil.example:80', '*.example', 'a b', 'cafe:80'] } }),
    );
    expect(err.code).toBe('E_INVALID_ARGS');
    const words =
      'must be a host name or IP address without port or wildcard (`finger.example.lan`, `10.0.0.5`, `::1`)';
    expect(err.details).toEqual({
      source: 'config.json',
      issues: [
        { path: '$.server.allowed_hosts[1]', message: words },
        { path: '$.server.allowed_hosts[2]', message: words },
        { path: '$.server.allowed_hosts[3]', message: words },
        { path: '$.server.allowed_hosts[4]', message: words },
      ],
    });
    expect(thrownBy(() => resolveConfig({ server: { allowed_hosts: 'localhost' } })).details).toEqual({
      source: 'config.json',
      issues: [{ path: '$.server.allowed_hosts', message: 'must be array' }],
    });
  });

  it('rejects unknown keys at every level and lists every issue', () => {
    const err = thrownBy(() => resolveConfig({ sever: {}, ws: { max_buffered_event: 5 }, log: { level: 'loud' } }));
    expect(err.code).toBe('E_INVALID_ARGS');
    const issues = (err.details as { issues: { path: string; message: string }[] }).issues;
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: '$.sever', message: 'is not an allowed key' },
        { path: '$.ws.max_buffered_event', message: 'is not an allowed key' },
        expect.objectContaining({ path: '$.log.level' }),
      ]),
    );
    expect(issues).toHaveLength(3);
  });

  it('rejects a bad env value naming the variable', () => {
    const err = thrownBy(() => resolveConfig({}, { FINGER_PORT: '80a' }));
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.message).toContain('env: FINGER_PORT must be an integer');
    const err2 = thrownBy(() => resolveConfig({}, { FINGER_PORT: '70000' }));
    expect(err2.message).toContain('env: FINGER_PORT must be <= 65535');
    const err3 = thrownBy(() => resolveConfig({}, { FINGER_LOG_LEVEL: 'loud' }));
    expect(err3.message).toContain('FINGER_LOG_LEVEL must be one of');
  });

  it('names the variable of a bad NATS URL, cluster or model provider, and says what a good one looks like', () => {
    const nats = thrownBy(() => resolveConfig({}, { FINGER_NATS_URL: 'http://x:4222' }));
    expect(nats.code).toBe('E_INVALID_ARGS');
    expect(nats.message).toBe(
      'invalid configuration: env: FINGER_NATS_URL must be a nats://, tls://, ws:// or wss:// URL (several: comma-separated)',
    );
    const cluster = thrownBy(() => resolveConfig({}, { FINGER_CLUSTER: 'My.Team' }));
    expect(cluster.code).toBe('E_INVALID_ARGS');
    expect(cluster.message).toMatch(/^invalid configuration: env: FINGER_CLUSTER must be 1–64 characters: lower-case/);
    const provider = thrownBy(() => resolveConfig({}, { FINGER_LLM_PROVIDER: 'foo' }));
    expect(provider.code).toBe('E_INVALID_ARGS');
    expect(provider.message).toContain('env: FINGER_LLM_PROVIDER must be one of');
    // the file's value is named by its path, in the same words
    const file = thrownBy(() => resolveConfig({ cluster: 'a.b' }));
    expect(file.message).toMatch(/^invalid configuration: config\.json: \$\.cluster must be 1–64 characters/);
  });
});

describe('resolveConfig: redis.url', () => {
  const FORM = 'expected redis://[user:pass@]host[:port][/db] (or rediss:// for TLS)';

  it('rejects a malformed redis.url (port notaport: ioredis used db NaN on 6379) naming the key, E_INVALID_ARGS', () => {
    const err = thrownBy(() => resolveConfig({ redis: { url: 'redis://:pw@127.0.0.1:notaport' } }));
    expect({ code: err.code, message: err.message, details: err.details }).toEqual({
      code: 'E_INVALID_ARGS',
      message: `invalid configuration: config.json: $.redis.url is not a valid Redis URL: the port "notaport" is not a number from 1 to 65535; ${FORM}`,
      details: {
        source: 'config.json',
        issues: [
          {
            path: '$.redis.url',
            message: `is not a valid Redis URL: the port "notaport" is not a number from 1 to 65535; ${FORM}`,
          },
        ],
      },
    });
    expect(err.message).not.toContain('pw');
    const env = thrownBy(() => resolveConfig({}, { FINGER_REDIS_URL: 'redis://127.0.0.1:6379/db1' }));
    expect({ code: env.code, message: env.message }).toEqual({
      code: 'E_INVALID_ARGS',
      message: `invalid configuration: env: FINGER_REDIS_URL is not a valid Redis URL: the path "/db1" is not a database index /N (a non-negative integer); ${FORM}`,
    });
    const over = thrownBy(() => resolveConfig({}, {}, { redis: { url: 'redis://127.0.0.1:0' } }));
    expect(over.code).toBe('E_INVALID_ARGS');
    expect(over.message).toContain('overrides: $.redis.url is not a valid Redis URL: the port "0"');
  });

  it('takes nats.url as NATS URLs, comma-separated, each with its scheme; anything else is E_INVALID_ARGS', () => {
    const key = 'k'.repeat(16);
    expect(resolveConfig({ nats: { url: 'nats://a:4222, tls://b:4222', cluster_key: key } }).nats.url).toBe(
      'nats://a:4222, tls://b:4222',
    );
    for (const url of ['http://127.0.0.1:4222', 'nats://a:4222,http://b:4222', 'nats://'])
      expect(thrownBy(() => resolveConfig({ nats: { url, cluster_key: key } })).code).toBe('E_INVALID_ARGS');
    // a ms duration past what a timer can wait (it would fire at once, in a loop)
    expect(thrownBy(() => resolveConfig({ nats: { heartbeat_ms: 99_999_999_999 } })).message).toContain(
      '$.nats.heartbeat_ms',
    );
  });

  it('accepts redis:// and rediss:// with credentials, a port and a database index', () => {
    expect(resolveConfig({ redis: { url: 'rediss://u:p@redis.example:6380/2' } }).redis).toEqual({
      url: 'rediss://u:p@redis.example:6380/2',
    });
    expect(resolveConfig({}, { FINGER_REDIS_URL: 'redis://127.0.0.1' }).redis).toEqual({ url: 'redis://127.0.0.1' });
  });
});

describe('config.example.json', () => {
  it('ships with the package, equals exampleConfig() and is valid', async () => {
    const shipped = JSON.parse(await readFile(new URL('../config/config.example.json', import.meta.url), 'utf8'));
    expect(shipped).toEqual(exampleConfig());
    expect(() => resolveConfig(shipped)).not.toThrow();
  });
});

describe('resolveHome', () => {
  it('prefers the option, then FINGER_HOME, then ~/.finger', () => {
    expect(resolveHome('/x/y', { FINGER_HOME: '/env' })).toBe('/x/y');
    expect(resolveHome(undefined, { FINGER_HOME: '/env' })).toBe('/env');
    expect(resolveHome(undefined, {})).toBe(join(homedir(), '.finger'));
  });
});

describe('build() with config.json', () => {
  const homes: string[] = [];
  afterEach(async () => {
    for (const h of homes.splice(0)) await rm(h, { recursive: true, force: true });
  });

  it('fails start with E_INVALID_ARGS naming the bad key', async () => {
    const home = await tempDir();
    homes.push(home);
    await mkdir(join(home, 'config'), { recursive: true });
    await writeFile(join(home, 'config', 'config.json'), JSON.stringify({ server: { port: 1.5 } }));
    const err = (await build({ home }).catch((e: unknown) => e)) as FingerError;
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.message).toContain('config.json: $.server.port must be integer');
    expect(describeStartError(err)).toContain('config.json: $.server.port must be integer');
  });

  it('fails on invalid JSON', async () => {
    const home = await tempDir();
    homes.push(home);
    await mkdir(join(home, 'config'), { recursive: true });
    await writeFile(join(home, 'config', 'config.json'), '{ "server": ');
    const err = (await build({ home }).catch((e: unknown) => e)) as FingerError;
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.message).toContain('config.json: not valid JSON');
  });

  it('uses the file, env from the options, and writes an example config', async () => {
    const home = await tempDir();
    homes.push(home);
    await mkdir(join(home, 'config'), { recursive: true });
    await writeFile(
      join(home, 'config', 'config.json'),
      JSON.stringify({ server: { port: 0 }, modules: { builtin: false }, ws: { max_buffered_events: 7 } }),
    );
    const app = await build({ home, env: { FINGER_LOG_LEVEL: 'silent', FINGER_HOST: '127.0.0.1' } });
    try {
      expect(app.config.ws.max_buffered_events).toBe(7);
      expect(app.config.log.level).toBe('silent');
      const example = JSON.parse(await readFile(join(home, 'config', 'config.example.json'), 'utf8'));
      expect(resolveConfig(example).server).toEqual(DEFAULT_CONFIG.server);
    } finally {
      await app.close();
    }
  });
});
