// Issue 23 item 3, the firewall side: a `moderate` shell command whose writes stay in the caller's
// workspace and which needs no network is NOTIFY with `sandbox_profile: 'workspace-write'` where
// that profile is available; everything else keeps its level and says why it may not run there;
// the interceptor hands the profile to the module out of band (by the hub's execution id).

import { mkdirSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import type { RiskAssessor } from '@finger/shell-risk';
import { confinementOf } from '@finger/shell-risk';

import { FirewallEngine } from '../../src/engine/firewall-engine.js';
import { createFirewallInterceptor, type FirewallCall } from '../../src/engine/firewall-interceptor.js';
import { compilePolicy } from '../../src/policy/compile-policy.js';
import type { PolicyDocument } from '../../src/policy/policy-types.js';
import { PathSandbox } from '../../src/sandbox/path-sandbox.js';
import { cleanupsAfterEach, facts, sharedAssessor, tempDir, tool } from '../engine/helpers.js';

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await sharedAssessor();
});
const cleanups = cleanupsAfterEach();

function setup(admin: Partial<PolicyDocument> = {}, workspace = true) {
  const { dir, cleanup } = tempDir('ww');
  cleanups.push(cleanup);
  const ws = path.join(dir, 'ws');
  const homeDir = path.join(dir, 'home');
  mkdirSync(ws);
  mkdirSync(homeDir);
  const a = compilePolicy({ version: 1, rules: [], ...admin }, { layer: 'admin', homeDir, assessor }).policy;
  const u = compilePolicy({ version: 1, rules: [] }, { layer: 'user', homeDir, assessor, admin: a }).policy;
  const engine = new FirewallEngine({
    policy: { current: () => ({ admin: a, user: u }) },
    risk: assessor,
    sandbox: new PathSandbox({ workspaceRoots: [ws], homeDir }),
    ...(workspace ? { workspace_sandbox: { tools: ['shell.exec'] } } : {}),
  });
  const judge = (command: string) => engine.evaluate(facts('shell.exec', { command }), { record: false });
  return { dir, ws, engine, judge };
}

const SANDBOXED = 'runs in the workspace-write sandbox (writes only in the workspace, no network)';

describe('the workspace-write profile in the FirewallEngine', () => {
  it('npm test, make, git add/commit/stash, mkdir/touch/cp/mv/rm and sed -i in the workspace: NOTIFY, naming the profile', () => {
    const { judge } = setup();
    const commands = [
      'npm test',
      'make',
      'git add -A && git commit -m wip',
      'git stash',
      'mkdir -p src/a && touch src/a/b.txt',
      'cp a.txt b.txt',
      'mv b.txt c.txt',
      'rm c.txt',
      "sed -i 's/a/b/' src/x.ts",
    ];
    for (const c of commands) {
      const ev = judge(c);
      expect([c, ev.level, ev.action, ev.sandbox_profile]).toEqual([c, 'NOTIFY', 'notify', 'workspace-write']);
    }
    const ev = judge('npm test');
    expect(ev.matched_rules).toEqual([
      {
        source: 'builtin',
        id: 'risk',
        level: 'NOTIFY',
        reason: `RiskAssessor: moderate: segment 1: npm is not a read-only command; ${SANDBOXED}`,
      },
    ]);
    expect(JSON.parse(JSON.stringify(ev))).toMatchObject({ sandbox_profile: 'workspace-write' });
  });

  it('without the profile (or for another tool) the same command stays CONFIRM and names no profile', () => {
    const ev = setup({}, false).judge('npm test');
    expect([ev.level, ev.sandbox_profile]).toEqual(['CONFIRM', undefined]);
    expect(ev.reasons).toEqual(['CONFIRM: RiskAssessor: moderate: segment 1: npm is not a read-only command']);
  });

  it('what needs the network is held with that reason', () => {
    const { judge } = setup();
    for (const [c, need] of [
      ['npm install', 'needs network: npm install'],
      ['npm ci', 'needs network: npm ci'],
      ['pip install -r requirements.txt', 'needs network: pip install'],
      ['cargo add serde', 'needs network: cargo add'],
      ['git fetch origin', 'needs network: git fetch'],
      ['git push', 'needs network: git push'],
      ['npm publish', 'needs network: npm publish'],
      ['docker ps', 'needs network: docker'],
      ['curl http://127.0.0.1:8080/', 'needs network: curl'],
      ['npm test && git push', 'needs network: git push'],
    ] as const) {
      const ev = judge(c);
      expect([c, ev.level, ev.sandbox_profile, ev.reasons[0]]).toEqual([c, 'CONFIRM', undefined, `CONFIRM: ${need}`]);
      expect(ev.matched_rules[0]).toEqual({
        source: 'builtin',
        id: 'sandbox.needs_network',
        level: 'CONFIRM',
        reason: need,
      });
    }
  });

  it('what cannot be undone inside the workspace is held with its reason: trees removed, untracked files cleaned, work reset', () => {
    const { judge } = setup();
    for (const [c, reason] of [
      [
        'rm -rf old-prototype',
        "rm removes the directory tree 'old-prototype': not undoable (no undo store for its snapshot)",
      ],
      [
        'rm -r build dist',
        "rm removes the directory trees 'build', 'dist': not undoable (no undo store for its snapshot)",
      ],
      ['rm --recursive -f tmp', "rm removes the directory tree 'tmp': not undoable (no undo store for its snapshot)"],
      [
        'find . -name "*.o" -delete',
        'find deletes what it finds under .: not undoable (no undo store for its snapshot)',
      ],
      ['find src -exec rm {} +', 'find deletes what it finds under src: not undoable (it runs rm on what it finds)'],
      ['git clean -fdx', 'git clean deletes untracked files: not undoable (no undo store for its snapshot)'],
      [
        'git reset --hard HEAD~1',
        'git reset --hard discards uncommitted changes: not undoable (it rewrites tracked files in place, which a hard-link snapshot cannot keep)',
      ],
    ] as const) {
      const ev = judge(c);
      expect([c, ev.level, ev.sandbox_profile, ev.matched_rules.find((m) => m.id === 'sandbox.not_undoable')]).toEqual([
        c,
        'CONFIRM',
        undefined,
        {
          source: 'builtin',
          id: 'sandbox.not_undoable',
          level: 'CONFIRM',
          reason: `${reason}, so not run unseen, sandbox or not`,
        },
      ]);
    }
    // a file removed, a dry run: still in the profile
    for (const c of ['rm notes.txt', 'rm -f a.txt b.txt', 'git clean -n'])
      expect([c, judge(c).level]).toEqual([c, 'NOTIFY']);
  });

  it('writes outside the workspace, to a start-up file, a credential read and a write known only at run time are held, each with its reason', () => {
    const { dir, judge } = setup({ readable_paths: ['/'] } as Partial<PolicyDocument>);
    const expectHeld = (c: string, level: string, reason: string) => {
      const ev = judge(c);
      expect([c, ev.level, ev.sandbox_profile, ev.reasons[0]]).toEqual([c, level, undefined, reason]);
    };
    expectHeld(`touch ${dir}/o`, 'CONFIRM', `CONFIRM: writes outside the workspace: "${dir}/o"`);
    expectHeld('cp a.txt ../x', 'CONFIRM', 'CONFIRM: writes outside the workspace: "../x", "../x/a.txt"');
    expectHeld('make -C /etc', 'CONFIRM', 'CONFIRM: writes outside the workspace: "/etc"');
    expectHeld(
      'touch ~/.bashrc',
      'APPROVE',
      "APPROVE: RiskAssessor: dangerous: segment 1: writes the start-up file '~/.bashrc' (bash runs it at every start); segment 1: touch writes to '~/.bashrc' (~/.bashrc)",
    );
    expectHeld(
      'cat ~/.ssh/id_rsa',
      'CONFIRM',
      'CONFIRM: names the credential "~/.ssh/id_rsa": not run unseen, sandbox or not',
    );
    expectHeld(
      'touch $X',
      'CONFIRM',
      'CONFIRM: not confined to the workspace: touch writes "$X", known only at run time',
    );
    expectHeld('rm -rf ~', 'APPROVE', "APPROVE: RiskAssessor: dangerous: segment 1: rm with -r and -f on '~'");
  });

  it('a read outside the workspace held today stays held (the path sandbox), though the risk is lowered', () => {
    const ev = setup().judge('make -f /etc/other.mk');
    expect([ev.level, ev.layer]).toEqual(['CONFIRM', 'path_sandbox']);
  });

  it('an admin rule is never set aside: CONFIRM for make stays CONFIRM (the profile is still named for the run)', () => {
    const { judge } = setup({
      rules: [{ id: 'make-asks', tool: 'shell.exec', match: { command: 'make *' }, level: 'CONFIRM' }],
    });
    const ev = judge('make test');
    expect([ev.level, ev.sandbox_profile]).toEqual(['CONFIRM', 'workspace-write']);
  });
});

describe('confinementOf (pure)', () => {
  it('lists what a command writes: redirections, copy destinations, operands, sed -i files, directory options; after cd both places', () => {
    const c = confinementOf(assessor.assess("cd sub && sed -i 's/a/b/' f.txt > log && mv a b && make -C out"));
    expect(c).toEqual({
      writes: ['log', 'sub/log', 'f.txt', 'sub/f.txt', 'a', 'sub/a', 'b', 'sub/b', 'b/a', 'sub/b/a', 'out', 'sub/out'],
      needs: [],
      destroys: [],
      undoable: [],
    });
  });
});

describe('the interceptor hands the profile over out of band', () => {
  function hubCall(payload: unknown, id = 'exec-1'): FirewallCall {
    return {
      envelope: {
        id,
        request_id: 'r',
        correlation_id: 'c',
        session_id: 's',
        workflow_id: '',
        target: 'shell.exec',
        source: { kind: 'agent', id: 'executor-1', roles: ['agent:executor'] },
        payload,
      },
      resolved: { tool_id: 'shell.exec', tool: tool('shell.exec') },
      direct: false,
    };
  }

  it('assigns the profile by the execution id while the call runs, releases it after; a payload field cannot choose it', async () => {
    const { engine } = setup();
    const log: string[] = [];
    const profiles = new Map<string, string>();
    const intercept = createFirewallInterceptor({
      engine,
      sandboxProfiles: {
        assign: (id, p) => void profiles.set(id, p),
        release: (id) => void profiles.delete(id),
      },
    });
    const seen = (c: FirewallCall) =>
      intercept(c, () => {
        log.push(`${JSON.stringify(c.envelope.payload)} profile=${profiles.get('exec-1') ?? 'default'}`);
        return Promise.resolve('ran');
      });
    await seen(hubCall({ command: 'npm test', sandbox_profile: 'default', sandbox: 'off' }));
    await seen(hubCall({ command: 'ls', sandbox_profile: 'workspace-write' }));
    expect(log).toEqual(['{"command":"npm test"} profile=workspace-write', '{"command":"ls"} profile=default']);
    expect(profiles.size).toBe(0);
  });

  it('without a channel a verdict that names a profile is refused: E_NO_SANDBOX, nothing runs', async () => {
    const { engine } = setup();
    let ran = false;
    const intercept = createFirewallInterceptor({ engine });
    const e = await intercept(hubCall({ command: 'npm test' }), () => {
      ran = true;
      return Promise.resolve();
    }).then(
      () => undefined,
      (x: unknown) => x as { code: string },
    );
    expect([e?.code, ran]).toEqual(['E_NO_SANDBOX', false]);
  });
});
