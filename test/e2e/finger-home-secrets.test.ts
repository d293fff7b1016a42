// Issue 22: finger's own home is out of the agents' reach. The default workspace lives outside
// FINGER_HOME (a root inside it refuses the start), the admin token file can live elsewhere
// (FINGER_TOKEN_FILE, honoured by the daemon and the CLI), secrets on disk are 0600 in 0700
// directories, and an approval records which token answered it (config approvals.answerers
// restricts who may). Real daemons over HTTP with real tokens.

import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, realpath, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';

import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

import { build, type BuildOptions, type FingerApp } from '@finger/daemon';
import { runCli, startTestDaemon, type TempDir, tempDir } from '@finger/testkit';

const dirs: TempDir[] = [];
const apps: FingerApp[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
});
afterAll(async () => {
  for (const d of dirs.splice(0)) await d.remove();
});

async function dir(prefix: string): Promise<string> {
  const d = await tempDir(prefix);
  dirs.push(d);
  return realpath(d.path);
}

const modeOf = async (p: string): Promise<number> => (await stat(p)).mode & 0o777;

/** A pino logger whose lines land in `lines` (parsed). */
function capturingLogger(lines: { level: number; msg: string }[]) {
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return pino({ level: 'warn' }, stream);
}

/** Builds and starts a daemon (no built-in modules unless asked) on `home`; closed after the test. */
async function daemon(home: string, o: Partial<BuildOptions> = {}): Promise<{ app: FingerApp; url: string }> {
  const app = await build({
    home,
    ...o,
    config: { log: { level: 'silent' }, modules: { builtin: false }, server: { port: 0 }, ...o.config },
  });
  apps.push(app);
  return { app, url: (await app.listen()).url };
}

/** What `build` rejected with. */
async function startError(home: string, o: Partial<BuildOptions>): Promise<any> {
  return daemon(home, o).then(
    () => {
      throw new Error('the daemon started');
    },
    (e: unknown) => e,
  );
}

describe('the default workspace lives outside FINGER_HOME', () => {
  it('is ~/finger-workspace, created 0700 on first start; FINGER_HOME/workspace is no longer made', async () => {
    const home = await dir('finger-home-');
    const user = await dir('finger-user-');
    const { app, url } = await daemon(home, { env: { HOME: user }, config: { modules: { builtin: true } } });
    const ws = join(user, 'finger-workspace');
    expect(app.workspaceRoots).toEqual([ws]);
    expect(await modeOf(ws)).toBe(0o700);
    expect(existsSync(join(home, 'workspace'))).toBe(false);
    // a relative path of a tool call lands there, not next to the token
    const token = (await readFile(app.tokenFile, 'utf8')).trim();
    const res = await fetch(`${url}/v1/tools/fs.write/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ args: { path: 'hello.txt', content: 'hi' } }),
    });
    expect(res.status).toBe(200);
    expect(await readFile(join(ws, 'hello.txt'), 'utf8')).toBe('hi');
  });

  it('a root inside FINGER_HOME refuses the start with E_INVALID_ARGS at $.workspace.roots[i], creating nothing', async () => {
    const home = await dir('finger-home-');
    const user = await dir('finger-user-');
    const inside = join(home, 'workspace');
    const err = await startError(home, { env: { HOME: user }, config: { workspace: { roots: ['projects', inside] } } });
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.details).toMatchObject({
      reason: 'inside_finger_home',
      path: inside,
      issues: [{ path: '$.workspace.roots[1]' }],
    });
    expect(err.message).toContain(`workspace root ${inside} is inside FINGER_HOME`);
    expect(existsSync(inside)).toBe(false);
    // FINGER_HOME itself, and a root outside that is a symlink into it (after realpath)
    for (const root of [home, join(user, 'link-to-home')]) {
      if (root !== home) await symlink(join(home, 'state'), root).catch(() => undefined);
      await mkdir(join(home, 'state'), { recursive: true });
      const e = await startError(home, { env: { HOME: user }, config: { workspace: { roots: [root] } } });
      expect([e.code, e.details.reason, e.details.issues[0].path]).toEqual([
        'E_INVALID_ARGS',
        'inside_finger_home',
        '$.workspace.roots[0]',
      ]);
    }
    // relative and ~ roots resolve against the user's home: `~/../<home name>` is FINGER_HOME again
    const rel = await startError(home, {
      env: { HOME: user },
      config: { workspace: { roots: [join('..', home.split('/').pop()!, 'ws')] } },
    });
    expect([rel.code, rel.details.reason]).toEqual(['E_INVALID_ARGS', 'inside_finger_home']);
  });

  it('a root holding the admin token file refuses the start (holds_token_file)', async () => {
    const home = await dir('finger-home-');
    const user = await dir('finger-user-');
    const err = await startError(home, {
      env: { HOME: user, FINGER_TOKEN_FILE: join(user, 'secrets', 'admin.token') },
      config: { workspace: { roots: ['~/projects', '~'] } },
    });
    expect([err.code, err.details.reason, err.details.issues[0].path]).toEqual([
      'E_INVALID_ARGS',
      'holds_token_file',
      '$.workspace.roots[1]',
    ]);
  });
});

describe('the admin token file (FINGER_TOKEN_FILE / token_file)', () => {
  it('is written where FINGER_TOKEN_FILE says (0600, its new directory 0700), exposed as tokenFile, and read there by the CLI', async () => {
    const home = await dir('finger-home-');
    const user = await dir('finger-user-');
    const file = join(user, 'secrets', 'finger', 'admin.token');
    const { app, url } = await daemon(home, { env: { HOME: user, FINGER_TOKEN_FILE: file } });
    expect(app.tokenFile).toBe(file);
    expect(existsSync(join(home, 'token'))).toBe(false);
    expect(await modeOf(file)).toBe(0o600);
    expect(await modeOf(join(user, 'secrets', 'finger'))).toBe(0o700);
    const token = (await readFile(file, 'utf8')).trim();
    expect(JSON.parse(await readFile(join(home, 'daemon.json'), 'utf8')).token_file).toBe(file);

    // the CLI finds it through daemon.json …
    const viaInfo = await runCli(['--json', 'token', 'list'], { FINGER_HOME: home });
    expect([viaInfo.code, viaInfo.stderr]).toEqual([0, '']);
    expect(JSON.parse(viaInfo.stdout).tokens.map((t: any) => [t.name, t.role])).toEqual([['admin', 'admin']]);
    // … and through FINGER_TOKEN_FILE with another (empty) FINGER_HOME
    const other = await dir('finger-other-home-');
    const viaEnv = await runCli(['--json', 'token', 'list'], {
      FINGER_HOME: other,
      FINGER_URL: url,
      FINGER_TOKEN_FILE: file,
    });
    expect([viaEnv.code, viaEnv.stderr]).toEqual([0, '']);
    // without it the CLI has no token: 401 E_UNAUTHENTICATED, and the hint names the file it tried
    const none = await runCli(['token', 'list'], { FINGER_HOME: other, FINGER_URL: url });
    expect(none.code).toBe(4);
    expect(none.stderr).toContain('E_UNAUTHENTICATED');
    expect(none.stderr).toContain(join(other, 'token'));
    expect(token).toMatch(/^fgr_/);
  });
});

describe('secrets on disk', () => {
  it('FINGER_HOME and its folders are 0700, token and tokens.json 0600; start-up tightens loose ones and says so', async () => {
    const home = await dir('finger-home-');
    const user = await dir('finger-user-');
    const { app } = await daemon(home, { env: { HOME: user } });
    app.tokens.create('ci', 'operator');
    expect(await modeOf(home)).toBe(0o700);
    for (const d of ['config', 'events', 'state', 'audit', 'backups'])
      expect([d, await modeOf(join(home, d))]).toEqual([d, 0o700]);
    expect(await modeOf(join(home, 'token'))).toBe(0o600);
    expect(await modeOf(join(home, 'tokens.json'))).toBe(0o600);
    await app.close();
    apps.splice(0);

    // someone loosened them while the daemon was stopped
    await chmod(home, 0o755);
    await chmod(join(home, 'token'), 0o644);
    await chmod(join(home, 'tokens.json'), 0o640);
    const lines: { level: number; msg: string }[] = [];
    await daemon(home, { env: { HOME: user }, logger: capturingLogger(lines) });
    expect(await modeOf(home)).toBe(0o700);
    expect(await modeOf(join(home, 'token'))).toBe(0o600);
    expect(await modeOf(join(home, 'tokens.json'))).toBe(0o600);
    const warned = lines.filter((l) => l.level === 40).map((l) => l.msg);
    expect(warned).toEqual(
      expect.arrayContaining([
        `FINGER_HOME ${home} was open to others (mode 0755): tightened to 0700`,
        `${join(home, 'tokens.json')} was readable by others (mode 0640): tightened to 0600 — rotate the tokens if others may have read it`,
        `${join(home, 'token')} was readable by others (mode 0644): tightened to 0600 — rotate the tokens if others may have read it`,
      ]),
    );
  });
});

describe('answers say who answered (approvals.answerers)', () => {
  it("the answer, its audit entry and APPROVAL_RESOLVED carry the answering token's name and role; an unlisted token gets 403 and the call stays held", async () => {
    const roots = await dir('finger-ans-roots-');
    const ws = join(roots, 'ws');
    const outside = join(roots, 'outside');
    const d = await startTestDaemon({
      config: {
        log: { level: 'silent' },
        workspace: { roots: [ws, outside] },
        approvals: { answerers: ['alice'] },
      },
      prepareHome: async (home) => {
        await mkdir(join(home, 'config'), { recursive: true });
        const policy = { version: 1, rules: [], writable_paths: [ws] };
        await writeFile(join(home, 'config', 'admin-policy.json'), JSON.stringify(policy));
      },
    });
    try {
      const alice = await d.token('operator', 'alice');
      const bob = await d.token('operator', 'bob');
      const agent = await d.token('agent:executor', 'exec-1');
      const events = await d.events();
      await events.subscribe({ types: ['APPROVAL_REQUESTED', 'APPROVAL_RESOLVED'] });
      const of = (type: string) =>
        events.messages.filter((m) => m.type === 'event' && m.event.type === type).map((m) => m.event);

      const file = join(outside, 'a.txt');
      const call = d.http('POST', '/v1/tools/fs.write/run', { args: { path: file, content: 'x' } }, agent);
      await events.waitFor(() => of('APPROVAL_REQUESTED').length === 1, 'APPROVAL_REQUESTED');
      const id = of('APPROVAL_REQUESTED')[0].data.id as string;

      for (const [who, token] of [
        ['bob', bob],
        ['admin', d.adminToken],
      ] as const) {
        const refused = await d.http('POST', `/v1/approvals/${id}`, { decision: 'approve' }, token);
        expect([who, refused.status, refused.body.error.code, refused.body.error.details]).toEqual([
          who,
          403,
          'E_FORBIDDEN',
          { reason: 'not_an_answerer', token: who },
        ]);
      }
      const rejectByBob = await d.http('POST', `/v1/approvals/${id}`, { decision: 'reject' }, bob);
      expect([rejectByBob.status, rejectByBob.body.error.code]).toEqual([403, 'E_FORBIDDEN']);
      // still held: listed, nothing written, nothing resolved
      expect((await d.http('GET', '/v1/approvals')).body.approvals.map((a: any) => a.id)).toEqual([id]);
      expect(existsSync(file)).toBe(false);
      expect(of('APPROVAL_RESOLVED')).toEqual([]);

      const answer = await d.http('POST', `/v1/approvals/${id}`, { decision: 'approve' }, alice);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({
        id,
        decision: 'approve',
        approved: true,
        answered_by: { kind: 'human', id: 'alice', roles: ['operator'] },
      });
      expect((await call).status).toBe(200);
      expect(await readFile(file, 'utf8')).toBe('x');

      await events.waitFor(() => of('APPROVAL_RESOLVED').length === 1, 'APPROVAL_RESOLVED');
      expect(of('APPROVAL_RESOLVED')[0].data).toMatchObject({
        id,
        decision: 'approve',
        by: 'alice',
        answered_by: { kind: 'human', id: 'alice', roles: ['operator'] },
      });
      const audit = await d.http('GET', '/v1/audit?type=approval.resolved');
      const entries = audit.body.entries.filter((e: any) => e.details?.approval_id === id);
      expect(entries.map((e: any) => [e.actor, e.decision, e.details.answered_by])).toEqual([
        [{ kind: 'human', id: 'alice' }, 'approve', { kind: 'human', id: 'alice', roles: ['operator'] }],
      ]);
      await events.close();
    } finally {
      await d.close();
    }
  });

  it('without approvals.answerers the admin token answers, recorded as the token named admin with role admin', async () => {
    const d = await startTestDaemon({ config: { log: { level: 'silent' } } });
    try {
      const agent = await d.token('agent:executor', 'exec-1');
      const events = await d.events();
      await events.subscribe({ types: ['APPROVAL_REQUESTED'] });
      const outsideFile = join(await dir('finger-ans-out-'), 'b.txt');
      const call = d.http('POST', '/v1/tools/fs.write/run', { args: { path: outsideFile, content: 'y' } }, agent);
      await events.waitFor((ms) => ms.some((m) => m.type === 'event'), 'APPROVAL_REQUESTED');
      const id = events.messages.find((m) => m.type === 'event')!.event.data.id as string;
      const answer = await d.http('POST', `/v1/approvals/${id}`, { decision: 'reject', reason: 'not there' });
      expect(answer.body).toMatchObject({
        approved: false,
        answered_by: { kind: 'human', id: 'admin', roles: ['admin'] },
      });
      expect((await call).body.error.code).toBe('E_REJECTED_BY_HUMAN');
      const audit = await d.http('GET', '/v1/audit?type=approval.resolved');
      const entry = audit.body.entries.find((e: any) => e.details?.approval_id === id);
      expect(entry.details.answered_by).toEqual({ kind: 'human', id: 'admin', roles: ['admin'] });
      await events.close();
    } finally {
      await d.close();
    }
  });

  it('a bad approvals.answerers entry stops the start (E_INVALID_ARGS naming it)', async () => {
    const home = await dir('finger-home-');
    const err = await startError(home, { config: { approvals: { answerers: ['Not A Name'] } } });
    expect([err.code, err.details.issues]).toEqual([
      'E_INVALID_ARGS',
      [
        {
          path: '$.approvals.answerers[0]',
          message: 'must be a token name: 1–64 of a-z 0-9 _ . - starting with a letter or digit',
        },
      ],
    ]);
  });
});
