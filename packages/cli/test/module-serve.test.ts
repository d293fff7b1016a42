import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { serveKeyOf } from '@finger/hub/nats';
import { freePort, startCli } from '@finger/testkit';

import { runCli } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'finger-cli-serve-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CLUSTER_KEY = 'cli-serve-test-cluster-key-0123456789';
const SERVE_KEY = serveKeyOf(CLUSTER_KEY, 'probe');

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

  it('bounds --heartbeat-ms and --drain-ms, says what is wrong with a serve key, and takes a folder', async () => {
    const serve = (args: string[], key = SERVE_KEY) =>
      runCli(['module', 'serve', join(dir, 'module.json'), '--nats', 'nats://127.0.0.1:1', '--json', ...args], {
        env: { FINGER_SERVE_KEY: key },
      });
    const huge = await serve(['--heartbeat-ms', '99999999999']);
    expect(huge.code).toBe(2);
    expect(JSON.parse(huge.stdout).error).toEqual({
      code: 'E_INVALID_ARGS',
      message: '--heartbeat-ms must be a whole number of ms from 100 to 600000, got "99999999999"',
    });
    const drain = await serve(['--drain-ms', '-1']);
    expect(JSON.parse(drain.stdout).error).toMatchObject({ code: 'E_INVALID_ARGS', message: /^--drain-ms must be/ });
    // 0 is a valid drain: past the arguments, the missing module.json is what fails
    expect(JSON.parse((await serve(['--drain-ms', '0'])).stdout).error.code).toBe('E_NOT_FOUND');
    const http = await runCli(
      ['module', 'serve', join(dir, 'module.json'), '--nats', 'http://127.0.0.1:4222', '--json'],
      {
        env: { FINGER_SERVE_KEY: SERVE_KEY },
      },
    );
    expect(JSON.parse(http.stdout).error).toEqual({
      code: 'E_INVALID_ARGS',
      message:
        '--nats takes nats://host:port (or tls://…), comma-separated for several servers; got "http://127.0.0.1:4222"',
    });
    const short = await serve([], 'abc');
    expect(short.code).toBe(2);
    expect(JSON.parse(short.stdout).error).toMatchObject({
      code: 'E_INVALID_ARGS',
      message: /^the serve key: not a serve key \(expected fsk2\.<module>/,
    });
    const old = await serve([], 'a'.repeat(64));
    expect(JSON.parse(old.stdout).error).toMatchObject({
      code: 'E_INVALID_ARGS',
      message:
        /the cluster key itself \(never give it to a serve host\), or a cluster-wide serve key of an earlier finger — serve keys are per module now/,
    });
    // a folder means its module.json (as modules.paths takes it): the manifest is read and checked
    const folder = join(dir, 'folder');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'module.json'), JSON.stringify({ id: 'bad' }));
    const r = await runCli(['module', 'serve', folder, '--nats', 'nats://127.0.0.1:1', '--json'], {
      env: { FINGER_SERVE_KEY: SERVE_KEY },
    });
    expect(JSON.parse(r.stdout).error.code).toBe('E_INVALID_MANIFEST');
  });

  it('reports an unreachable NATS server as E_STORE_UNAVAILABLE with exit 1', async () => {
    const manifest = writeProbe();
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

  it("refuses another module's serve key before reaching NATS (E_INVALID_ARGS, exit 2)", async () => {
    const manifest = writeProbe();
    const port = await freePort();
    const r = await runCli(['module', 'serve', manifest, '--nats', `nats://127.0.0.1:${port}`, '--json'], {
      env: { FINGER_SERVE_KEY: serveKeyOf(CLUSTER_KEY, 'other') },
    });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error).toEqual({
      code: 'E_INVALID_ARGS',
      message:
        "the serve key is for module other, the manifest is module probe: print probe's with `myfinger module serve-key probe` where the cluster key is",
      details: { key_module: 'other', module: 'probe' },
    });
  });
});

describe('module serve-key', () => {
  const keyFile = join(dir, 'cluster.key');
  writeFileSync(keyFile, `${CLUSTER_KEY}\n`);

  it("prints a module's serve key, given its id, module.json or folder", async () => {
    const manifest = writeProbe();
    const byId = await runCli(['module', 'serve-key', 'probe', '--cluster-key-file', keyFile]);
    expect(byId.code).toBe(0);
    expect(byId.stdout.trim()).toBe(SERVE_KEY);
    const byFile = await runCli(['module', 'serve-key', manifest, '--json'], {
      env: { FINGER_CLUSTER_KEY: CLUSTER_KEY },
    });
    expect(JSON.parse(byFile.stdout)).toEqual({ module: 'probe', serve_key: SERVE_KEY });
    const folder = join(dir, 'mcp-folder');
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'module.json'), JSON.stringify({ id: 'mcp.every' }));
    const byFolder = await runCli(['module', 'serve-key', folder, '--cluster-key-file', keyFile]);
    expect(byFolder.stdout.trim()).toBe(serveKeyOf(CLUSTER_KEY, 'mcp.every'));
    // an id that is also the name of something here that is no manifest: the id
    const cwd = join(dir, 'cwd');
    mkdirSync(join(cwd, 'web'), { recursive: true });
    writeFileSync(join(cwd, 'probe'), ''); // `serve-key probe > probe` makes the file first
    for (const id of ['probe', 'web']) {
      const r = await startCli(['module', 'serve-key', id, '--cluster-key-file', keyFile], {}, { cwd }).done;
      expect([r.code, r.stdout.trim()]).toEqual([0, serveKeyOf(CLUSTER_KEY, id)]);
    }
  });

  it('refuses a missing module, a bad id, an unreadable manifest and a missing cluster key (E_INVALID_ARGS)', async () => {
    const none = await runCli(['module', 'serve-key', '--cluster-key-file', keyFile]);
    expect(none.code).toBe(2);
    const bad = await runCli(['module', 'serve-key', 'Bad Id', '--cluster-key-file', keyFile, '--json']);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).error).toEqual({
      code: 'E_INVALID_ARGS',
      message: '"Bad Id" is not a module id (a-z, 0-9, _ and -, or mcp.<name>) nor a module.json or folder',
    });
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{nope');
    const unreadable = await runCli(['module', 'serve-key', broken, '--cluster-key-file', keyFile, '--json']);
    expect(JSON.parse(unreadable.stdout).error).toMatchObject({
      code: 'E_INVALID_ARGS',
      message: expect.stringMatching(/^cannot read the module id from .*broken\.json: /),
    });
    const short = await runCli(['module', 'serve-key', 'probe', '--json'], { env: { FINGER_CLUSTER_KEY: 'short\n' } });
    expect(JSON.parse(short.stdout).error).toEqual({
      code: 'E_INVALID_ARGS',
      message: 'FINGER_CLUSTER_KEY is too short (5 characters; a cluster key has at least 16, as nats.cluster_key)',
    });
    const trimmed = await runCli(['module', 'serve-key', 'probe'], { env: { FINGER_CLUSTER_KEY: `${CLUSTER_KEY}\n` } });
    expect(trimmed.stdout.trim()).toBe(SERVE_KEY);
    const nokey = await runCli(['module', 'serve-key', 'probe', '--json'], { env: {} });
    expect(JSON.parse(nokey.stdout).error).toEqual({
      code: 'E_INVALID_ARGS',
      message: 'serve-key needs --cluster-key-file or FINGER_CLUSTER_KEY',
    });
  });
});

/** The probe module (an in-process `ping`) in `dir`: its module.json. */
function writeProbe(): string {
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
  return manifest;
}
