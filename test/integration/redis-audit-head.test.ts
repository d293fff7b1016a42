// The audit head kept in Redis (real redis-server): a log rolled back together with its
// state/audit-head.json still refuses the daemon start, because the head in Redis is ahead of
// both; `audit acknowledge` supersedes it and resets it with the file.
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { build, type FingerApp } from '@finger/daemon';
import { auditHeadId } from '@finger/hub/redis';
import { isFingerError } from '@finger/protocol';
import { type TempDir, tempDir, testClusterName } from '@finger/testkit';
import { redisUrlForTests } from '@finger/testkit';

import { run } from '../../packages/cli/src/main.js';
import { httpCall } from './redis-helpers.js';

const url = await redisUrlForTests();
const SEGMENT = 'audit-0000000001.jsonl';

describe.skipIf(!url)('the audit head in Redis catches a log and state file rolled back together', () => {
  const cluster = testClusterName('audithead');
  let home: TempDir;
  let raw: Redis;
  let key: string;

  beforeAll(async () => {
    raw = new Redis(url!);
    home = await tempDir('finger-audit-head-redis-');
    // in config.json, so the offline CLI sees the same Redis as the daemon
    await mkdir(join(home.path, 'config'), { recursive: true });
    await writeFile(
      join(home.path, 'config', 'config.json'),
      JSON.stringify({
        server: { host: '127.0.0.1', port: 0 },
        log: { level: 'silent' },
        modules: { builtin: false },
        redis: { url },
        cluster,
      }),
    );
    key = `finger:${cluster}:audit:head:${auditHeadId(join(home.path, 'audit'))}`;
  });
  afterAll(async () => {
    const keys = await raw.keys(`finger:${cluster}:*`);
    if (keys.length > 0) await raw.del(...keys);
    raw.disconnect();
    await home?.remove();
  });

  /** Starts the daemon on the home, makes one audited change, stops it; the head it left. */
  async function runOnce(tool: string): Promise<{ seq: number; hash: string }> {
    const app: FingerApp = await build({ home: home.path, env: {} });
    try {
      const { url: base } = await app.listen();
      const token = (await readFile(join(home.path, 'token'), 'utf8')).trim();
      expect((await httpCall({ url: base, token }, 'POST', '/v1/grants', { role: 'executor', tool })).status).toBe(201);
      return (await httpCall<{ head: { seq: number; hash: string } }>({ url: base, token }, 'GET', '/v1/audit')).body
        .head;
    } finally {
      await app.close();
    }
  }

  async function refusal(): Promise<{ code: string; details: any }> {
    try {
      const app = await build({ home: home.path, env: {} });
      await app.close();
    } catch (e) {
      if (isFingerError(e)) return { code: e.code, details: e.details };
      throw e;
    }
    throw new Error('the daemon started');
  }

  it('keeps the head under <prefix>audit:head:<host>:<dir digest>; a rollback of both files is refused with E_AUDIT_BROKEN', async () => {
    await runOnce('one.*');
    const snapshot = join(home.path, 'snapshot');
    await mkdir(snapshot);
    await copyFile(join(home.path, 'audit', SEGMENT), join(snapshot, SEGMENT));
    await copyFile(join(home.path, 'state', 'audit-head.json'), join(snapshot, 'audit-head.json'));
    const old = JSON.parse(await readFile(join(snapshot, 'audit-head.json'), 'utf8'));
    const head = await runOnce('two.*');
    expect(head.seq).toBe(old.seq + 1);
    expect(JSON.parse((await raw.get(key))!)).toEqual({
      seq: head.seq,
      hash: head.hash,
      dir: join(home.path, 'audit'),
      at: expect.any(String),
    });

    await copyFile(join(snapshot, SEGMENT), join(home.path, 'audit', SEGMENT));
    await copyFile(join(snapshot, 'audit-head.json'), join(home.path, 'state', 'audit-head.json'));
    const err = await refusal();
    expect(err).toEqual({
      code: 'E_AUDIT_BROKEN',
      details: {
        dir: join(home.path, 'audit'),
        first_bad: head.seq,
        reason: expect.stringMatching(
          new RegExp(
            `^truncated: 1 entry missing — the log ends at entry ${old.seq} .* but the audit head in Redis \\(`,
          ),
        ),
        source: expect.stringContaining(key),
      },
    });
    // the head in Redis is left as it was
    expect(JSON.parse((await raw.get(key))!)).toMatchObject({ seq: head.seq, hash: head.hash });
  });

  it('audit verify (offline) names the gap from Redis; audit acknowledge supersedes it and the daemon starts', async () => {
    const redisHead = JSON.parse((await raw.get(key))!) as { seq: number; hash: string };
    const cli = async (...argv: string[]) => {
      let stdout = '';
      const code = await run([...argv, '--json', '--home', home.path], {
        env: {},
        stdout: { write: (s: string) => ((stdout += s), true), isTTY: false },
        stderr: { write: () => true, isTTY: false },
      });
      return { code, json: JSON.parse(stdout) };
    };
    expect(await cli('audit', 'verify')).toEqual({
      code: 1,
      json: {
        ok: false,
        entries: redisHead.seq - 1,
        first_bad: redisHead.seq,
        reason: expect.stringContaining(key),
      },
    });
    const ack = await cli('audit', 'acknowledge', '--yes');
    expect(ack.code).toBe(0);
    expect(ack.json.entry.details.previous_heads).toEqual([
      { seq: redisHead.seq - 1, hash: expect.any(String), source: join(home.path, 'state', 'audit-head.json') },
      { seq: redisHead.seq, hash: redisHead.hash, source: expect.stringContaining(key) },
    ]);
    expect(JSON.parse((await raw.get(key))!)).toMatchObject(ack.json.head);
    const head = await runOnce('three.*');
    expect(head.seq).toBe(2);
    expect(JSON.parse((await raw.get(key))!)).toMatchObject(head);
  });
});
