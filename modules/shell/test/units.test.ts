import { describe, expect, it } from 'vitest';

import { assertManifest, createAjv } from '@finger/protocol';

import { buildChildEnv, compileEnvDeny, DEFAULT_ENV_DENY, OutputCap, parseSettings } from '../src/index.js';
import { limitedCommand } from '../src/run-code.js';
import { MANIFEST } from './helpers.js';

describe('manifest', () => {
  it('declares exec and run_code as high-risk L2 tools granted to executors', () => {
    expect(() => assertManifest(MANIFEST)).not.toThrow();
    expect([MANIFEST.id, MANIFEST.kind, MANIFEST.runtime, MANIFEST.grants, MANIFEST.concurrency]).toEqual([
      'shell',
      'tool',
      { type: 'inprocess', entry: './dist/index.js' },
      ['executor'],
      8,
    ]);
    expect(MANIFEST.tools.map((t) => [t.name, t.risk_level, t.capability_level, t.side_effects, t.idempotent])).toEqual(
      [
        ['exec', 'high', 'L2', true, false],
        ['run_code', 'high', 'L2', true, false],
      ],
    );
  });
});

describe('tool schemas', () => {
  const ajv = createAjv();
  const tool = (name: string) => MANIFEST.tools.find((t) => t.name === name)!;

  it('exec input: exactly one of argv and command, no unknown keys', () => {
    const check = ajv.compile(tool('exec').input_schema!);
    expect(
      [{ argv: ['ls'] }, { command: 'ls', cwd: 'x', env: { A: '1' }, timeout_ms: 5, stdin: '' }].map((a) => check(a)),
    ).toEqual([true, true]);
    expect(
      [{}, { argv: ['ls'], command: 'ls' }, { argv: [] }, { command: 'ls', shell: true }].map((a) => check(a)),
    ).toEqual([false, false, false, false]);
  });

  it('run_code input: language and code required', () => {
    const check = ajv.compile(tool('run_code').input_schema!);
    expect([{ language: 'node', code: '' }, { language: 'ruby', code: '' }, { code: '' }].map((a) => check(a))).toEqual(
      [true, false, false],
    );
  });

  it('output schemas accept real results', () => {
    const base = {
      exit_code: 0,
      signal: null,
      timed_out: false,
      cancelled: false,
      stdout: '',
      stderr: '',
      stdout_bytes: 0,
      stderr_bytes: 0,
      truncated: { stdout: false, stderr: false },
      duration_ms: 3,
    };
    expect(ajv.compile(tool('exec').output_schema!)(base)).toBe(true);
    const rc = {
      ...base,
      language: 'python',
      dir: '/w/.finger/run/X',
      files: [{ path: 'a', bytes: 1 }],
      files_truncated: false,
    };
    expect(ajv.compile(tool('run_code').output_schema!)(rc)).toBe(true);
  });
});

describe('OutputCap', () => {
  it('keeps the head, counts every byte, and marks the cut', () => {
    const c = new OutputCap(4);
    c.push(Buffer.from('abc'));
    c.push(Buffer.from('defg'));
    expect(c.finish()).toEqual({
      text: 'abcd\n[finger: output truncated — 7 bytes total, 4 shown]',
      bytes: 7,
      truncated: true,
    });
  });

  it('does not cut a multi-byte character in half', () => {
    const c = new OutputCap(5);
    c.push(Buffer.from('abcdé!')); // é is 2 bytes: bytes 5-6
    expect(c.finish()).toEqual({
      text: 'abcd\n[finger: output truncated — 7 bytes total, 4 shown]',
      bytes: 7,
      truncated: true,
    });
  });

  it('leaves output within the cap untouched', () => {
    const c = new OutputCap(5);
    c.push(Buffer.from('héllo'.slice(0, 4)));
    expect(c.finish()).toEqual({ text: 'héll', bytes: 5, truncated: false });
  });
});

describe('environment scrubbing', () => {
  const deny = compileEnvDeny(DEFAULT_ENV_DENY);

  it('matches the default globs case-insensitively against whole names', () => {
    const denied = [
      'GITHUB_TOKEN',
      'my_api_key',
      'AWS_REGION',
      'X_SECRET',
      'MYSECRETTHING',
      'DB_PASSWORD',
      'FINGER_HOME',
      'SSH_AUTH_SOCK',
      'DATABASE_URL',
      'npm_token',
    ];
    const kept = ['PATH', 'HOME', 'LANG', 'KEYBOARD', 'TOKENIZER_PATH', 'TERM'];
    expect(denied.filter((n) => !deny.denies(n))).toEqual([]);
    expect(kept.filter((n) => deny.denies(n))).toEqual([]);
  });

  it('builds the child env from the base minus denied names plus the requested ones', () => {
    expect(buildChildEnv({ PATH: '/bin', OPENAI_API_KEY: 'k', UNSET: undefined }, deny, { A: '1' })).toEqual({
      PATH: '/bin',
      A: '1',
    });
  });

  it('never inherits BASH_ENV, ENV or CDPATH from the daemon, whatever the deny list', () => {
    expect(
      buildChildEnv(
        { PATH: '/bin', BASH_ENV: '/tmp/x.sh', ENV: '/tmp/x.sh', CDPATH: '/home/u', CDPATHX: 'kept' },
        compileEnvDeny([]),
        undefined,
      ),
    ).toEqual({ PATH: '/bin', CDPATHX: 'kept' });
  });

  it('refuses invalid names and NUL bytes in requested variables', () => {
    try {
      buildChildEnv({}, deny, { 'bad-name': 'x', OK: 'a\0b' });
      throw new Error('expected a throw');
    } catch (e) {
      expect((e as { code: string }).code).toBe('E_INVALID_ARGS');
      expect((e as { details: unknown }).details).toEqual({
        issues: [
          { path: '$.env["bad-name"]', message: 'must be a variable name ([A-Za-z_][A-Za-z0-9_]*)' },
          { path: '$.env.OK', message: 'must not contain a NUL byte' },
        ],
      });
    }
  });
});

describe('settings', () => {
  it('applies every default', () => {
    const s = parseSettings({ home: '/h', workspace_roots: ['/w'], backups_dir: '/b' });
    expect({ ...s, run_code: { ...s.run_code, node: 'x' } }).toEqual({
      workspace_roots: ['/w'],
      default_timeout_ms: 30_000,
      max_timeout_ms: 600_000,
      max_output_bytes: 1_048_576,
      kill_grace_ms: 2000,
      lease_heartbeat_ms: 5000,
      shell: '/bin/sh',
      env_deny: [...DEFAULT_ENV_DENY],
      run_code: {
        cpu_seconds: 10,
        address_space_mib: 512,
        node_address_space_mib: 4096,
        node_heap_mib: 512,
        max_processes: 256,
        max_file_bytes: 16 * 1_048_576,
        python: 'python3',
        node: 'x',
        prlimit: 'prlimit',
        keep_runs: 50,
        max_files_listed: 1000,
      },
    });
    expect(s.run_code.node).toBe(process.execPath);
  });

  it('adds env_deny_extra to the deny list and rejects bad values naming the key', () => {
    expect(parseSettings({ workspace_roots: ['/w'], env_deny_extra: ['MY_*'] }).env_deny).toEqual([
      ...DEFAULT_ENV_DENY,
      'MY_*',
    ]);
    expect(() => parseSettings({})).toThrow('"workspace_roots"');
    expect(() => parseSettings({ workspace_roots: ['rel'] })).toThrow('"workspace_roots"');
    expect(() => parseSettings({ workspace_roots: ['/w'], run_code: { cpu_seconds: 0 } })).toThrow(
      '"run_code.cpu_seconds"',
    );
    expect(() => parseSettings({ workspace_roots: ['/w'], default_timeout_ms: 10, max_timeout_ms: 5 })).toThrow(
      '"default_timeout_ms"',
    );
  });

  it('builds the prlimit command line for each language', () => {
    const rc = parseSettings({ workspace_roots: ['/w'], run_code: { node: '/n' } }).run_code;
    expect(limitedCommand('python', rc)).toEqual([
      'prlimit',
      '--cpu=10:11',
      `--as=${512 * 1_048_576}`,
      '--nproc=256',
      `--fsize=${16 * 1_048_576}`,
      '--core=0',
      '--',
      'python3',
      '-B',
      '-u',
      'main.py',
    ]);
    expect(limitedCommand('node', rc).slice(2)).toEqual([
      `--as=${4096 * 1_048_576}`,
      '--nproc=256',
      `--fsize=${16 * 1_048_576}`,
      '--core=0',
      '--',
      '/n',
      '--max-old-space-size=512',
      'main.mjs',
    ]);
  });
});
