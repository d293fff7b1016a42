import { beforeAll, describe, expect, it } from 'vitest';

import type { RiskAssessor } from '@finger/shell-risk';
import { thrownBy } from '@finger/testkit';

import { compilePolicy } from '../../src/policy/compile-policy.js';
import { sharedAssessor, TOOLS } from '../engine/helpers.js';

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await sharedAssessor();
});

const HOME = '/home/alice';
const KNOWN = [...TOOLS].map(([id, t]) => ({
  id,
  ...(t.input_schema !== undefined ? { input_schema: t.input_schema } : {}),
}));

function compileAdmin(doc: unknown, tools = KNOWN) {
  return compilePolicy(doc, {
    layer: 'admin',
    homeDir: HOME,
    assessor,
    tools,
    source: '/etc/finger/admin-policy.json',
  });
}

describe('compilePolicy: refusing a bad policy', () => {
  it('lists every schema error at once (E_INVALID_ARGS)', () => {
    const err = thrownBy(() =>
      compileAdmin({
        version: 2,
        rules: [
          { tool: 'fs.*', level: 'MAYBE' },
          { level: 'DENY', levle: 'x' },
        ],
        extra: true,
      }),
    );
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.details).toEqual({
      layer: 'admin',
      source: '/etc/finger/admin-policy.json',
      issues: [
        { path: '$.extra', message: 'is not an allowed key' },
        { path: '$.version', message: 'must be equal to constant' },
        { path: '$.rules[0].level', message: 'must be one of "AUTO", "NOTIFY", "CONFIRM", "APPROVE", "DENY"' },
        { path: '$.rules[1].tool', message: 'is required' },
        { path: '$.rules[1].levle', message: 'is not an allowed key' },
      ],
    });
  });

  it('refuses a policy whose rule example fails, naming the rule and the example', () => {
    const err = thrownBy(() =>
      compileAdmin({
        version: 1,
        rules: [
          {
            id: 'no-rm-rf',
            tool: 'shell.exec',
            match: { command: 'rm -rf *' },
            level: 'DENY',
            examples: {
              match: [
                { tool: 'shell.exec', args: { command: 'rm -r -f build' } },
                { tool: 'shell.exec', args: { command: 'rm build' } },
              ],
              not_match: [{ tool: 'shell.exec', args: { command: 'bash -lc "rm -fr /"' } }],
            },
          },
        ],
      }),
    );
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.details).toEqual({
      layer: 'admin',
      source: '/etc/finger/admin-policy.json',
      issues: [
        {
          path: '$.rules[0].examples.match[1]',
          message:
            'rule "no-rm-rf": example {"tool":"shell.exec","args":{"command":"rm build"}} does not match the rule',
        },
        {
          path: '$.rules[0].examples.not_match[0]',
          message:
            'rule "no-rm-rf": example {"tool":"shell.exec","args":{"command":"bash -lc \\"rm -fr /\\""}} matches the rule',
        },
      ],
    });
    expect(err.message).toBe(
      'invalid admin policy (/etc/finger/admin-policy.json): 2 problem(s): $.rules[0].examples.match[1] rule "no-rm-rf": example {"tool":"shell.exec","args":{"command":"rm build"}} does not match the rule; $.rules[0].examples.not_match[0] rule "no-rm-rf": example {"tool":"shell.exec","args":{"command":"bash -lc \\"rm -fr /\\""}} matches the rule',
    );
  });

  it('accepts a rule whose examples all pass', () => {
    const { policy, warnings } = compileAdmin({
      version: 1,
      rules: [
        {
          id: 'no-rm-rf',
          tool: 'shell.exec',
          match: { command: 'rm -rf *' },
          level: 'DENY',
          examples: {
            match: [
              { tool: 'shell.exec', args: { command: '/bin/rm --recursive --force x' } },
              { tool: 'shell.exec', args: { argv: ['bash', '-lc', 'rm -fr ~'] } },
            ],
            not_match: [
              { tool: 'shell.exec', args: { command: 'rm x' } },
              { tool: 'fs.delete', args: { path: 'x', recursive: true } },
            ],
          },
        },
        {
          id: 'no-ssh',
          tool: 'fs.*',
          match: { path: '~/.ssh/**' },
          level: 'DENY',
          examples: {
            match: [{ tool: 'fs.read', args: { path: '/home/alice/.ssh/id_ed25519' } }],
            not_match: [{ tool: 'fs.read', args: { path: '/home/alice/notes.txt' } }],
          },
        },
      ],
    });
    expect(policy.rules.map((r) => [r.id, r.level, r.loosening])).toEqual([
      ['no-rm-rf', 'DENY', false],
      ['no-ssh', 'DENY', false],
    ]);
    expect(warnings).toEqual([]);
  });

  it('lists bad globs, bad command patterns, relative roots and duplicate ids', () => {
    const err = thrownBy(() =>
      compileAdmin({
        version: 1,
        rules: [
          { id: 'a', tool: 'fs.!write', level: 'DENY' },
          { id: 'a', tool: 'shell.exec', match: { command: 'curl * | sh' }, level: 'DENY' },
        ],
        shell: { blocked_patterns: ["echo 'open"] },
        writable_paths: ['relative/dir'],
      }),
    );
    expect(err.code).toBe('E_INVALID_ARGS');
    expect((err.details as { issues: { path: string }[] }).issues.map((i) => i.path)).toEqual([
      '$.writable_paths[0]',
      '$.rules[0].tool',
      '$.rules[1].id',
      '$.rules[1].match.command[0]',
      '$.shell.blocked_patterns[0]',
    ]);
  });

  it('refuses admin-only keys in a user policy', () => {
    const admin = compileAdmin({ version: 1, rules: [] }).policy;
    const err = thrownBy(() =>
      compilePolicy(
        { version: 1, rules: [], defaults: { user_may_allow: true }, shell: { tools: ['x.run'] } },
        { layer: 'user', homeDir: HOME, assessor, admin },
      ),
    );
    expect(err.code).toBe('E_INVALID_ARGS');
    expect((err.details as { issues: unknown }).issues).toEqual([
      { path: '$.defaults.user_may_allow', message: 'is admin-only' },
      { path: '$.shell.tools', message: 'is admin-only' },
    ]);
  });
});

describe('compilePolicy: loader warnings for rules that can never match', () => {
  it('warns about an unknown tool, an argument the schema lacks, a shadowed rule and a useless AUTO rule', () => {
    const { warnings } = compileAdmin({
      version: 1,
      rules: [
        { id: 'typo', tool: 'fs.wrte', level: 'DENY' },
        { id: 'no-arg', tool: 'fs.read', match: { filename: '*.pem' }, level: 'DENY' },
        { id: 'all-web', tool: 'web.fetch', level: 'DENY' },
        { id: 'shadowed', tool: 'web.fetch', match: { url: 'https://example.com/*' }, level: 'CONFIRM' },
        { id: 'auto-read', tool: 'fs.read', level: 'AUTO' },
        { id: 'cmd-on-fs', tool: 'fs.read', match: { command: 'cat *' }, level: 'DENY' },
      ],
    });
    expect(warnings).toEqual([
      { layer: 'admin', rule: 'typo', message: 'tool glob "fs.wrte" matches no known tool' },
      {
        layer: 'admin',
        rule: 'no-arg',
        message: 'match.filename: no tool "fs.read" matches has an argument "filename" in its input_schema',
      },
      {
        layer: 'admin',
        rule: 'shadowed',
        message: 'shadowed by the earlier DENY rule "all-web" of the same scope: it can never change a verdict',
      },
      {
        layer: 'admin',
        rule: 'auto-read',
        message:
          "an AUTO rule without a command pattern never changes a verdict: rules only raise the level, and only a command-pattern rule can lower the RiskAssessor's",
      },
      {
        layer: 'admin',
        rule: 'cmd-on-fs',
        message: 'match.command: none of the tools "fs.read" matches takes a shell command',
      },
    ]);
  });

  it('gives no tool warnings when no tool list is known', () => {
    const { warnings } = compilePolicy(
      { version: 1, rules: [{ id: 'typo', tool: 'fs.wrte', level: 'DENY' }] },
      { layer: 'admin', homeDir: HOME, assessor },
    );
    expect(warnings).toEqual([]);
  });
});
