// `myfinger approvals | approve | reject` against a stand-in of the daemon's approval routes and
// event stream (real sockets on 127.0.0.1:0), plus the interactive review with a scripted prompter.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { WebSocketServer } from 'ws';

import { type ApprovalView, describeAnswer, formatApproval } from '../src/approval-views.js';
import { DaemonClient } from '../src/client.js';
import { editArgs, type Prompter, reviewApproval } from '../src/commands/approval-review.js';
import { Output } from '../src/output.js';
import { Capture, runCli } from './helpers.js';

const TOKEN = 'fgr_approvals_test';

function approval(id: string, over: Partial<ApprovalView> = {}): ApprovalView {
  return {
    id,
    tool_id: 'fs.write',
    args: { path: '/etc/motd', content: 'bye' },
    level: 'APPROVE',
    evaluation: {
      level: 'APPROVE',
      layer: 'path_sandbox',
      reasons: ['/etc/motd is outside writable_paths'],
      matched_rules: [{ source: 'admin', id: 'admin#2', level: 'APPROVE', reason: 'writes outside the workspace' }],
      preview: {
        kind: 'diff',
        text: '--- /etc/motd\n+++ /etc/motd\n-hi\n+bye',
        file_sha256: 'e'.repeat(64),
        path: '/etc/motd',
      },
    },
    facts: {
      principal: { kind: 'agent', id: 'exec', roles: ['agent:executor'] },
      session_id: 'sess-1',
      request_id: 'req-1',
      correlation_id: 'corr-1',
    },
    risk: 'APPROVE: held by the path_sandbox layer.',
    human_only: false,
    status: 'waiting',
    created_at: '2026-01-02T03:04:05.000Z',
    expires_at: '2026-01-02T03:09:05.000Z',
    ...over,
  };
}

const A1 = approval('A1');
const A2 = approval('A2', {
  tool_id: 'shell.exec',
  args: { command: 'git push --force' },
  level: 'CONFIRM',
  evaluation: {
    level: 'CONFIRM',
    layer: 'permission',
    reasons: ['git push is moderate'],
    matched_rules: [],
    preview: { kind: 'command', text: 'git push --force', cwd: '/work/repo' },
  },
  facts: {
    principal: { kind: 'agent', id: 'exec', roles: ['agent:executor'] },
    session_id: 'sess-2',
    request_id: 'req-2',
    correlation_id: 'corr-2',
  },
});

interface Fake {
  url: string;
  home: string;
  posts: { id: string; body: Record<string, unknown> }[];
  answered: Set<string>;
  /** Events the stream sends after its two usual ones (other daemons' events in a cluster). */
  extraEvents: Record<string, unknown>[];
  /** What `GET /v1/approvals` lists (its unanswered ones); `[A1]` unless a test says otherwise. */
  listed: ApprovalView[];
  close(): Promise<void>;
}

async function startFake(): Promise<Fake> {
  const home = await mkdtemp(path.join(os.tmpdir(), 'finger-cli-approvals-'));
  const posts: Fake['posts'] = [];
  const answered = new Set<string>();
  const extraEvents: Record<string, unknown>[] = [];
  const listed: ApprovalView[] = [A1];
  const send = (res: http.ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const err = (res: http.ServerResponse, status: number, code: string, message: string) =>
    send(res, status, { error: { code, message } });
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += String(c)));
    req.on('end', () => {
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return err(res, 401, 'E_UNAUTHENTICATED', 'bad token');
      const p = (req.url ?? '').split('?')[0]!;
      if (req.method === 'GET' && p === '/v1/approvals') {
        return send(res, 200, { approvals: listed.filter((a) => !answered.has(a.id)) });
      }
      const m = /^\/v1\/approvals\/([^/]+)$/.exec(p);
      if (req.method === 'POST' && m) {
        const id = decodeURIComponent(m[1]!);
        const body = JSON.parse(text) as Record<string, unknown>;
        posts.push({ id, body });
        if (!['A1', 'A2'].includes(id)) return err(res, 404, 'E_NOT_FOUND', `no pending approval ${id}`);
        if (answered.has(id)) return err(res, 409, 'E_CONFLICT', `approval ${id} was already answered (approve)`);
        const args = body.args as { content?: unknown } | undefined;
        if (args && typeof args.content !== 'string')
          return err(res, 400, 'E_INVALID_ARGS', 'content must be a string');
        const decision = body.decision as string;
        const denied = typeof args?.content === 'string' && args.content.includes('rm -rf');
        const approved = !denied && (decision === 'approve' || decision === 'always');
        answered.add(id);
        return send(res, 200, {
          id,
          decision,
          approved,
          tool_id: id === 'A1' ? 'fs.write' : 'shell.exec',
          edited: args !== undefined,
          session_approval: decision === 'always',
          ...(decision === 'reject' ? { reason: body.reason ?? 'rejected by admin', code: 'E_REJECTED_BY_HUMAN' } : {}),
          ...(denied ? { reason: 'the edited arguments are denied: admin#1', code: 'E_DENIED_BY_POLICY' } : {}),
          ...(decision === 'abort' ? { abort: 'stopping', reason: 'aborted' } : {}),
        });
      }
      return err(res, 404, 'E_NOT_FOUND', 'no route');
    });
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    wss.handleUpgrade(req, socket, head, (ws) => {
      const out = (m: unknown) => ws.send(JSON.stringify(m));
      if (req.headers.authorization !== `Bearer ${TOKEN}`) {
        out({ type: 'error', error: { code: 'E_UNAUTHENTICATED', message: 'bad token' } });
        return ws.close(4401);
      }
      out({ type: 'ready' });
      ws.on('message', (raw) => {
        const msg = JSON.parse(String(raw)) as { op: string; types?: string[] };
        if (msg.op !== 'subscribe') return;
        out({ type: 'subscribed', filter: { types: msg.types } });
        const base = {
          ts: '2026-01-02T03:04:06.000Z',
          workflow_id: '',
          correlation_id: 'corr-2',
          request_id: 'req-2',
          session_id: 'sess-2',
        };
        setTimeout(() => {
          out({
            type: 'event',
            event: {
              ...base,
              id: 'e1',
              type: 'APPROVAL_REQUESTED',
              target: 'shell.exec',
              data: { id: 'A2', approval: A2 },
            },
          });
          out({
            type: 'event',
            event: {
              ...base,
              id: 'e2',
              type: 'APPROVAL_RESOLVED',
              target: 'fs.write',
              data: { id: 'A1', decision: 'approve', approved: true },
            },
          });
          for (const event of extraEvents) out({ type: 'event', event: { ...base, ...event } });
        }, 50);
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await writeFile(path.join(home, 'daemon.json'), JSON.stringify({ pid: process.pid, url }));
  await writeFile(path.join(home, 'token'), `${TOKEN}\n`, { mode: 0o600 });
  return {
    url,
    home,
    posts,
    answered,
    extraEvents,
    listed,
    async close() {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await rm(home, { recursive: true, force: true });
    },
  };
}

let fake: Fake;
let env: Record<string, string>;
beforeAll(async () => {
  fake = await startFake();
  env = { FINGER_HOME: fake.home };
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.posts.length = 0;
  fake.answered.clear();
  fake.extraEvents.length = 0;
  fake.listed.splice(0, fake.listed.length, A1);
});

/**
 * `myfinger approvals --watch [extra]` until `check` (an expectation on the output so far) passes,
 * then stopped as Ctrl-C stops it: the run's promise and the captured output.
 */
async function watchUntil(env: Record<string, string>, extra: string[], check: (out: string) => void) {
  const ac = new AbortController();
  const stdout = new Capture();
  const running = runCli(['approvals', '--watch', ...extra], { env, signal: ac.signal, stdoutCapture: stdout });
  await vi.waitFor(() => check(stdout.text), { timeout: 10_000, interval: 20 });
  ac.abort();
  return { running, stdout };
}

describe('myfinger approvals', () => {
  it('lists pending approvals as a table', async () => {
    const r = await runCli(['approvals'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')).toEqual([
      'ID  LEVEL    TOOL      PRINCIPAL   SESSION  EXPIRES',
      'A1  APPROVE  fs.write  agent:exec  sess-1   2026-01-02T03:09:05.000Z',
      '',
    ]);
  });

  it('--json prints the list; --full prints every approval with its preview', async () => {
    expect(JSON.parse((await runCli(['approvals', '--json'], { env })).stdout)).toEqual({ approvals: [A1] });
    const full = await runCli(['approvals', '--full'], { env });
    expect(full.stdout).toContain('approval A1  APPROVE  fs.write\n');
    expect(full.stdout).toContain('rule:      admin admin#2 → APPROVE (writes outside the workspace)\n');
    expect(full.stdout).toContain(
      `diff of /etc/motd (sha256 eeeeeeeeeeee…):\n--- /etc/motd\n+++ /etc/motd\n-hi\n+bye\n`,
    );
  });

  it('says so when nothing is pending', async () => {
    fake.answered.add('A1');
    expect((await runCli(['approvals'], { env })).stdout).toBe('no pending approvals\n');
  });

  it('--watch (not a terminal) prints what is pending, then each new approval and each resolution', async () => {
    const { running } = await watchUntil(env, [], (out) => expect(out).toContain('resolved A1: approve'));
    const r = await running;
    expect(r.code).toBe(0);
    const blocks = r.stdout.split('\n\n');
    expect(blocks[0]!.split('\n')[0]).toBe('approval A1  APPROVE  fs.write');
    expect(blocks[1]!.split('\n')).toContain('  $ git push --force');
    expect(blocks[1]!.split('\n')).toContain('  cwd: /work/repo');
    expect(blocks[2]).toBe('resolved A1: approve\n');
    expect(r.stderr).toContain('watching for approvals');
  });

  it('--watch --json prints one JSON line per approval and resolution', async () => {
    const { running, stdout } = await watchUntil(env, ['--json'], (out) =>
      expect(out.trim().split('\n')).toHaveLength(3),
    );
    expect((await running).code).toBe(0);
    expect(
      stdout.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual([
      { event: 'APPROVAL_REQUESTED', approval: A1 },
      { event: 'APPROVAL_REQUESTED', approval: A2 },
      { event: 'APPROVAL_RESOLVED', id: 'A1', decision: 'approve', approved: true },
    ]);
  });
});

// What an agent controls (session id, principal, reasons, the command) must never reach the
// terminal as a control: no screen clear, cursor move, carriage return, hyperlink or bidi override.
const HOSTILE_SESSION = 'ansi\u001b[2J\u001b[H\u001b]8;;http://evil/\u0007click\u001b]8;;\u0007';
const HOSTILE_COMMAND = 'rm -rf ~/project \u001b[1A\u001b[2K\r  $ ls -la';
const HOSTILE = approval('H1', {
  tool_id: 'shell.exec',
  args: { command: HOSTILE_COMMAND },
  level: 'CONFIRM',
  evaluation: {
    level: 'CONFIRM',
    layer: 'permission',
    reasons: ['looks\u202e fine\nreason:    approved by policy\u009b2J'],
    matched_rules: [],
    preview: { kind: 'command', text: HOSTILE_COMMAND, cwd: '/work\u0000\u007f' },
  },
  facts: {
    principal: { kind: 'agent', id: 'exec\u202etxt.exe\u2066', roles: ['agent:executor'] },
    session_id: HOSTILE_SESSION,
    request_id: 'req\u200b-9\ufeff',
    correlation_id: 'corr-9',
  },
});
/** ESC, BEL, CR, NUL, DEL, C1 CSI and every bidi/invisible character the approval above carries. */
// eslint-disable-next-line no-control-regex
const FORBIDDEN = /[\u0000\u0007\u001b\r\u007f\u009b\u200b\u202e\u2066\ufeff]/;

describe('terminal safety of what the daemon sends', () => {
  it('the approvals table escapes controls in every cell and keeps one line per approval', async () => {
    fake.listed.splice(0, fake.listed.length, HOSTILE);
    const r = await runCli(['approvals'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(FORBIDDEN);
    const lines = r.stdout.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toContain(
      'agent:exec\\u202etxt.exe\\u2066  ansi\\x1b[2J\\x1b[H\\x1b]8;;http://evil/\\x07click\\x1b]8;;\\x07  2026-01-02T03:09:05.000Z',
    );
    // the header is padded to the escaped width, so the columns stay aligned
    expect(lines[0]!.indexOf('SESSION')).toBe(lines[1]!.indexOf('ansi'));
  });

  it('--full shows the command, reasons and ids escaped: nothing can be forged on a line of its own', async () => {
    fake.listed.splice(0, fake.listed.length, HOSTILE);
    const r = await runCli(['approvals', '--full'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(FORBIDDEN);
    const lines = r.stdout.split('\n');
    expect(lines).toContain('  $ rm -rf ~/project \\x1b[1A\\x1b[2K\\r  $ ls -la');
    expect(lines).toContain('  cwd: /work\\x00\\x7f');
    expect(lines).toContain('reason:    looks\\u202e fine\\nreason:    approved by policy\\u009b2J');
    expect(lines.filter((l) => l.startsWith('reason:'))).toHaveLength(1);
    expect(lines).toContain(
      'principal: agent:exec\\u202etxt.exe\\u2066 (agent:executor)  session: ansi\\x1b[2J\\x1b[H\\x1b]8;;http://evil/\\x07click\\x1b]8;;\\x07  request: req\\u200b-9\\ufeff',
    );
  });

  it('on a colour terminal only the CLI’s own colours are escape sequences', async () => {
    fake.listed.splice(0, fake.listed.length, HOSTILE);
    const r = await runCli(['approvals', '--full'], { env, stdoutCapture: new Capture(true) });
    expect(r.stdout).toContain('\u001b[1mapproval H1\u001b[22m');
    // eslint-disable-next-line no-control-regex
    expect(r.stdout.replace(/\u001b\[\d+m/g, '')).not.toMatch(FORBIDDEN);
    expect(r.stdout).toContain('  $ rm -rf ~/project \\x1b[1A\\x1b[2K\\r  $ ls -la');
  });

  it('--watch prints a new approval escaped', async () => {
    fake.listed.splice(0, fake.listed.length, HOSTILE);
    const { running } = await watchUntil(env, [], (out) => expect(out).toContain('resolved A1: approve'));
    const r = await running;
    expect(r.stdout).toContain('session: ansi\\x1b[2J\\x1b[H');
    expect(r.stdout).not.toMatch(FORBIDDEN);
  });

  it('--json carries the raw values (JSON escapes them), so scripts see exactly what the daemon sent', async () => {
    fake.listed.splice(0, fake.listed.length, HOSTILE);
    const r = await runCli(['approvals', '--json'], { env });
    expect(r.stdout).not.toMatch(FORBIDDEN);
    expect(JSON.parse(r.stdout)).toEqual({ approvals: [HOSTILE] });
  });

  it('an error message from the daemon is escaped on stderr', async () => {
    const r = await runCli(['approve', 'X\u001b[2J\u001b]8;;http://evil/\u0007'], { env });
    expect(r.code).toBe(5);
    expect(r.stderr).toBe('error E_NOT_FOUND: no pending approval X\\x1b[2J\\x1b]8;;http://evil/\\x07\n');
  });
});

describe('myfinger approvals --watch in a cluster', () => {
  // a call held on another daemon arrives as that daemon's event (with `origin`): only it can answer
  const A3 = approval('A3', { tool_id: 'shell.exec', level: 'CONFIRM' });
  const elsewhere = [
    {
      id: 'e3',
      type: 'APPROVAL_REQUESTED',
      target: 'shell.exec',
      origin: 'daemon-b-1-abc',
      data: { id: 'A3', approval: A3 },
    },
    {
      id: 'e4',
      type: 'APPROVAL_RESOLVED',
      target: 'shell.exec',
      origin: 'daemon-b-1-abc',
      data: { id: 'A3', decision: 'reject', approved: false },
    },
  ];

  it('names the daemon that holds a call instead of showing it as pending here', async () => {
    fake.extraEvents.push(...elsewhere);
    const { running } = await watchUntil(env, [], (out) => expect(out).toContain('resolved A3'));
    const r = await running;
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain('approval A3  CONFIRM');
    expect(r.stdout.split('\n')).toContain(
      'approval A3 (CONFIRM shell.exec) is held on daemon-b-1-abc: answer it on that daemon',
    );
    expect(r.stdout.split('\n')).toContain('resolved A3 on daemon-b-1-abc: reject');
  });

  it('--json gives such a call and its resolution the origin', async () => {
    fake.extraEvents.push(...elsewhere);
    const { running, stdout } = await watchUntil(env, ['--json'], (out) =>
      expect(out.trim().split('\n')).toHaveLength(5),
    );
    expect((await running).code).toBe(0);
    const lines = stdout.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as unknown);
    expect(lines.slice(3)).toEqual([
      { event: 'APPROVAL_REQUESTED', origin: 'daemon-b-1-abc', approval: A3 },
      { event: 'APPROVAL_RESOLVED', origin: 'daemon-b-1-abc', id: 'A3', decision: 'reject', approved: false },
    ]);
  });
});

describe('myfinger approve | reject', () => {
  it('approve <id> answers approve', async () => {
    const r = await runCli(['approve', 'A1'], { env });
    expect([r.code, r.stdout]).toEqual([0, 'approved A1 (fs.write)\n']);
    expect(fake.posts).toEqual([{ id: 'A1', body: { decision: 'approve' } }]);
  });

  it('approve --always --args sends always with the edited args', async () => {
    const r = await runCli(['approve', 'A1', '--always', '--args', '{"path":"/etc/motd","content":"ciao"}', '--json'], {
      env,
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: 'A1', approved: true, edited: true, session_approval: true });
    expect(fake.posts).toEqual([
      { id: 'A1', body: { decision: 'always', args: { path: '/etc/motd', content: 'ciao' } } },
    ]);
  });

  it('exit codes: bad --args 2, unknown id 5, already answered 1, edited args denied 8, refused args 2', async () => {
    const usage = await runCli(['approve', 'A1', '--args', '{nope'], { env });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--args is not JSON');
    expect((await runCli(['approve', 'NOPE'], { env })).code).toBe(5);
    fake.answered.add('A2');
    const conflict = await runCli(['approve', 'A2'], { env });
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain('E_CONFLICT');
    const denied = await runCli(['approve', 'A1', '--args', '{"content":"rm -rf /"}'], { env });
    expect([denied.code, denied.stdout]).toEqual([
      8,
      'rejected A1 (fs.write): the edited arguments are denied: admin#1\n',
    ]);
    fake.answered.clear();
    expect((await runCli(['approve', 'A1', '--args', '{"content":3}'], { env })).code).toBe(2);
  });

  it('reject <id> --reason sends the reason', async () => {
    const r = await runCli(['reject', 'A1', '--reason', 'too risky'], { env });
    expect([r.code, r.stdout]).toEqual([0, 'rejected A1 (fs.write): too risky\n']);
    expect(fake.posts).toEqual([{ id: 'A1', body: { decision: 'reject', reason: 'too risky' } }]);
  });
});

/** A prompter that answers from a script and records the questions. */
function scripted(answers: string[]): Prompter & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async question(q) {
      asked.push(q);
      const a = answers.shift();
      if (a === undefined) throw new Error(`unexpected question: ${q}`);
      return a;
    },
  };
}

describe('interactive review', () => {
  const setup = (answers: string[], edits: unknown[] = []) => {
    const stdout = new Capture();
    const out = new Output({ stdout, stderr: new Capture(), env: {} }, false);
    const client = new DaemonClient({ url: fake.url, token: TOKEN });
    const prompter = scripted(answers);
    const deps = { client, out, prompter, editArgs: async () => edits.shift() };
    return { stdout, deps, prompter };
  };

  it('shows the full preview, re-asks on an unknown key, and rejects with the reason typed', async () => {
    const { stdout, deps, prompter } = setup(['z', 'r', 'please do not touch /etc']);
    expect(await reviewApproval(deps, A1)).toBe('answered');
    expect(stdout.text).toContain('+bye\n');
    expect(stdout.text).toContain('unknown key "z"\n');
    expect(stdout.text).toContain('rejected A1 (fs.write): please do not touch /etc\n');
    expect(prompter.asked[0]).toContain("[a]pprove  [r]eject  [R]eject, not the agent's fault  [A]lways (this shape");
    expect(fake.posts).toEqual([{ id: 'A1', body: { decision: 'reject', reason: 'please do not touch /etc' } }]);
  });

  it("[R] rejects as not the agent's fault; [W] answers always for the workspace", async () => {
    const r = setup(['R', 'wrong moment']);
    expect(await reviewApproval(r.deps, A1)).toBe('answered');
    const w = setup(['W']);
    await reviewApproval(w.deps, A1); // the fake answers E_CONFLICT the second time: what was sent is what counts
    expect(fake.posts).toEqual([
      { id: 'A1', body: { decision: 'reject', reason: 'wrong moment', agent_fault: false } },
      { id: 'A1', body: { decision: 'always', scope: 'workspace' } },
    ]);
  });

  it('shows what always would approve from now on, or why it approves once', () => {
    const plainColors = new Output({ stdout: new Capture(), stderr: new Capture(), env: {} }, false).c;
    const offered = formatApproval(
      { ...A1, standing: { offered: true, shape: {}, description: 'shell.exec: npm test …' } },
      plainColors,
    );
    expect(offered).toContain('always:    from now on approves shell.exec: npm test …');
    const once = formatApproval({ ...A1, standing: { offered: false, reason: 'no shape' } }, plainColors);
    expect(once).toContain('always:    no shape');
  });

  it('[e]dit: refused args are reported and asked again; then the edited args are approved', async () => {
    const { stdout, deps } = setup(
      ['e', 'e', 'e'],
      [undefined, { content: 3 }, { path: '/etc/motd', content: 'edited' }],
    );
    expect(await reviewApproval(deps, A1)).toBe('answered');
    expect(stdout.text).toContain('edit cancelled\n');
    expect(stdout.text).toContain('the edited args were refused: content must be a string\n');
    expect(stdout.text).toContain('approved A1 (fs.write) with edited args\n');
    expect(fake.posts.map((p) => p.body)).toEqual([
      { decision: 'approve', args: { content: 3 } },
      { decision: 'approve', args: { path: '/etc/motd', content: 'edited' } },
    ]);
  });

  it('[A]lways, [s]kip, and an approval answered elsewhere', async () => {
    expect(await reviewApproval(setup(['A']).deps, A1)).toBe('answered');
    expect(fake.posts.at(-1)).toEqual({ id: 'A1', body: { decision: 'always' } });
    expect(await reviewApproval(setup(['s']).deps, A2)).toBe('skipped');
    const gone = setup(['a']);
    expect(await reviewApproval(gone.deps, A1)).toBe('gone');
    expect(gone.stdout.text).toContain('A1 is no longer pending');
  });

  it("shows the firewall's command preview once, without a second `$` or cwd line", () => {
    const c = new Output({ stdout: new Capture(), stderr: new Capture(), env: {} }, false).c;
    // as packages/firewall/src/engine/preview.ts words an exec's preview
    const text = '$ touch /tmp/x\ncwd: /w\nruns:\n  1. touch /tmp/x\nrisk: moderate — touch is not read-only';
    const lines = formatApproval(
      { ...A2, evaluation: { ...A2.evaluation, preview: { kind: 'command', text, cwd: '/w' } } },
      c,
    );
    expect(lines.slice(lines.indexOf('command:'))).toEqual([
      'command:',
      '  $ touch /tmp/x',
      '  cwd: /w',
      '  runs:',
      '    1. touch /tmp/x',
      '  risk: moderate — touch is not read-only',
    ]);
  });

  it('describeAnswer words every outcome', () => {
    const base = { id: 'A1', tool_id: 'fs.write', edited: false, session_approval: false };
    expect(describeAnswer({ ...base, decision: 'always', approved: true, session_approval: true })).toBe(
      'approved A1 (fs.write) and for the rest of this session',
    );
    const standing = {
      id: 'S1',
      tool_id: 'fs.write',
      shape: {},
      description: 'fs.write: /w/src/**',
      level: 'CONFIRM',
      principal: 'agent:a',
      scope: 'workspace' as const,
      by: 'admin',
      created_at: 't',
      approval_id: 'A1',
    };
    expect(
      describeAnswer({
        ...base,
        decision: 'always',
        approved: true,
        session_approval: true,
        standing_approval: standing,
      }),
    ).toBe('approved A1 (fs.write) and from now on: fs.write: /w/src/** (workspace, standing approval S1)');
    expect(describeAnswer({ ...base, decision: 'abort', approved: false, abort: 'stopped' })).toBe(
      'aborted the session of A1 (stopped): its pending approvals were rejected',
    );
    const alice = { kind: 'human', id: 'alice', roles: ['operator'] };
    expect(describeAnswer({ ...base, decision: 'approve', approved: true, answered_by: alice })).toBe(
      'approved A1 (fs.write) by alice (operator)',
    );
    expect(describeAnswer({ ...base, decision: 'reject', approved: false, reason: 'no', answered_by: alice })).toBe(
      'rejected A1 (fs.write) by alice (operator): no',
    );
    const c = new Output({ stdout: new Capture(), stderr: new Capture(), env: {} }, false).c;
    expect(
      formatApproval({ ...A1, human_only: true, evaluation: { ...A1.evaluation, preview: undefined } }, c),
    ).toEqual([
      'approval A1  APPROVE  fs.write  human only',
      'principal: agent:exec (agent:executor)  session: sess-1  request: req-1',
      'held by:   path_sandbox  expires: 2026-01-02T03:09:05.000Z',
      'reason:    /etc/motd is outside writable_paths',
      'rule:      admin admin#2 → APPROVE (writes outside the workspace)',
      'args:',
      '  {',
      '    "path": "/etc/motd",',
      '    "content": "bye"',
      '  }',
    ]);
  });
});

describe('editArgs', () => {
  const out = () => new Output({ stdout: new Capture(), stderr: new Capture(), env: {} }, false);

  it('opens $EDITOR on a temp JSON file and reads the result back', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'finger-editor-'));
    try {
      const editor = path.join(dir, 'editor.mjs');
      await writeFile(
        editor,
        "import { readFileSync, writeFileSync } from 'node:fs';\n" +
          'const f = process.argv[2]; const v = JSON.parse(readFileSync(f, "utf8")); v.content = "from editor"; writeFileSync(f, JSON.stringify(v));\n',
      );
      const v = await editArgs(
        { EDITOR: `${JSON.stringify(process.execPath)} ${JSON.stringify(editor)}` },
        { path: '/a', content: 'x' },
        scripted([]),
        out(),
      );
      expect(v).toEqual({ path: '/a', content: 'from editor' });
      expect(await editArgs({ EDITOR: 'false' }, {}, scripted([]), out())).toBeUndefined();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('without an editor reads one JSON line; empty cancels, bad JSON is undefined', async () => {
    expect(await editArgs({}, {}, scripted(['{"a":1}']), out())).toEqual({ a: 1 });
    expect(await editArgs({}, {}, scripted(['']), out())).toBeUndefined();
    expect(await editArgs({}, {}, scripted(['{bad']), out())).toBeUndefined();
  });
});
