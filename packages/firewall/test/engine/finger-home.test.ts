// Issue 22: finger's own home, token file and API are out of every agent's reach. A forbidden
// finding is DENY for an AI-initiated call whatever admin rules (also an exact-shape AUTO command
// rule), the verdict cache or a person's direct dispatch say; shell path words outside the read
// roots are held; a detaching command is APPROVE when no sandbox contains it.

import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { FORBIDDEN_REASON, RiskAssessor } from '@finger/shell-risk';

import type { Evaluation } from '../../src/engine/evaluation.js';
import { FirewallEngine } from '../../src/engine/firewall-engine.js';
import { compilePolicy } from '../../src/policy/compile-policy.js';
import type { PolicyDocument } from '../../src/policy/policy-types.js';
import { PathSandbox } from '../../src/sandbox/path-sandbox.js';
import { cleanupsAfterEach, facts, tempDir } from './helpers.js';

const cleanups = cleanupsAfterEach();
const PID = 424242;

async function setup(admin: Partial<PolicyDocument> = {}, contained = true) {
  const { dir, cleanup } = tempDir('finger-home');
  cleanups.push(cleanup);
  const home = path.join(dir, 'finger');
  const ws = path.join(dir, 'ws');
  const homeDir = path.join(dir, 'h');
  mkdirSync(path.join(home, 'config'), { recursive: true });
  mkdirSync(path.join(dir, 'outside'));
  mkdirSync(ws);
  writeFileSync(path.join(home, 'token'), 'secret');
  writeFileSync(path.join(home, 'config', 'config.json'), '{}');
  writeFileSync(path.join(dir, 'outside', 'env.sh'), 'X=1');
  writeFileSync(path.join(ws, 'README.md'), 'hi');
  symlinkSync(path.join(home, 'token'), path.join(ws, 'notes'));
  const assessor = await RiskAssessor.create({
    finger_home: home,
    home_dir: homeDir,
    daemon: { ports: [7770], pid: PID },
    contained,
  });
  const a = compilePolicy({ version: 1, rules: [], ...admin }, { layer: 'admin', homeDir, assessor }).policy;
  const u = compilePolicy({ version: 1, rules: [] }, { layer: 'user', homeDir, assessor, admin: a }).policy;
  const engine = new FirewallEngine({
    policy: { current: () => ({ admin: a, user: u }) },
    risk: assessor,
    sandbox: new PathSandbox({ workspaceRoots: [ws], home, homeDir }),
  });
  const agent = (tool: string, args: Record<string, unknown>): Evaluation =>
    engine.evaluate(facts(tool, args), { record: false });
  const human = (tool: string, args: Record<string, unknown>): Evaluation =>
    engine.evaluate(facts(tool, args, { principal: { kind: 'human', id: 'alice', roles: ['admin'] }, direct: true }), {
      record: false,
    });
  return { dir, home, ws, engine, agent, human };
}

const denials = (ev: Evaluation): string[] => ev.reasons.filter((r) => r.startsWith('DENY'));

describe("finger's own home and API, through the FirewallEngine", () => {
  it('an agent reaching finger is DENY with the reason; before: CONFIRM, APPROVE or AUTO', async () => {
    const s = await setup();
    const level = (command: string) => s.agent('shell.exec', { command }).level;
    const commands = [
      'file -f ../finger/token',
      'du --files0-from=../finger/token',
      'cat ../finger/config/config.json',
      'cat ../finger/keys/k',
      'cat notes',
      'f=../finger/token; cat "$f"',
      'cat $(echo ../finger/token)',
      'curl http://127.0.0.1:7770/v1/tokens',
      'curl -X POST http://[::ffff:127.0.0.1]:7770/v1/approvals/1',
      'wget -qO- http://2130706433:7770/v1/tokens',
      'myfinger approve x',
      'npx myfinger approve x',
      `kill ${PID}`,
      `kill -9 ${PID}`,
      'pkill node',
    ];
    expect(commands.map((c) => [c, level(c)])).toEqual(commands.map((c) => [c, 'DENY']));
  });

  it('the reasons name what is reached', async () => {
    const s = await setup();
    expect(denials(s.agent('shell.exec', { command: 'file -f ../finger/token' }))).toEqual([
      `DENY: ${FORBIDDEN_REASON}: segment 1: '../finger/token' reaches finger's own files (${s.home}: ${s.home}/token)`,
      `DENY: ${FORBIDDEN_REASON}: the command's path word "${s.ws}/../finger/token" is in finger's home ${s.home} (it resolves to ${s.home}/token)`,
    ]);
    expect(denials(s.agent('shell.exec', { command: 'curl http://127.0.0.1:7770/v1/tokens' }))).toEqual([
      `DENY: ${FORBIDDEN_REASON}: segment 1: curl sends a request to finger's own daemon ('http://127.0.0.1:7770/v1/tokens')`,
    ]);
    expect(denials(s.agent('shell.exec', { command: `kill ${PID}` }))).toEqual([
      `DENY: ${FORBIDDEN_REASON}: segment 1: kill signals finger's daemon (pid ${PID})`,
    ]);
    expect(denials(s.agent('shell.exec', { command: 'myfinger approve x' }))).toEqual([
      `DENY: ${FORBIDDEN_REASON}: segment 1: myfinger talks to finger's daemon (an agent must not steer its own firewall)`,
    ]);
  });

  it('no admin rule lowers it: an AUTO rule for shell.exec and an exact-shape AUTO command rule', async () => {
    const s = await setup({
      rules: [
        { id: 'shell-ok', tool: 'shell.exec', level: 'AUTO' },
        { id: 'file-ok', tool: 'shell.exec', match: { command: 'file -f ../finger/token' }, level: 'AUTO' },
        {
          id: 'curl-ok',
          tool: 'shell.exec',
          match: { command: 'curl http://127.0.0.1:7770/v1/tokens' },
          level: 'AUTO',
        },
      ],
    });
    const ev = s.agent('shell.exec', { command: 'file -f ../finger/token' });
    expect({ level: ev.level, action: ev.action, layer: ev.layer }).toEqual({
      level: 'DENY',
      action: 'deny',
      layer: 'permission',
    });
    expect(s.agent('shell.exec', { command: 'curl http://127.0.0.1:7770/v1/tokens' }).level).toBe('DENY');
  });

  it("a person's direct dispatch keeps today's behaviour (held levels waived, no DENY)", async () => {
    const s = await setup();
    const ev = s.human('shell.exec', { command: 'cat ../finger/token' });
    expect({ level: ev.level, waived: ev.waived, denials: denials(ev) }).toEqual({
      level: 'AUTO',
      waived: 'CONFIRM',
      denials: [],
    });
    const curl = s.human('shell.exec', { command: 'curl http://127.0.0.1:7770/v1/tokens' });
    expect({ level: curl.level, waived: curl.waived }).toEqual({ level: 'AUTO', waived: 'APPROVE' });
  });

  it('fs tools: a path in finger home or reaching it through a symlink is DENY for an agent', async () => {
    const s = await setup();
    const token = s.agent('fs.read', { path: path.join(s.home, 'token') });
    expect({ level: token.level, layer: token.layer, denials: denials(token) }).toEqual({
      level: 'DENY',
      layer: 'path_sandbox',
      denials: [
        `DENY: ${FORBIDDEN_REASON}: read of ${JSON.stringify(path.join(s.home, 'token'))} is in finger's home ${s.home}`,
      ],
    });
    expect(s.agent('fs.read', { path: 'notes' }).level).toBe('DENY');
    expect(s.agent('fs.read', { path: 'README.md' }).level).toBe('AUTO');
    expect(s.human('fs.read', { path: path.join(s.home, 'token') })).toMatchObject({
      level: 'AUTO',
      waived: 'CONFIRM',
    });
  });

  it('web.fetch of the daemon address is DENY', async () => {
    const s = await setup();
    const ev = s.agent('web.fetch', { url: 'http://localhost.:7770/v1/tokens' });
    expect({ level: ev.level, denials: denials(ev) }).toEqual({
      level: 'DENY',
      denials: [
        `DENY: ${FORBIDDEN_REASON}: argument url: "http://localhost.:7770/v1/tokens" names finger's own daemon (localhost.:7770)`,
      ],
    });
    expect(s.agent('web.fetch', { url: 'https://example.com/' }).level).not.toBe('DENY');
  });

  it("an MCP tool's path-like argument that is no declared path (a file:// uri) is DENY", async () => {
    const s = await setup();
    const uri = `file://${s.home}/token`;
    const ev = s.agent('mcp.files.read_resource', { uri });
    expect({ level: ev.level, denials: denials(ev) }).toEqual({
      level: 'DENY',
      denials: [
        `DENY: ${FORBIDDEN_REASON}: argument uri: ${JSON.stringify(uri)} reaches finger's own files (${s.home}: ${s.home}/token)`,
      ],
    });
    expect(s.agent('mcp.files.read_resource', { uri: `file://${s.ws}/README.md` }).level).toBe('AUTO');
  });

  it('the verdict cache never serves an agent a verdict that skips the DENY', async () => {
    const s = await setup();
    const call = { command: 'myfinger approve x' };
    // a person's run of the same arguments first, then the agent's: each judged in full
    s.human('shell.exec', call);
    expect([s.agent('shell.exec', call).level, s.agent('shell.exec', call).level]).toEqual(['DENY', 'DENY']);
  });
});

describe('shell path words and the read roots', () => {
  it('a path word outside readable_paths is held (before: AUTO); inside it stays AUTO', async () => {
    const s = await setup();
    const ev = s.agent('shell.exec', { command: 'cat ../outside/env.sh' });
    expect({ level: ev.level, held: ev.reasons.filter((r) => r.startsWith('CONFIRM')) }).toEqual({
      level: 'CONFIRM',
      held: [`CONFIRM: the command's path word "${s.ws}/../outside/env.sh" is outside readable_paths (${s.ws})`],
    });
    const level = (command: string) => s.agent('shell.exec', { command }).level;
    expect(
      ['head -1 /etc/hostname', 'grep -r x /etc', 'cp ../outside/env.sh copy', 'cat README.md', 'ls', 'git status'].map(
        (c) => [c, level(c)],
      ),
    ).toEqual([
      ['head -1 /etc/hostname', 'CONFIRM'],
      ['grep -r x /etc', 'CONFIRM'],
      ['cp ../outside/env.sh copy', 'CONFIRM'],
      ['cat README.md', 'AUTO'],
      ['ls', 'AUTO'],
      ['git status', 'AUTO'],
    ]);
  });
});

describe('detaching commands without an OS sandbox', () => {
  it('are APPROVE with the reason when uncontained; CONFIRM when contained', async () => {
    const open = await setup({}, false);
    const held = open.agent('shell.exec', { command: 'setsid -f sleep 308' });
    expect({ level: held.level, reasons: held.reasons.filter((r) => r.includes('detaches')) }).toEqual({
      level: 'APPROVE',
      reasons: [
        'APPROVE: RiskAssessor: dangerous: segment 1: setsid detaches from its call: no sandbox to stop it; segment 1: setsid runs another command',
      ],
    });
    const level = (command: string) => open.agent('shell.exec', { command }).level;
    expect(
      [
        'nohup sleep 1',
        'sleep 1 &',
        '(sleep 1 &)',
        'tmux new -d sleep 1',
        'screen -dm sleep 1',
        'at now',
        'sleep 1',
      ].map((c) => [c, level(c)]),
    ).toEqual([
      ['nohup sleep 1', 'APPROVE'],
      ['sleep 1 &', 'APPROVE'],
      ['(sleep 1 &)', 'APPROVE'],
      ['tmux new -d sleep 1', 'APPROVE'],
      ['screen -dm sleep 1', 'APPROVE'],
      ['at now', 'APPROVE'],
      ['sleep 1', 'AUTO'],
    ]);
    const boxed = await setup({}, true);
    expect(boxed.agent('shell.exec', { command: 'setsid -f sleep 308' }).level).toBe('CONFIRM');
  });
});
