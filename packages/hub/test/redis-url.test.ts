// parseRedisUrl: the one reading of `redis.url` (config validation, the daemon's connection, doctor).
import { describe, expect, it } from 'vitest';

import { thrownBy } from '@finger/testkit';

import { parseRedisUrl, redisUrlProblem } from '../src/redis-url.js';

describe('parseRedisUrl', () => {
  it('takes apart host, port, database, credentials and TLS', () => {
    expect(parseRedisUrl('redis://127.0.0.1')).toEqual({ tls: false, host: '127.0.0.1', port: 6379, db: 0 });
    expect(parseRedisUrl('rediss://u:p%40ss@redis.example:6380/3')).toEqual({
      tls: true,
      host: 'redis.example',
      port: 6380,
      db: 3,
      username: 'u',
      password: 'p@ss',
    });
    expect(parseRedisUrl('redis://:secret@[::1]:7000/')).toEqual({
      tls: false,
      host: '::1',
      port: 7000,
      db: 0,
      password: 'secret',
    });
  });

  it('rejects a non-numeric port (ioredis read redis://127.0.0.1:notaport as db NaN on 6379) with E_INVALID_ARGS', () => {
    const err = thrownBy(() => parseRedisUrl('redis://:pw@127.0.0.1:notaport'));
    expect({ code: err.code, message: err.message }).toEqual({
      code: 'E_INVALID_ARGS',
      message:
        'invalid Redis URL: the port "notaport" is not a number from 1 to 65535; expected redis://[user:pass@]host[:port][/db] (or rediss:// for TLS)',
    });
  });

  it('names each kind of malformed URL, never echoing its password', () => {
    expect(
      Object.fromEntries(
        [
          'redis://h:0',
          'redis://h:65536',
          'redis://h:',
          'http://h:6379',
          'redis://:6379',
          'redis://h:6379/db1',
          'redis://h:6379/-1',
          'redis://h:6379/1/2',
          'redis://h:6379/1?tls=true',
          '127.0.0.1:6379',
          'redis://:%zz@h',
        ].map((u) => [u, redisUrlProblem(u)]),
      ),
    ).toEqual({
      'redis://h:0': 'the port "0" is not a number from 1 to 65535',
      'redis://h:65536': 'the port "65536" is not a number from 1 to 65535',
      'redis://h:': 'the port "" is not a number from 1 to 65535',
      'http://h:6379': 'the scheme "http" is not redis or rediss',
      'redis://:6379': 'it names no host',
      'redis://h:6379/db1': 'the path "/db1" is not a database index /N (a non-negative integer)',
      'redis://h:6379/-1': 'the path "/-1" is not a database index /N (a non-negative integer)',
      'redis://h:6379/1/2': 'the path "/1/2" is not a database index /N (a non-negative integer)',
      'redis://h:6379/1?tls=true': 'it has a query or fragment (nothing may follow the database index)',
      '127.0.0.1:6379': 'it is not a URL',
      'redis://:%zz@h': 'the password is not valid percent-encoding',
    });
    expect(redisUrlProblem('redis://h:6379/15')).toBeUndefined();
  });
});
