import { beforeAll, describe, expect, it } from 'vitest';

import type { RiskAssessor } from '@finger/shell-risk';

import { compilePolicy } from '../../src/policy/compile-policy.js';
import { type EffectivePolicy, evaluatePolicy } from '../../src/policy/evaluate-policy.js';
import type { PolicyDocument } from '../../src/policy/policy-types.js';
import { sharedAssessor, tool } from '../engine/helpers.js';

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await sharedAssessor();
});

const HOME = '/home/alice';

function policy(admin: Partial<PolicyDocument> = {}, user: Partial<PolicyDocument> = {}): EffectivePolicy {
  const a = compilePolicy({ version: 1, rules: [], ...admin }, { layer: 'admin', homeDir: HOME, assessor }).policy;
  const u = compilePolicy(
    { version: 1, rules: [], ...user },
    { layer: 'user', homeDir: HOME, assessor, admin: a },
  ).policy;
  return { admin: a, user: u };
}

function shell(p: EffectivePolicy, command: string | string[]) {
  const args = typeof command === 'string' ? { command } : { argv: command };
  return evaluatePolicy(p, { tool_id: 'shell.exec', args, tool: tool('shell.exec') }, assessor.assess(command));
}

const NO_RM_RF = { id: 'no-rm-rf', tool: 'shell.exec', match: { command: 'rm -rf *' }, level: 'DENY' as const };

describe('evaluatePolicy: one admin DENY rule blocks every spelling of rm -rf', () => {
  const spellings: (string | string[])[] = [
    'rm -rf build',
    'rm -fr build',
    'rm -r -f build',
    'rm -R --force build',
    '/bin/rm --recursive --force build',
    'r\\m -rf build',
    "'rm' -rf build",
    '"rm" -rf build',
    "$'\\x72m' -rf build",
    'r\u200bm -rf build',
    'rm -rf "$HOME"',
    'git status && rm -rf ~',
    'cd /tmp && rm -rf x',
    'ls; rm -rf x',
    'sh -c "rm -rf /"',
    'bash -lc "rm -fr ~"',
    'bash -c \'sh -c "rm -rf x"\'',
    'find . -name node_modules | xargs rm -rf',
    'echo x | xargs -0 rm -r -f',
    'find . -exec rm -rf {} \\;',
    '$(echo rm) -rf /',
    '`echo rm` -rf /',
    'sudo rm -rf /',
    'timeout 5 nice -n 10 rm -rf x',
    'env FOO=1 rm -rf x',
    'nohup rm -rf x &',
    'eval "rm -rf x"',
    'echo $(rm -rf x)',
    ['rm', '-rf', 'build'],
    ['bash', '-lc', 'rm -rf ~'],
    ['sudo', '/usr/bin/rm', '-r', '-f', '/'],
  ];
  it.each(spellings.map((s) => [JSON.stringify(s), s]))('%s → DENY', (_label, command) => {
    const v = shell(policy({ rules: [NO_RM_RF] }), command as string | string[]);
    expect(v.level).toBe('DENY');
    expect(v.layer).toBe('permission');
    expect(v.matched_rules).toContainEqual({
      source: 'admin',
      id: 'no-rm-rf',
      level: 'DENY',
      reason: 'admin policy rules[0] matched',
    });
  });

  it.each([['rm build'], ['ls -la'], ['git rm -r --cached x'], ['echo rm -rf']])('%s is not matched', (command) => {
    const v = shell(policy({ rules: [NO_RM_RF] }), command);
    expect(v.matched_rules.map((r) => r.id)).not.toContain('no-rm-rf');
  });
});

describe('evaluatePolicy: the default policy (no rules)', () => {
  it('ls -la via shell.exec → AUTO, decided by the RiskAssessor', () => {
    expect(shell(policy(), 'ls -la')).toEqual({
      level: 'AUTO',
      layer: 'permission',
      matched_rules: [{ source: 'builtin', id: 'risk', level: 'AUTO', reason: 'RiskAssessor: safe: read-only: ls' }],
      reasons: ['AUTO: RiskAssessor: safe: read-only: ls'],
      human_only: false,
    });
  });

  it('git status && rm -rf ~ → APPROVE (dangerous), not AUTO', () => {
    const v = shell(policy(), 'git status && rm -rf ~');
    expect(v.level).toBe('APPROVE');
    expect(v.reasons).toEqual(["APPROVE: RiskAssessor: dangerous: segment 2: rm with -r and -f on '~'"]);
  });

  it('`ls` with `env` set (PATH, LD_PRELOAD…) → CONFIRM: the environment changes what runs', () => {
    const v = evaluatePolicy(
      policy(),
      {
        tool_id: 'shell.exec',
        args: { command: 'ls', env: { PATH: '/tmp/evil', LD_PRELOAD: '/tmp/x.so' } },
        tool: tool('shell.exec'),
      },
      assessor.assess('ls'),
    );
    expect(v.level).toBe('CONFIRM');
    expect(v.matched_rules).toContainEqual({
      source: 'builtin',
      id: 'shell.env',
      level: 'CONFIRM',
      reason: 'the command runs with environment variables set: LD_PRELOAD, PATH',
    });
  });

  it('a moderate command → CONFIRM; an unparseable one → at least CONFIRM', () => {
    expect(shell(policy(), 'npm test').level).toBe('CONFIRM');
    expect(shell(policy(), 'echo "unterminated').level).toBe('CONFIRM');
  });

  it('tool defaults: low → AUTO, medium → NOTIFY, high → CONFIRM; a declared permission; quarantine → CONFIRM', () => {
    const p = policy();
    const ev = (id: string, over = {}) => evaluatePolicy(p, { tool_id: id, args: {}, tool: { ...tool(id), ...over } });
    expect(ev('fs.read')).toMatchObject({ level: 'AUTO', layer: 'default' });
    expect(ev('fs.write')).toMatchObject({ level: 'NOTIFY', layer: 'default' });
    expect(ev('fs.delete')).toMatchObject({ level: 'CONFIRM', layer: 'default' });
    expect(ev('fs.read', { risk_level: 'critical' })).toMatchObject({ level: 'APPROVE' });
    expect(ev('fs.read', { permission: 'CONFIRM' })).toMatchObject({ level: 'CONFIRM', layer: 'default' });
    expect(ev('fs.read', { quarantined: { reason: 'definition changed' } })).toMatchObject({
      level: 'CONFIRM',
      layer: 'permission',
    });
  });
});

describe('evaluatePolicy: allow rules and who may loosen', () => {
  const allowNpmTest = { id: 'npm-test', tool: 'shell.exec', match: { command: 'npm test' }, level: 'AUTO' as const };

  it('an admin exact-shape AUTO rule sets the RiskAssessor aside for exactly that command', () => {
    const p = policy({ rules: [allowNpmTest] });
    const v = shell(p, 'npm test');
    expect(v.level).toBe('AUTO');
    expect(v.reasons).toContain('the RiskAssessor\'s moderate was set aside by the exact-shape admin rule "npm-test"');
    expect(shell(p, 'npm test && rm -rf ~').level).toBe('APPROVE');
    expect(shell(p, 'npm test --watch').level).toBe('CONFIRM');
    expect(shell(p, 'sh -c "npm test"').level).toBe('CONFIRM');
  });

  it('shell.allowed_patterns and blocked_patterns are the same rules', () => {
    const p = policy({ shell: { allowed_patterns: ['npm test'], blocked_patterns: ['git push --force *'] } });
    expect(shell(p, 'npm test').level).toBe('AUTO');
    expect(shell(p, 'git push -f origin main')).toMatchObject({ level: 'DENY' });
    expect(shell(p, 'git push -f origin main').matched_rules).toContainEqual({
      source: 'admin',
      id: 'admin:shell.blocked_patterns[0]',
      level: 'DENY',
      reason: 'admin policy shell.blocked_patterns[0] matched',
    });
  });

  it('a user AUTO rule for `rm -rf *` cannot loosen an admin DENY', () => {
    const p = policy(
      { rules: [NO_RM_RF] },
      { rules: [{ id: 'mine', tool: 'shell.exec', match: { command: 'rm -rf *' }, level: 'AUTO' }] },
    );
    for (const c of ['rm -rf build', 'rm -rf *']) {
      const v = shell(p, c);
      expect(v.level).toBe('DENY');
      expect(v.matched_rules.find((r) => r.id === 'no-rm-rf')).toBeDefined();
    }
  });

  it('a user AUTO rule cannot lower a dangerous command, nor anything when the admin forbids user allow rules', () => {
    const userAllow = {
      rules: [{ id: 'rm-build', tool: 'shell.exec', match: { command: 'rm -rf /' }, level: 'AUTO' as const }],
    };
    expect(shell(policy({}, userAllow), 'rm -rf /').level).toBe('APPROVE');
    const npm = { rules: [{ ...allowNpmTest, id: 'u-npm' }] };
    expect(shell(policy({}, npm), 'npm test').level).toBe('AUTO');
    expect(shell(policy({ defaults: { user_may_allow: false } }, npm), 'npm test').level).toBe('CONFIRM');
  });

  it('a user rule can always tighten', () => {
    const p = policy(
      {},
      { rules: [{ id: 'careful', tool: 'shell.exec', match: { command: 'ls *' }, level: 'CONFIRM' }] },
    );
    expect(shell(p, 'ls -la')).toMatchObject({ level: 'CONFIRM' });
    expect(shell(p, 'ls -la').matched_rules).toContainEqual({
      source: 'user',
      id: 'careful',
      level: 'CONFIRM',
      reason: 'user policy rules[0] matched',
    });
  });

  it('an AUTO rule without a command pattern never lowers a tool default', () => {
    const p = policy({ rules: [{ id: 'auto-del', tool: 'fs.delete', level: 'AUTO' }] });
    expect(evaluatePolicy(p, { tool_id: 'fs.delete', args: { path: 'x' }, tool: tool('fs.delete') }).level).toBe(
      'CONFIRM',
    );
  });
});

describe('evaluatePolicy: argument and path matching', () => {
  const p = () =>
    policy({
      rules: [
        { id: 'ssh', tool: 'fs.*', match: { path: '~/.ssh/**' }, level: 'DENY', human_only: true },
        { id: 'env', tool: 'fs.read', match: { path: '*.env' }, level: 'APPROVE' },
        { id: 'example', tool: 'web.fetch', match: { url: ['https://*.example.com/*', 'http://*'] }, level: 'CONFIRM' },
      ],
      human_only: ['fs.delete'],
    });

  it('matches path globs on the resolved path, and `~`', () => {
    const ev = (path: string, real?: string) =>
      evaluatePolicy(p(), {
        tool_id: 'fs.read',
        args: { path },
        tool: tool('fs.read'),
        base: '/work',
        ...(real !== undefined ? { paths: new Map([['path', [real]]]) } : {}),
      });
    expect(ev('~/.ssh/id_rsa')).toMatchObject({ level: 'DENY', human_only: true });
    expect(ev('/home/alice/.ssh/config')).toMatchObject({ level: 'DENY' });
    // a symlink in the workspace that resolves into ~/.ssh
    expect(ev('innocent.txt', '/home/alice/.ssh/id_rsa')).toMatchObject({ level: 'DENY' });
    expect(ev('config/prod.env')).toMatchObject({ level: 'APPROVE', human_only: false });
    expect(ev('notes.txt')).toMatchObject({ level: 'AUTO', human_only: false });
  });

  it('matches value globs with alternatives, and human_only tool globs', () => {
    const fetch = (url: string) =>
      evaluatePolicy(p(), { tool_id: 'web.fetch', args: { url }, tool: tool('web.fetch') });
    expect(fetch('https://api.example.com/v1').level).toBe('CONFIRM');
    expect(fetch('http://plain.org/').level).toBe('CONFIRM');
    expect(fetch('https://other.org/').level).toBe('NOTIFY');
    expect(evaluatePolicy(p(), { tool_id: 'fs.delete', args: { path: 'x' }, tool: tool('fs.delete') }).human_only).toBe(
      true,
    );
  });
});
