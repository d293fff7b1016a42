// Issue 23 item 3 through the real daemon over HTTP, on a real bubblewrap: with the sandbox on,
// everyday workspace commands an agent sends run without a question (NOTIFY) in the
// workspace-write profile; the same commands touching ~/.bashrc, the network or a path outside
// the workspace are held, each with its reason; inside the profile a program that reads
// ~/.ssh/id_rsa finds nothing and one that connects to a server on the host's loopback fails,
// and the result says so. A developer's own toolchains under their home (rustup's cargo, pyenv's
// pytest) build and test a project there, read-only.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { findProgram } from '@finger/hub';
import { binaryForTests, sandboxForTests, startTestDaemon, type TestDaemon } from '@finger/testkit';

describe.skipIf(!sandboxForTests())('the workspace-write sandbox through the daemon', () => {
  let d: TestDaemon;
  let agent: string;
  let server: http.Server;
  let port = 0;
  let requests = 0;
  const home = realpathSync(mkdtempSync(path.join(tmpdir(), 'finger-ww-home-')));

  beforeAll(async () => {
    mkdirSync(path.join(home, '.ssh'), { recursive: true });
    writeFileSync(path.join(home, '.ssh', 'id_rsa'), '-----BEGIN FAKE KEY-----\n');
    d = await startTestDaemon({
      env: { HOME: home },
      config: { log: { level: 'silent' }, sandbox: { mode: 'required' } },
    });
    agent = await d.token('agent:executor', 'ww-agent');
    const ws = d.workspace;
    writeFileSync(path.join(ws, 'package.json'), JSON.stringify({ name: 'tiny', scripts: { test: 'node -e 0' } }));
    writeFileSync(path.join(ws, 'Makefile'), 'all:\n\techo built > built.txt\n');
    writeFileSync(path.join(ws, 'a.txt'), 'alpha\n');
    const repo = path.join(ws, 'repo');
    mkdirSync(repo);
    const git = (...a: string[]) => execFileSync('git', a, { cwd: repo, stdio: 'ignore' });
    git('init', '-q');
    git('config', 'user.email', 'a@example.com');
    git('config', 'user.name', 'A');
    writeFileSync(path.join(repo, 'f.txt'), 'one\n');
    server = http.createServer((_q, r) => {
      requests++;
      r.end('reached');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    writeFileSync(path.join(ws, 'readkey.sh'), `cat ${home}/.ssh/id_rsa || echo no-key\n`);
    writeFileSync(
      path.join(ws, 'net.js'),
      `require('http').get('http://127.0.0.1:${port}/', (r) => r.pipe(process.stdout)).on('error', (e) => { console.error('net: ' + e.code); process.exit(3); });\n`,
    );
  });

  afterAll(async () => {
    await new Promise<void>((r) => server.close(() => r()));
    await d?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const asAgent = (args: Record<string, unknown>) =>
    d.http<any>('POST', '/v1/tools/shell.exec/run', { args, timeout_ms: 60_000 }, agent);

  it('health and doctor data say the workspace-write profile is available', async () => {
    const h = await d.http<any>('GET', '/v1/health');
    expect(h.body.sandbox.profiles).toEqual({ 'workspace-write': { available: true } });
  });

  it('npm test, make, git add/commit/stash, mkdir/touch/cp/mv/rm and sed -i run without a question, in the profile', async () => {
    const commands: [string, string | undefined][] = [
      ['npm test', undefined],
      ['make', undefined],
      ['git add f.txt && git commit -q -m first', 'repo'],
      ["sed -i 's/one/two/' f.txt && git stash -q", 'repo'],
      ['mkdir -p out/sub && touch out/sub/t.txt', undefined],
      ['cp a.txt b.txt && mv b.txt c.txt && rm c.txt', undefined],
      ["sed -i 's/alpha/beta/' a.txt", undefined],
    ];
    for (const [command, cwd] of commands) {
      const r = await asAgent({ command, ...(cwd ? { cwd } : {}) });
      expect([command, r.status, r.body.result?.exit_code, r.body.result?.sandbox]).toEqual([
        command,
        200,
        0,
        { profile: 'workspace-write' },
      ]);
    }
    expect(readFileSync(path.join(d.workspace, 'built.txt'), 'utf8')).toBe('built\n');
    expect(readFileSync(path.join(d.workspace, 'a.txt'), 'utf8')).toBe('beta\n');
    expect(existsSync(path.join(d.workspace, 'out', 'sub', 't.txt'))).toBe(true);
    expect(readFileSync(path.join(d.workspace, 'repo', 'f.txt'), 'utf8')).toBe('one\n'); // stashed
    const log = execFileSync('git', ['log', '--format=%s'], { cwd: path.join(d.workspace, 'repo'), encoding: 'utf8' });
    expect(log).toBe('first\n');
  });

  it('the same commands touching ~/.bashrc, the network or a path outside the workspace are held, each with its reason', async () => {
    const outside = path.dirname(d.workspace);
    const cases: [string, string, string][] = [
      [
        'touch ~/.bashrc',
        'APPROVE',
        "APPROVE: RiskAssessor: dangerous: segment 1: writes the start-up file '~/.bashrc' (bash runs it at every start); segment 1: touch writes to '~/.bashrc' (~/.bashrc)",
      ],
      ['npm install', 'CONFIRM', 'CONFIRM: needs network: npm install'],
      ['git push', 'CONFIRM', 'CONFIRM: needs network: git push'],
      [`curl http://127.0.0.1:${port}/`, 'CONFIRM', 'CONFIRM: needs network: curl'],
      [
        `cp a.txt ${outside}/x.txt`,
        'CONFIRM',
        `CONFIRM: writes outside the workspace: "${outside}/x.txt", "${outside}/x.txt/a.txt"`,
      ],
      // the rest of the everyday commands of the first test, sent out of the workspace
      [
        "sed -i 's/a/b/' ~/.bashrc",
        'APPROVE',
        "APPROVE: RiskAssessor: dangerous: segment 1: writes the start-up file '~/.bashrc' (bash runs it at every start); segment 1: sed writes to '~/.bashrc' (~/.bashrc)",
      ],
      [
        'echo x >> ~/.bashrc',
        'APPROVE',
        "APPROVE: RiskAssessor: dangerous: segment 1: writes the start-up file '~/.bashrc' (bash runs it at every start); segment 1: redirect >> writes to '~/.bashrc' (~/.bashrc)",
      ],
      [`mkdir ${outside}/d`, 'CONFIRM', `CONFIRM: writes outside the workspace: "${outside}/d"`],
      [`touch ${outside}/t`, 'CONFIRM', `CONFIRM: writes outside the workspace: "${outside}/t"`],
      [
        `mv a.txt ${outside}/a.txt`,
        'CONFIRM',
        `CONFIRM: writes outside the workspace: "${outside}/a.txt", "${outside}/a.txt/a.txt"`,
      ],
      [`rm ${outside}/x.txt`, 'CONFIRM', `CONFIRM: writes outside the workspace: "${outside}/x.txt"`],
      [`make -C ${outside}`, 'CONFIRM', `CONFIRM: writes outside the workspace: "${outside}"`],
      [
        'git add ~/.bashrc',
        'CONFIRM',
        `CONFIRM: the command's path word "~/.bashrc" is outside readable_paths (${d.workspace})`,
      ],
      ['git clone https://example.com/x.git', 'CONFIRM', 'CONFIRM: needs network: git clone'],
      ['cargo install ripgrep', 'CONFIRM', 'CONFIRM: needs network: cargo install'],
      ['cargo publish', 'CONFIRM', 'CONFIRM: needs network: cargo publish'],
      [`cargo build --target-dir ${outside}/t`, 'CONFIRM', `CONFIRM: writes outside the workspace: "${outside}/t"`],
      ['pip install requests', 'CONFIRM', 'CONFIRM: needs network: pip install'],
      [
        `python3 -m pytest --basetemp=${outside}/t`,
        'CONFIRM',
        `CONFIRM: the command's path word "${outside}/t" is outside readable_paths (${d.workspace})`,
      ],
    ];
    // held by the PathSandbox (a read outside the read roots) after the risk was lowered: once a
    // person approves it, it still runs in the profile (docs/policy.md, "The workspace-write sandbox")
    const profileOnceApproved = new Set(['git add ~/.bashrc', `python3 -m pytest --basetemp=${outside}/t`]);
    for (const [command, level, reason] of cases) {
      const check = await d.http<any>('POST', '/v1/policy/check', { tool: 'shell.exec', args: { command } });
      expect([command, check.body.level, check.body.sandbox_profile, check.body.reasons[0]]).toEqual([
        command,
        level,
        profileOnceApproved.has(command) ? 'workspace-write' : undefined,
        reason,
      ]);
    }
    expect(requests).toBe(0);
  });

  it('inside the profile ~/.ssh/id_rsa reads as nothing and the host loopback is unreachable; the result says why', async () => {
    const key = await asAgent({ command: 'sh readkey.sh' });
    expect([key.status, key.body.result.stdout, key.body.result.sandbox]).toEqual([
      200,
      'no-key\n',
      { profile: 'workspace-write' },
    ]);
    const net = await asAgent({ command: 'node net.js' });
    expect([net.status, net.body.result.exit_code, net.body.result.stderr, net.body.result.sandbox]).toEqual([
      200,
      3,
      'net: ECONNREFUSED\n',
      {
        profile: 'workspace-write',
        hint: 'network is off in the workspace sandbox: this command needs it, so it failed there (it is not re-run outside; a person can run it as a held call)',
      },
    ]);
    expect(requests).toBe(0);
  });

  it('a payload field cannot choose the profile: shell.exec refuses unknown arguments (E_INVALID_ARGS), nothing runs', async () => {
    const r = await asAgent({ command: 'touch chosen.txt', sandbox_profile: 'default', sandbox: 'off' });
    expect([r.status, r.body.error?.code]).toEqual([400, 'E_INVALID_ARGS']);
    expect(existsSync(path.join(d.workspace, 'chosen.txt'))).toBe(false);
    // the profile follows the verdict: a read-only command runs in the default profile
    const ls = await asAgent({ command: 'ls' });
    expect([ls.status, ls.body.result?.sandbox]).toEqual([200, undefined]);
  });
});

/** `python3 -m pytest` when it runs on the PATH the daemon's shell children get (this process's). */
function pytestHere(): string | undefined {
  const r = spawnSync('python3', ['-m', 'pytest', '--version'], { stdio: 'ignore', timeout: 30_000 });
  return r.status === 0 ? 'python3 -m pytest' : undefined;
}

/** What `program args` prints (trimmed), or undefined when it cannot run. */
function printed(program: string, args: string[]): string | undefined {
  const r = spawnSync(program, args, { encoding: 'utf8', timeout: 30_000 });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

// Missing cargo or pytest is a loud skip here, a failure under FINGER_REQUIRE_SERVICES=1 (.ci/run
// puts ~/.cargo/bin on PATH and installs Debian's cargo or python3-pytest when they are missing).
const sandboxHere = sandboxForTests();
const cargo = sandboxHere
  ? binaryForTests(
      findProgram('cargo', process.env.PATH),
      'cargo build in the workspace-write sandbox',
      "cargo is not on PATH (rustup's ~/.cargo/bin, or Debian's cargo)",
    )
  : undefined;
const pytest = sandboxHere
  ? binaryForTests(
      pytestHere(),
      'pytest in the workspace-write sandbox',
      '`python3 -m pytest` does not run (python3-pytest)',
    )
  : undefined;

describe.skipIf(cargo === undefined || pytest === undefined)(
  "a developer's toolchains under their own home, in the workspace-write sandbox",
  () => {
    let d: TestDaemon;
    let agent: string;
    // the daemon runs as the user it would run as (its real home): the toolchains rustup and
    // pyenv put there, the credential masks and the private tool caches apply to that home
    const home = homedir();
    const toolchains: string[] = [];

    beforeAll(async () => {
      d = await startTestDaemon({
        env: { HOME: home },
        config: { log: { level: 'silent' }, sandbox: { mode: 'required' } },
      });
      agent = await d.token('agent:executor', 'ww-toolchains');
      const ws = d.workspace;
      mkdirSync(path.join(ws, 'crate', 'src'), { recursive: true });
      writeFileSync(
        path.join(ws, 'crate', 'Cargo.toml'),
        '[package]\nname = "tiny"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
      );
      writeFileSync(path.join(ws, 'crate', 'src', 'main.rs'), 'fn main() {\n    println!("tiny");\n}\n');
      mkdirSync(path.join(ws, 'py'));
      writeFileSync(path.join(ws, 'py', 'test_one.py'), 'def test_one():\n    assert 1 + 1 == 2\n');
      // where the toolchains live (cargo's directory, the Rust sysroot, Python's prefix)
      toolchains.push(path.dirname(cargo!));
      const sysroot = printed('rustc', ['--print', 'sysroot']);
      if (sysroot !== undefined) toolchains.push(sysroot);
      const prefix = printed('python3', ['-c', 'import sys; print(sys.prefix)']);
      if (prefix !== undefined) toolchains.push(prefix);
      // a program that writes without naming the place: the OS keeps it out, not the firewall
      writeFileSync(
        path.join(ws, 'write-toolchains.sh'),
        toolchains
          .map(
            (t) =>
              `if touch '${t}/.finger-probe' 2>/dev/null; then rm -f '${t}/.finger-probe'; echo 'wrote ${t}'; else echo 'read-only ${t}'; fi\n`,
          )
          .join(''),
      );
    });

    afterAll(async () => {
      await d?.close();
    });

    const asAgent = (command: string, cwd: string) =>
      d.http<any>('POST', '/v1/tools/shell.exec/run', { args: { command, cwd }, timeout_ms: 120_000 }, agent);

    it('cargo build of a crate with no dependencies runs without a question in the profile and builds it', async () => {
      const check = await d.http<any>('POST', '/v1/policy/check', {
        tool: 'shell.exec',
        args: { command: 'cargo build', cwd: 'crate' },
      });
      expect([check.body.level, check.body.sandbox_profile]).toEqual(['NOTIFY', 'workspace-write']);
      const r = await asAgent('cargo build', 'crate');
      expect([r.status, r.body.result?.exit_code, r.body.result?.sandbox, r.body.result?.stderr]).toEqual([
        200,
        0,
        { profile: 'workspace-write' },
        expect.stringContaining('Compiling tiny v0.1.0'),
      ]);
      const built = path.join(d.workspace, 'crate', 'target', 'debug', 'tiny');
      expect(execFileSync(built, { encoding: 'utf8' })).toBe('tiny\n');
    });

    it('a cargo build that needs a crate it has not fetched fails inside (no network), says why, and is not re-run outside', async () => {
      const dep = path.join(d.workspace, 'dep');
      mkdirSync(path.join(dep, 'src'), { recursive: true });
      writeFileSync(
        path.join(dep, 'Cargo.toml'),
        '[package]\nname = "dep"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nitoa = "1"\n',
      );
      writeFileSync(path.join(dep, 'src', 'main.rs'), 'fn main() {}\n');
      const r = await asAgent('cargo build', 'dep');
      expect([r.status, r.body.result?.exit_code, r.body.result?.sandbox, r.body.result?.stderr]).toEqual([
        200,
        101,
        {
          profile: 'workspace-write',
          hint: 'network is off in the workspace sandbox: this command needs it, so it failed there (it is not re-run outside; a person can run it as a held call)',
        },
        expect.stringContaining('failed to get `itoa` as a dependency'),
      ]);
      expect(existsSync(path.join(dep, 'target', 'debug', 'dep'))).toBe(false);
    });

    it('python3 -m pytest of a one-test project runs without a question in the profile and passes', async () => {
      const check = await d.http<any>('POST', '/v1/policy/check', {
        tool: 'shell.exec',
        args: { command: pytest, cwd: 'py' },
      });
      expect([check.body.level, check.body.sandbox_profile]).toEqual(['NOTIFY', 'workspace-write']);
      const r = await asAgent(`${pytest} -q -p no:cacheprovider`, 'py');
      expect([r.status, r.body.result?.exit_code, r.body.result?.sandbox, r.body.result?.stdout]).toEqual([
        200,
        0,
        { profile: 'workspace-write' },
        expect.stringMatching(/^1 passed\b/m),
      ]);
    });

    it('the toolchains stay read-only inside the profile: a program writing there fails, the host is unchanged', async () => {
      const r = await asAgent('sh write-toolchains.sh', '.');
      expect([r.status, r.body.result?.exit_code, r.body.result?.sandbox, r.body.result?.stdout]).toEqual([
        200,
        0,
        { profile: 'workspace-write' },
        toolchains.map((t) => `read-only ${t}\n`).join(''),
      ]);
      for (const t of toolchains) expect(existsSync(path.join(t, '.finger-probe'))).toBe(false);
    });
  },
);
