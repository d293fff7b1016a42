import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { freePort } from '@finger/testkit';

import { runCli } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'finger-cli-serve-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SERVE_KEY = 'a'.repeat(64);

describe('module serve errors', () => {
  it('reports its own argument errors with their code and exit 2 (E_INVALID_ARGS), not E_INTERNAL', async () => {
    const r = await runCli(['module', 'serve', join(dir, 'module.json'), '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({
      error: { code: 'E_INVALID_ARGS', message: 'module serve needs --nats <url> (or FINGER_NATS_URL)' },
    });
    expect(r.stderr).toMatch(/^error E_INVALID_ARGS: module serve needs --nats/);
    const missing = await runCli(['module', 'serve', join(dir, 'module.json'), '--nats', 'nats://127.0.0.1:1'], {
      env: { FINGER_SERVE_KEY: SERVE_KEY },
    });
    expect(missing.code).toBe(5);
    expect(missing.stderr).toMatch(/^error E_NOT_FOUND: cannot read .*module\.json/);
    const manifest = join(dir, 'bad.json');
    writeFileSync(manifest, JSON.stringify({ id: 'bad', runtime: { type: 'stdio', command: 'x' } }));
    const invalid = await runCli(['module', 'serve', manifest, '--nats', 'nats://127.0.0.1:1'], {
      env: { FINGER_SERVE_KEY: SERVE_KEY },
    });
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/^error E_INVALID_MANIFEST: /);
    expect(invalid.stderr).toMatch(/\n {2}\$\.runtime\.command: must be array/);
  });

  it('reports an unreachable NATS server as E_STORE_UNAVAILABLE with exit 1', async () => {
    const manifest = join(dir, 'probe.json');
    writeFileSync(join(dir, 'probe.mjs'), 'export default { tools: { ping: () => "pong" } };\n');
    writeFileSync(
      manifest,
      JSON.stringify({
        id: 'probe',
        name: 'Probe',
        version: '1.0.0',
        kind: 'tool',
        runtime: { type: 'inprocess', entry: './probe.mjs' },
        tools: [{ name: 'ping', description: 'answers pong' }],
      }),
    );
    const port = await freePort(); // nothing listens there
    // credentials in the URL stay out of the message
    const url = `nats://someone:hunter2@127.0.0.1:${port}`;
    const r = await runCli(['module', 'serve', manifest, '--nats', url, '--json'], {
      env: { FINGER_SERVE_KEY: SERVE_KEY },
    });
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout).error).toMatchObject({
      code: 'E_STORE_UNAVAILABLE',
      details: { url: `nats://127.0.0.1:${port}` },
    });
    expect(JSON.parse(r.stdout).error.message).toMatch(
      new RegExp(`^cannot connect to NATS at nats://127\\.0\\.0\\.1:${port}: `),
    );
    expect(r.stdout + r.stderr).not.toContain('hunter2');
  });
});
