import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ADMIN_TOKEN, type FakeDaemon, startFakeDaemon } from './fake-daemon.js';
import { TOOLS } from './fake-tools.js';
import { runCli } from './helpers.js';

let fake: FakeDaemon;
let env: Record<string, string>;

beforeAll(async () => {
  fake = await startFakeDaemon();
  env = { FINGER_HOME: fake.home };
});
afterAll(async () => {
  await fake.close();
});

describe('tool list', () => {
  it('prints id, risk, capability, side effects and provider, marking quarantined tools', async () => {
    const r = await runCli(['tool', 'list'], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout.split('\n')).toEqual([
      'ID                                 RISK    CAPABILITY  SIDE_EFFECTS  PROVIDER',
      'fs.write                           medium  L1          yes           fs',
      'fs.read                            low     L0          no            fs',
      'mcp.files.read_file (quarantined)  high    L2          yes           mcp.files',
      '',
    ]);
  });

  it('--role filters through the daemon (agent:<role> accepted) and --json prints the tools', async () => {
    const r = await runCli(['tool', 'list', '--role', 'agent:supervisor', '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ tools: [TOOLS[1]] });
    expect(fake.seen.at(-1)).toMatchObject({ method: 'GET', path: '/v1/tools?role=supervisor' });
    const bad = await runCli(['tool', 'list', '--role', 'root'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('error E_INVALID_ARGS:');
  });
});

describe('tool show', () => {
  it('prints metadata, the provider choice and both schemas', async () => {
    const r = await runCli(['tool', 'show', 'fs.write'], { env });
    expect(r.code).toBe(0);
    const schema = JSON.stringify(TOOLS[0]!.input_schema, null, 2)
      .split('\n')
      .map((l) => `  ${l}`);
    expect(r.stdout.split('\n')).toEqual([
      'fs.write — Write a file in the workspace',
      '  module:        fs (inprocess)',
      '  risk:          medium',
      '  capability:    L1',
      '  side effects:  yes',
      '  idempotent:    no',
      '  timeout:       10000 ms',
      '  context cost:  120 tokens',
      '  provider:      fs',
      '  short name:    write → fs.write (preferred_provider_order; also offered as mcp.files.write)',
      'input schema:',
      ...schema,
      'output schema:',
      '  {',
      '    "type": "object",',
      '    "properties": {',
      '      "bytes": {',
      '        "type": "integer"',
      '      }',
      '    }',
      '  }',
      '',
    ]);
  });

  it('says when a tool has no schemas or is quarantined; an unknown tool exits 5', async () => {
    const r = await runCli(['tool', 'show', 'mcp.files.read_file'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'QUARANTINED: definition changed (re-pin with: myfinger tool trust mcp.files.read_file)',
    );
    expect(r.stdout).toContain('input schema:\n  (none: any arguments)\noutput schema:\n  (none)\n');
    const missing = await runCli(['tool', 'show', 'nope'], { env });
    expect(missing.code).toBe(5);
    expect(missing.stderr).toContain('error E_NO_TARGET: no tool "nope"');
  });
});

describe('tool run', () => {
  it('posts the parsed args and prints the result like send', async () => {
    const r = await runCli(['tool', 'run', 'fs.write', '--args', '{"path":"a.txt","content":"v2"}'], { env });
    expect(r).toEqual({ code: 0, stdout: `${JSON.stringify({ bytes: 2 }, null, 2)}\n`, stderr: '' });
    expect(fake.seen.at(-1)).toEqual({
      method: 'POST',
      path: '/v1/tools/fs.write/run',
      auth: `Bearer ${ADMIN_TOKEN}`,
      body: { args: { path: 'a.txt', content: 'v2' } },
    });
    const read = await runCli(['tool', 'run', 'fs.read', '--timeout-ms', '500', '--request-id', 'r-1'], { env });
    expect(read.stdout).toBe('file text\n');
    expect(fake.seen.at(-1)?.body).toEqual({ args: {}, timeout_ms: 500, request_id: 'r-1' });
  });

  it('bad JSON in --args exits 2 with the position and a caret, without calling the daemon', async () => {
    const before = fake.seen.length;
    const text = '{"path":"a.txt",}';
    const r = await runCli(['tool', 'run', 'fs.write', '--args', text], { env });
    const pos = text.indexOf('}');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `error E_USAGE: --args is not valid JSON at position ${pos}\n  ${text}\n  ${' '.repeat(pos)}^ here\n`,
    );
    const arr = await runCli(['tool', 'run', 'fs.write', '--args', '[1]'], { env });
    expect(arr.code).toBe(2);
    expect(arr.stderr).toContain('--args must be a JSON object, got an array');
    expect(fake.seen.length).toBe(before);
  });

  it('E_INVALID_ARGS from the daemon prints one line per issue and exits 2', async () => {
    const r = await runCli(['tool', 'run', 'fs.write', '--args', '{"content":1}'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'error E_INVALID_ARGS: invalid arguments for fs.write\n  $.path: is required\n  $.content: must be string\n',
    );
    const json = await runCli(['--json', 'tool', 'run', 'fs.write', '--args', '{}'], { env });
    expect(JSON.parse(json.stdout).error.details.issues).toHaveLength(2);
  });
});

describe('tool grant', () => {
  it('grants and revokes, printing what the role now has', async () => {
    const g = await runCli(['tool', 'grant', '--role', 'reviewer', '--tool', 'web.*'], { env });
    expect(g).toEqual({ code: 0, stdout: 'granted web.* to reviewer\nreviewer now has: fs.read, web.*\n', stderr: '' });
    expect(fake.seen.at(-1)).toMatchObject({
      method: 'POST',
      path: '/v1/grants',
      body: { role: 'reviewer', tool: 'web.*' },
    });
    const rv = await runCli(['tool', 'grant', '--role', 'agent:reviewer', '--tool', 'web.*', '--revoke'], { env });
    expect(rv).toEqual({ code: 0, stdout: 'revoked web.* from reviewer\nreviewer now has: fs.read\n', stderr: '' });
    expect(fake.seen.at(-1)).toMatchObject({
      method: 'DELETE',
      path: '/v1/grants',
      body: { role: 'reviewer', tool: 'web.*' },
    });
    const list = await runCli(['tool', 'grants'], { env });
    expect(list.stdout.split('\n')).toEqual([
      'ROLE        TOOLS',
      'supervisor  fs.read',
      'executor    fs.*',
      'reviewer    fs.read',
      '',
    ]);
  });

  it('a bad role exits 2 listing the issue; a missing --tool is a usage error', async () => {
    const bad = await runCli(['tool', 'grant', '--role', 'admin', '--tool', 'x'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('  body.role: must be equal to one of the allowed values');
    const missing = await runCli(['tool', 'grant', '--role', 'executor'], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("required option '--tool <glob>' not specified");
  });
});

describe('undo', () => {
  it('restores the newest backup, or the one named, and prints what was restored', async () => {
    const r = await runCli(['undo'], { env });
    expect(r).toEqual({
      code: 0,
      stdout: 'restored /ws/a.txt (2 bytes) from backup bk-2\nto reverse this undo: myfinger undo bk-3\n',
      stderr: '',
    });
    expect(fake.seen.at(-1)).toMatchObject({ method: 'POST', path: '/v1/undo', body: {} });
    const one = await runCli(['undo', 'bk-1', '--json'], { env });
    expect(JSON.parse(one.stdout)).toEqual({
      restored: { id: 'bk-1', path: '/ws/b.txt', bytes: 0, existed: false, type: 'absent' },
      backup_id: 'bk-3',
    });
    const removed = await runCli(['undo', 'bk-1'], { env });
    expect(removed.stdout.split('\n')[0]).toBe('removed /ws/b.txt: it did not exist before backup bk-1');
    expect(fake.seen.at(-1)?.body).toEqual({ id: 'bk-1' });
    const missing = await runCli(['undo', 'bk-9'], { env });
    expect(missing.code).toBe(5);
  });

  it('--list prints the backups as a table', async () => {
    const r = await runCli(['undo', '--list'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      'ID    TIME                      KIND   SIZE  EXISTED  PATH',
      'bk-2  2026-01-02T03:04:06.000Z  write  2     yes      /ws/a.txt',
      'bk-1  2026-01-02T03:04:05.000Z  write  0     no       /ws/b.txt',
      '',
    ]);
  });
});
