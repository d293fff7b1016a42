// The web console (issue 25) in real Chromium (Debian's /usr/bin/chromium driven by playwright-core)
// against a real daemon: sign-in by one-time link and by token, a held call appearing live and
// answered from the page, edited arguments re-evaluated, a viewer's page and forged requests, a
// cross-site POST, the kill switch stopping a running `sleep`, and the audit chain's state.
// One browser and one daemon for the file; the halt and the tampered audit log come last.
// Screenshots of each page at desktop and phone width go to reports/screenshots/ (git-ignored).

import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { pidsWith, startTestDaemon, type TestDaemon, waitFor } from '@finger/testkit';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'];
const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SHOTS = join(REPO, 'reports', 'screenshots');
const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };
/** Messages of Chromium refusing something under the /ui CSP (there must be none). */
const CSP_REFUSALS: string[] = [];
const SLEEP_MARKER = `300.${process.pid}7`;

describe('web console in Chromium against a real daemon', () => {
  let d: TestDaemon;
  let browser: Browser;
  let admin: BrowserContext;
  let page: Page;
  let agent: string;

  beforeAll(async () => {
    if (!existsSync(join(REPO, 'packages', 'web', 'dist', 'index.html')))
      throw new Error('the web console is not built: run `npm run build` first (packages/web/dist)');
    d = await startTestDaemon({
      config: {
        log: { level: 'silent' },
        sandbox: { mode: 'off', exempt_modules: [] },
        safety: { halt_grace_ms: 400 },
      },
      prepareHome: async (home) => {
        await mkdir(join(home, 'config'), { recursive: true });
        // every agent shell command and write is asked, so the page has something to answer
        const policy = {
          version: 1,
          rules: [
            { id: 'shell-asked', tool: 'shell.exec', level: 'CONFIRM', reason: 'shell commands are asked' },
            { id: 'writes-asked', tool: 'fs.write', level: 'CONFIRM', reason: 'writes are asked' },
            {
              id: 'printf-second-look',
              tool: 'shell.exec',
              match: { command: 'printf *' },
              level: 'APPROVE',
              reason: 'printf needs a second look',
            },
          ],
        };
        await writeFile(join(home, 'config', 'admin-policy.json'), JSON.stringify(policy));
      },
    });
    agent = await d.token('agent:executor', 'web-agent');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 });
    admin = await browser.newContext({ viewport: DESKTOP });
    admin.setDefaultTimeout(15_000);
    page = await admin.newPage();
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) CSP_REFUSALS.push(m.text());
    });
    await mkdir(SHOTS, { recursive: true });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await d?.close();
  });

  /** Screenshots of the page as it is, at desktop and phone width. */
  const shoot = async (p: Page, name: string) => {
    await p.screenshot({ path: join(SHOTS, `${name}-desktop.png`), fullPage: true });
    await p.setViewportSize(PHONE);
    await p.screenshot({ path: join(SHOTS, `${name}-phone.png`), fullPage: true });
    await p.setViewportSize(DESKTOP);
  };
  /** An agent's call through the hub (held by the policy above); resolves with its HTTP answer. */
  const agentCall = (tool: string, args: unknown, session = 'web-s1') =>
    d.http('POST', '/v1/input', { text: `/hub target=${tool} ${JSON.stringify(args)}`, session_id: session }, agent);
  const pending = async (n: number) =>
    waitFor(`${n} pending approval(s)`, async () => {
      const r = await d.http<{ approvals: any[] }>('GET', '/v1/approvals');
      return r.body.approvals.length === n ? r.body.approvals : undefined;
    });

  it('signs in with a one-time link; the link works once', async () => {
    const link = await d.http<{ url: string; expires_at: string }>('POST', '/v1/session/links', {});
    expect(link.status).toBe(200);
    expect(link.body.url.startsWith(`${d.url}/ui/signin#code=`)).toBe(true);
    const signin = await admin.newPage();
    await signin.goto(`${d.url}/ui/signin`);
    await signin.getByLabel('API token').waitFor();
    await shoot(signin, 'signin');
    await signin.close();

    await page.goto(link.body.url);
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    await expect.poll(() => page.url()).toBe(`${d.url}/ui/approvals`);
    expect(await page.getByText('admin (admin)').count()).toBe(1);
    await page.getByText('Nothing is waiting for you.').waitFor();
    // a reload keeps the session (the cookie, and the tab's CSRF token for GET /v1/session)
    await page.reload();
    await page.getByRole('status', { name: 'Connection' }).getByText('live').waitFor();
    expect(await page.getByText('admin (admin)').count()).toBe(1);

    // used once: the same code signs nobody in again
    const again = await fetch(`${d.url}/v1/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: new URL(link.body.url).hash.slice('#code='.length) }),
    });
    expect([again.status, ((await again.json()) as any).error.code]).toEqual([401, 'E_UNAUTHENTICATED']);
  });

  it('shows a held shell.exec live; approve runs it', async () => {
    const answer = agentCall('shell.exec', { command: 'echo approved-from-the-page' });
    const row = page.getByRole('link', { name: 'CONFIRM shell.exec from web-agent' });
    await row.click();
    const detail = page.getByRole('article', { name: 'Held call shell.exec' });
    await detail.getByText('shell commands are asked').first().waitFor();
    expect(await detail.getByRole('list', { name: 'Matched rules' }).getByText('admin:shell-asked').count()).toBe(1);
    await shoot(page, 'approvals');
    await detail.getByRole('button', { name: 'Approve', exact: true }).click();
    const done = await answer;
    expect(done.status).toBe(200);
    expect(JSON.stringify(done.body.result)).toContain('approved-from-the-page');
    await page.getByText('Nothing is waiting for you.').waitFor();
  });

  it('rejects with a reason; the agent gets it', async () => {
    const answer = agentCall('shell.exec', { command: 'echo never-runs' });
    await page.getByRole('link', { name: 'CONFIRM shell.exec from web-agent' }).click();
    await page.getByLabel('Reason for rejecting').fill('not now: use the staging copy');
    await page.getByRole('button', { name: 'Reject' }).click();
    const done = await answer;
    expect([done.status, done.body.error.code]).toEqual([403, 'E_REJECTED_BY_HUMAN']);
    expect(done.body.error.message).toContain('not now: use the staging copy');
  });

  it('edits the arguments of a held write and shows the re-evaluated level', async () => {
    const inside = join(d.workspace, 'notes.txt');
    const answer = agentCall('fs.write', { path: inside, content: 'hello from the agent\n' });
    await page.getByRole('link', { name: 'CONFIRM fs.write from web-agent' }).click();
    const diff = page.getByLabel('Unified diff');
    await diff.getByText('+hello from the agent').waitFor();
    await page.getByText('Edit arguments').click();
    const outside = join(dirname(d.workspace), 'outside-the-workspace.txt');
    await page.getByLabel('Arguments (JSON)').fill(JSON.stringify({ path: outside, content: 'x' }));
    await page.getByRole('button', { name: 'Check edited arguments' }).click();
    await expect
      .poll(() => page.getByRole('status', { name: 'New verdict' }).textContent())
      .toMatch(/^New verdict: APPROVE/);
    // approving them asks first, as an APPROVE hold does; cancelled, nothing is sent
    await page.getByRole('button', { name: 'Approve edited arguments' }).click();
    await page
      .getByRole('dialog', { name: 'Approve an APPROVE-level call?' })
      .getByRole('button', { name: 'Cancel' })
      .click();
    expect((await d.http('GET', '/v1/approvals')).body.approvals).toHaveLength(1);
    await page.getByLabel('Reason for rejecting').fill('checked only');
    await page.getByRole('button', { name: 'Reject' }).click();
    expect((await answer).body.error.code).toBe('E_REJECTED_BY_HUMAN');
  });

  it('keys: j/k move, a on an APPROVE-level hold asks first, r rejects; a link in a new tab opens signed in', async () => {
    const approveLevel = agentCall('shell.exec', { command: 'printf approve-level-ok' });
    await pending(1);
    const confirmLevel = agentCall('shell.exec', { command: 'echo by-keyboard' });
    const [newer, older] = await pending(2);
    expect([newer.level, older.level]).toEqual(['CONFIRM', 'APPROVE']);
    const tab = await admin.newPage();
    await tab.goto(`${d.url}/ui/approvals/${older.id}`);
    await tab
      .getByRole('article', { name: 'Held call shell.exec' })
      .getByText('printf needs a second look')
      .first()
      .waitFor();
    const detail = tab.getByRole('article', { name: 'Held call shell.exec' });
    await tab.keyboard.press('k');
    await expect.poll(() => tab.url()).toBe(`${d.url}/ui/approvals/${newer.id}`);
    await detail.getByText('echo by-keyboard').first().waitFor();
    await tab.keyboard.press('j');
    await expect.poll(() => tab.url()).toBe(`${d.url}/ui/approvals/${older.id}`);
    await detail.getByText('printf needs a second look').first().waitFor();
    await tab.keyboard.press('a');
    const dialog = tab.getByRole('dialog', { name: 'Approve an APPROVE-level call?' });
    await dialog.getByRole('button', { name: 'Confirm approval' }).click();
    const approved = await approveLevel;
    expect(approved.status).toBe(200);
    expect(JSON.stringify(approved.body.result)).toContain('approve-level-ok');
    await tab.getByRole('link', { name: 'CONFIRM shell.exec from web-agent' }).click();
    await detail.getByText('echo by-keyboard').first().waitFor();
    await tab.keyboard.press('r');
    expect(await tab.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Reason for rejecting');
    await tab.keyboard.type('rejected by keyboard');
    await tab.keyboard.press('Enter');
    const rejected = await confirmLevel;
    expect([rejected.body.error.code, rejected.body.error.message.includes('rejected by keyboard')]).toEqual([
      'E_REJECTED_BY_HUMAN',
      true,
    ]);
    await tab.close();
  });

  it('always: shows the standing shape, leaves a standing approval for the session; Control revokes it', async () => {
    const first = agentCall('shell.exec', { command: 'echo standing-one' }, 'web-standing');
    const [held] = await pending(1);
    expect(held.standing.offered).toBe(true);
    await page.getByRole('link', { name: 'CONFIRM shell.exec from web-agent' }).click();
    await page.getByText('Always allow…').click();
    await page.getByText(held.standing.description).waitFor();
    const shape = JSON.parse(await page.getByLabel('Standing shape (JSON)').inputValue());
    expect(shape).toEqual(held.standing.shape);
    await page.getByLabel('Scope').selectOption('session');
    await page.getByRole('button', { name: 'Always allow' }).click();
    expect((await first).status).toBe(200);
    // the same shape in the same session runs without asking
    const second = await agentCall('shell.exec', { command: 'echo standing-two' }, 'web-standing');
    expect([second.status, JSON.stringify(second.body.result).includes('standing-two')]).toEqual([200, true]);
    await page.getByRole('link', { name: 'Control' }).click();
    await page.getByRole('button', { name: /^Revoke standing approval shell\.exec: echo/ }).click();
    await page.getByRole('region', { name: 'Standing approvals' }).getByText('None.').waitFor();
    expect((await d.http('GET', '/v1/standing-approvals')).body.standing_approvals).toEqual([]);
    await page.getByRole('link', { name: /^Approvals/ }).click();
  });

  it('a viewer sees no answer buttons, and a forged POST from its session is 403', async () => {
    const viewerToken = await d.token('viewer', 'web-viewer');
    const answer = agentCall('shell.exec', { command: 'echo for-the-viewer' });
    const [held] = await pending(1);
    const viewer = await browser.newContext({ viewport: DESKTOP });
    viewer.setDefaultTimeout(15_000);
    const vp = await viewer.newPage();
    await vp.goto(`${d.url}/ui/approvals/${held.id}`);
    await vp.getByLabel('API token').fill(viewerToken);
    await vp.getByRole('button', { name: 'Sign in' }).click();
    const detail = vp.getByRole('article', { name: 'Held call shell.exec' });
    await detail.waitFor();
    expect(await vp.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0);
    expect(await vp.getByRole('button', { name: 'Reject' }).count()).toBe(0);
    expect(await vp.getByRole('button', { name: 'Halt everything' }).count()).toBe(0);
    const forged = await vp.evaluate(async (id) => {
      const s = await (await fetch('/v1/session')).json();
      const r = await fetch(`/v1/approvals/${id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': s.csrf_token },
        body: JSON.stringify({ decision: 'approve' }),
      });
      return { status: r.status, code: (await r.json()).error.code };
    }, held.id);
    expect(forged).toEqual({ status: 403, code: 'E_FORBIDDEN' });
    // revoking the token ends its session at once: the live connection closes, the page signs out
    expect((await d.http('DELETE', '/v1/tokens/web-viewer')).status).toBe(200);
    await vp.getByLabel('API token').waitFor();
    await viewer.close();
    expect((await d.http('POST', `/v1/approvals/${held.id}`, { decision: 'reject', reason: 'cleanup' })).status).toBe(
      200,
    );
    expect((await answer).body.error.code).toBe('E_REJECTED_BY_HUMAN');
  });

  it('refuses a POST without the CSRF token, and a cross-site form POST from another loopback port', async () => {
    const noCsrf = await page.evaluate(async () => {
      const r = await fetch('/v1/halt', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      return { status: r.status, error: (await r.json()).error };
    });
    expect([noCsrf.status, noCsrf.error.code, noCsrf.error.details.reason]).toEqual([403, 'E_FORBIDDEN', 'csrf']);

    // an agent's dev server on another port of the same host: same-site, so the cookie goes along
    const form =
      `<form id="f" method="POST" enctype="text/plain" action="${d.url}/v1/halt">` +
      `<input name='{"reason":"csrf","x":"' value='"}'></form>`;
    const evil: Server = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(form));
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    try {
      const other = await admin.newPage();
      await other.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      await Promise.all([
        other.waitForURL(`${d.url}/v1/halt`),
        other.evaluate(() => (document.getElementById('f') as HTMLFormElement).submit()),
      ]);
      const body = JSON.parse((await other.textContent('body')) ?? '{}');
      expect([body.error.code, body.error.details.reason]).toEqual(['E_FORBIDDEN', 'csrf']);
      await other.close();
    } finally {
      await new Promise((r) => evil.close(r));
    }
    const health = await d.http('GET', '/v1/health');
    expect(health.body.safety.locked).toBe(false);
  });

  it('activity shows the calls and verdicts; audit shows the chain intact', async () => {
    await page.getByRole('link', { name: 'Activity' }).click();
    await page.getByRole('region', { name: 'Calls and verdicts' }).getByText('shell.exec').first().waitFor();
    await page.getByLabel('Filter by level').selectOption('CONFIRM');
    await shoot(page, 'activity');
    await page.getByRole('link', { name: 'Audit' }).click();
    await page
      .getByRole('status', { name: 'Audit chain' })
      .getByText(/^Audit chain intact/)
      .waitFor();
    await shoot(page, 'audit');
    expect(CSP_REFUSALS).toEqual([]);
  });

  it('halt from the page stops a running sleep 300', async () => {
    const sleeping = d.http('POST', '/v1/tools/shell.exec/run', {
      args: { command: `exec sleep ${SLEEP_MARKER}` },
      timeout_ms: 600_000,
    });
    await waitFor('sleep to start', async () => (pidsWith(SLEEP_MARKER).length > 0 ? true : undefined));
    await page.getByRole('link', { name: 'Control' }).click();
    await page.getByRole('region', { name: 'Policy' }).waitFor();
    await shoot(page, 'control');
    await page.getByLabel('Reason for halting').fill('stop from the browser test');
    await page.getByRole('button', { name: 'Halt everything' }).click();
    await page
      .getByRole('dialog', { name: 'Halt every agent and call now?' })
      .getByRole('button', { name: 'Confirm halt' })
      .click();
    await page.getByRole('status', { name: 'Last action' }).getByText('Halted').waitFor();
    expect(pidsWith(SLEEP_MARKER)).toEqual([]);
    expect((await sleeping).body.error.code).toBe('E_HALTED');
    const safety = page.getByRole('status', { name: 'Safety state' });
    await safety.getByText(/^State: locked/).waitFor();
    // an admin unlocks from the same page
    await page.getByRole('button', { name: 'Unlock', exact: true }).click();
    await safety.getByText('State: open').waitFor();
    expect((await d.http('GET', '/v1/health')).body.safety.locked).toBe(false);
  });

  it('names the first bad entry once a byte of the audit log changed on disk', async () => {
    const dir = join(d.home, 'audit');
    const file = join(dir, (await readdir(dir)).filter((f) => f.endsWith('.jsonl')).sort()[0]!);
    const lines = (await readFile(file, 'utf8')).split('\n');
    const target = 2; // the third entry
    const seq = JSON.parse(lines[target]!).seq as number;
    // one byte of its timestamp: still JSON, no longer the hashed content
    lines[target] = lines[target]!.replace(/"ts":"(\d)/, (_m, digit: string) => `"ts":"${digit === '1' ? '2' : '1'}`);
    await writeFile(file, lines.join('\n'));
    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('button', { name: 'Verify again' }).click();
    const chain = page.getByRole('alert', { name: 'Audit chain' });
    await chain.getByText(`Audit chain broken — first bad entry #${seq}:`, { exact: false }).waitFor();
    await shoot(page, 'audit-broken');
  });
});
