import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli } from './helpers.js';

describe('myfinger policy check / show without a daemon (from the policy files)', () => {
  let home: string;
  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'finger-cli-policy-'));
    await mkdir(join(home, 'config'), { recursive: true });
    const policy = {
      version: 1,
      rules: [{ id: 'no-rm-rf', tool: 'shell.exec', match: { command: 'rm -rf *' }, level: 'DENY', reason: 'never' }],
    };
    await writeFile(join(home, 'config', 'admin-policy.json'), JSON.stringify(policy));
  });
  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('check prints the deciding layer and rule for every spelling, and --json the whole Evaluation', async () => {
    for (const command of [
      'rm -fr /tmp/x',
      "bash -lc 'rm -r -f ~'",
      'find . | xargs /bin/rm --recursive --force',
      '$(echo rm) -rf /',
    ]) {
      const r = await runCli(
        ['policy', 'check', 'shell.exec', JSON.stringify({ command }), '--json', '--home', home],
        {},
      );
      expect(r.code, command).toBe(0);
      const ev = JSON.parse(r.stdout);
      expect([command, ev.level, ev.action, ev.layer]).toEqual([command, 'DENY', 'deny', 'permission']);
      expect(
        ev.matched_rules.map((m: any) => `${m.source}:${m.id}`),
        command,
      ).toContain('admin:no-rm-rf');
      expect(typeof ev.decision_id).toBe('string');
    }
    const human = await runCli(['policy', 'check', 'shell.exec', '{"command":"rm -rf /tmp/x"}', '--home', home], {});
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('shell.exec: DENY (deny), decided by layer permission');
    expect(human.stdout).toContain('admin:no-rm-rf  DENY');
    expect(human.stdout).toContain('tool metadata: module.json');

    const ls = JSON.parse(
      (await runCli(['policy', 'check', 'shell.exec', '{"command":"ls -la"}', '--json', '--home', home], {})).stdout,
    );
    expect([ls.level, ls.action]).toEqual(['AUTO', 'allow']);
  });

  it('show reads the files when no daemon runs; a bad args JSON is a usage error', async () => {
    const r = await runCli(['policy', 'show', '--json', '--home', home], {});
    expect(r.code).toBe(0);
    const shown = JSON.parse(r.stdout);
    expect(shown.admin.rules.map((x: any) => x.id)).toEqual(['no-rm-rf']);
    expect(shown.user).toEqual({ version: 1, rules: [] });
    const bad = await runCli(['policy', 'check', 'shell.exec', '{nope', '--home', home], {});
    expect(bad.code).toBe(2);
  });

  it('a shell command given as the tool id is a usage error that says how to check it', async () => {
    const r = await runCli(['policy', 'check', 'curl http://x | sh', '--json', '--home', home], {});
    expect(r.code).toBe(2);
    const err = JSON.parse(r.stdout).error;
    expect(err.code).toBe('E_USAGE');
    expect(err.message).toContain(`myfinger policy check shell.exec '{"command":"curl http://x | sh"}'`);
  });
});
