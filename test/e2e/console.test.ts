// `myfinger console` (issue 29) in a real terminal (tmux) against a real daemon: holds appear
// without a key press, answers from the console reach the agent, an edited write is re-evaluated
// before it is sent, halt stops a running `sleep 300`, a viewer sees no answer keys, and at 80×24
// nothing is wider than the terminal. Screens of each view go to test/e2e/console-screens/.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { pidsWith, startTestDaemon, type TestDaemon, waitFor } from '@finger/testkit';

import { ConsolePane, hasTmux } from './console-tmux.js';

const tmux = hasTmux();
// CI (.ci/run) installs tmux and sets FINGER_REQUIRE_SERVICES=1: there a missing tmux fails the suite
if (!tmux && process.env.FINGER_REQUIRE_SERVICES === '1') throw new Error('the console suite needs tmux on the PATH');
if (!tmux)
  console.warn(`\n${'!'.repeat(78)}\n!! SKIPPED: the console suite needs tmux on the PATH\n${'!'.repeat(78)}\n`);

/** Every line of `screen` fits `cols` columns (the console's glyphs are one column wide each). */
function widest(screen: string): number {
  return Math.max(...screen.split('\n').map((l) => [...l].length));
}

describe.runIf(tmux)('myfinger console in tmux against a real daemon', () => {
  let d: TestDaemon;
  let agent: string;
  let viewer: string;
  const panes: ConsolePane[] = [];
  const open = (token: string, extra: Record<string, string> = {}, size?: { cols: number; rows: number }) => {
    const p = ConsolePane.start(
      { FINGER_URL: d.url, FINGER_TOKEN: token, FINGER_HOME: d.home, NO_COLOR: '1', ...extra },
      size ?? {},
    );
    panes.push(p);
    return p;
  };
  /** A call as the agent; resolves with its answer once settled. */
  const call = (tool: string, args: unknown) =>
    d.http('POST', '/v1/input', { text: `/hub target=${tool} ${JSON.stringify(args)}`, session_id: 'console' }, agent);

  beforeAll(async () => {
    d = await startTestDaemon({
      config: {
        log: { level: 'silent' },
        sandbox: { mode: 'off', exempt_modules: [] },
        safety: { halt_grace_ms: 400 },
      },
      prepareHome: async (home) => {
        await mkdir(join(home, 'config'), { recursive: true });
        const policy = {
          version: 1,
          rules: [
            { id: 'writes-asked', tool: 'fs.write', level: 'CONFIRM' },
            { id: 'loud-echo', tool: 'shell.exec', match: { command: 'echo console-approve*' }, level: 'APPROVE' },
          ],
        };
        await writeFile(join(home, 'config', 'admin-policy.json'), JSON.stringify(policy));
      },
    });
    agent = await d.token('agent:executor', 'bot');
    viewer = await d.token('viewer', 'console-viewer');
  });
  afterAll(async () => {
    for (const p of panes) p.close();
    await d?.close();
  });

  it('holds appear unasked; reject, approve (a second key at APPROVE) and an edited write reach the agent; 80×24 fits', async () => {
    const con = open(d.adminToken, { EDITOR: 'sed -i s/hello/bye/' });
    await con.waitFor('live · admin');
    con.save('approvals-empty');

    // a held shell.exec shows up without a key press; Enter shows the detail; r + reason rejects
    const publish = call('shell.exec', { command: 'npm publish' });
    await con.waitFor(/CONFIRM +shell\.exec +agent:bot/);
    con.save('approvals-list');
    const list = con.text();
    expect(widest(list)).toBeLessThanOrEqual(80);
    for (const label of ['[a] approve', '[r] reject', '[e] edit args', '[A] always…', '[q] quit'])
      expect(list).toContain(label);
    con.keys('Enter');
    await con.waitFor('$ npm publish');
    expect(con.text()).toContain('rule:      builtin risk → CONFIRM');
    con.save('approvals-detail');
    con.keys('Enter');
    await con.waitFor('REASON');
    con.keys('r');
    await con.waitFor('reason: ');
    con.type('not from the console');
    con.keys('Enter');
    const rejected = await publish;
    expect([rejected.status, rejected.body.error.code, rejected.body.error.message]).toEqual([
      403,
      'E_REJECTED_BY_HUMAN',
      'not from the console',
    ]);
    await con.waitFor('no calls are held');

    // an APPROVE hold asks for a second key: another key cancels, y approves; the call completes
    const loud = call('shell.exec', { command: 'echo console-approve-me' });
    await con.waitFor(/APPROVE +shell\.exec/);
    con.keys('a');
    await con.waitFor('APPROVE-level hold');
    con.save('approvals-second-key');
    con.keys('n');
    await con.waitFor('not sent');
    con.keys('a');
    await con.waitFor('APPROVE-level hold');
    con.keys('y');
    const approved = await loud;
    expect([approved.status, String(approved.body.result?.stdout).trim()]).toEqual([200, 'console-approve-me']);

    // an edited write: $EDITOR changes the content, the firewall's re-evaluation is shown, y sends it
    const write = call('fs.write', { path: join(d.workspace, 'note.txt'), content: 'hello' });
    await con.waitFor(/CONFIRM +fs\.write/);
    con.keys('e');
    await con.waitFor('re-evaluated: CONFIRM');
    const edited = con.text();
    expect(edited).toContain('"content": "bye"');
    expect(edited).toContain('writes-asked');
    con.save('approvals-edited');
    con.keys('y');
    expect((await write).status).toBe(200);
    expect(await readFile(join(d.workspace, 'note.txt'), 'utf8')).toBe('bye');

    // the other views at 80×24, then a resize, then q quits cleanly
    for (const [key, name, marker] of [
      ['2', 'risk', 'calls per level'],
      ['3', 'activity', 'audit chain'],
      ['4', 'control', 'system: OPEN'],
    ] as const) {
      con.keys(key);
      const screen = await con.waitFor(marker);
      expect(widest(screen)).toBeLessThanOrEqual(80);
      con.save(name);
    }
    con.keys('3');
    await con.waitFor('[/] filter');
    con.keys('/');
    await con.waitFor(/^\/█$/m);
    con.type('REJECT');
    con.keys('Enter');
    await con.waitFor('filter "REJECT"');
    expect(con.text()).toContain('E_REJECTED_BY_HUMAN');
    con.save('activity-filtered');
    // NO_COLOR: no colours (SGR 30–37, 90–97)
    // eslint-disable-next-line no-control-regex
    expect(con.withEscapes()).not.toMatch(/\u001b\[(3|9)[0-7]m/);
    con.resize(60, 20);
    const narrow = await con.until('the narrower screen', (s) => s.split('\n').length === 20 && s.includes('[q] quit'));
    expect(widest(narrow)).toBeLessThanOrEqual(60);
    con.keys('q');
    await con.waitFor('console exited 0');
  });

  it('a viewer token sees no answer keys, and is told so when it presses one', async () => {
    const con = open(viewer);
    await con.waitFor('live · viewer');
    const held = call('fs.write', { path: join(d.workspace, 'viewer.txt'), content: 'x' });
    await con.waitFor(/CONFIRM +fs\.write/);
    const screen = con.text();
    expect(screen).toContain('(read only: viewer token)');
    for (const label of ['[a] approve', '[r] reject', '[e] edit args', '[A] always'])
      expect(screen).not.toContain(label);
    con.save('approvals-viewer');
    con.keys('a');
    await con.waitFor("your token's role (viewer) cannot answer approvals");
    con.keys('4');
    await con.waitFor('system: OPEN');
    expect(con.text()).not.toContain('[H] halt');
    // who it is comes from GET /v1/whoami: the token's name and role, not a probe
    expect(con.text()).toContain('token: console-viewer (viewer)');
    con.keys('H');
    await con.waitFor("your token's role (viewer) cannot halt");
    con.save('control-viewer');
    // the hold is still pending: the viewer answered nothing
    const pending = (await d.http('GET', '/v1/approvals')).body.approvals;
    expect(pending.map((a: any) => a.tool_id)).toEqual(['fs.write']);
    await d.http('POST', `/v1/approvals/${pending[0].id}`, { decision: 'reject' });
    expect((await held).body.error.code).toBe('E_REJECTED_BY_HUMAN');
    con.keys('C-c');
    await con.waitFor(/console exited (0|130)/);
  });

  it('halt from the console stops a running sleep 300 (gone once the halt answered); unlock opens again', async () => {
    const marker = `300.${process.pid}1`;
    const con = open(d.adminToken);
    await con.waitFor('live · admin');
    const sleeping = call('shell.exec', { command: `sleep ${marker}` });
    await waitFor('sleep to run', async () => (pidsWith(marker).length ? true : undefined));
    con.keys('4');
    await con.waitFor('[H] halt everything');
    con.keys('H');
    await con.waitFor('y halts');
    con.save('control-halt-confirm');
    con.keys('y');
    const answer = await sleeping;
    expect([answer.status, answer.body.error.code]).toEqual([423, 'E_HALTED']);
    await con.waitFor(/halted \((graceful|immediate)\)/);
    expect(pidsWith(marker)).toEqual([]);
    await con.waitFor('system: SAFETY_LOCKOUT');
    con.save('control-locked');
    con.keys('U');
    await con.waitFor('y unlocks');
    con.keys('y');
    await con.waitFor('system: OPEN');
    expect((await d.http('GET', '/v1/health')).body.safety.state).toBe('open');
  });
});
