// ui: render time of the web console's /ui/approvals with 200 pending approvals, in the Debian
// Chromium driven by playwright-core. A daemon (built packages, in this process) on a temp home
// holds 200 agent shell.exec calls (an admin rule asks for every one); the browser signs in with
// the admin token on the sign-in page, then loads /ui/approvals 1 + BENCH_UI_LOADS times (default 7); each
// load is timed from navigation start to the frame where all 200 rows and the first one's detail
// are in the document. Target: < 1000 ms. Needs `npm run build` (daemon and packages/web/dist).

import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { BenchSetupError, importBuilt, REPO_ROOT, runBench } from '../lib/bench-main.mjs';
import { printTable, writeResults } from '../lib/report.mjs';

const BENCH = 'ui';
const PENDING = 200;
const AGENTS = 4; // 50 holds each: under the default per-token quota of 100
const LOADS = Math.max(1, Number(process.env.BENCH_UI_LOADS ?? 7));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const TARGET_MS = 1000;

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const round1 = (x) => Math.round(x * 10) / 10;

async function waitUntil(what, fn, ms = 60_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

runBench(BENCH, async () => {
  if (!existsSync(join(REPO_ROOT, 'packages', 'web', 'dist', 'index.html')))
    throw new BenchSetupError('packages/web/dist is missing: build first with `npm run build`');
  if (!existsSync(CHROMIUM)) {
    process.stdout.write(`skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)\n`);
    return;
  }
  const { build } = await importBuilt('packages/daemon');
  const { chromium } = await import('playwright-core');

  const home = await mkdtemp(join(tmpdir(), 'finger-bench-ui-'));
  const workspace = await mkdtemp(join(tmpdir(), 'finger-bench-ui-ws-'));
  await mkdir(join(home, 'config'), { recursive: true });
  const policy = { version: 1, rules: [{ id: 'shell-asked', tool: 'shell.exec', level: 'CONFIRM' }] };
  await writeFile(join(home, 'config', 'admin-policy.json'), JSON.stringify(policy));
  const app = await build({
    home,
    env: {},
    config: {
      log: { level: 'silent' },
      server: { host: '127.0.0.1', port: 0 },
      workspace: { roots: [workspace] },
      sandbox: { mode: 'off', exempt_modules: [] },
    },
  });
  let browser;
  const held = [];
  try {
    const { url } = await app.listen();
    const adminToken = (await readFile(app.tokenFile, 'utf8')).trim();
    const http = async (method, path, body, token = adminToken) => {
      const res = await fetch(url + path, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: await res.json() };
    };
    const agents = [];
    for (let i = 0; i < AGENTS; i++) {
      const r = await http('POST', '/v1/tokens', { name: `bench-agent-${i}`, role: 'agent:executor' });
      if (r.status !== 201) throw new Error(`token: ${r.status} ${JSON.stringify(r.body)}`);
      agents.push(r.body.token);
    }
    for (let i = 0; i < PENDING; i++) {
      const text = `/hub target=shell.exec ${JSON.stringify({ command: `echo held-${i} && printf '%s\\n' ${i}` })}`;
      held.push(http('POST', '/v1/input', { text, session_id: `bench-${i % 10}` }, agents[i % AGENTS]).catch(() => {}));
    }
    await waitUntil(`${PENDING} pending approvals`, async () => {
      const r = await http('GET', '/v1/approvals');
      return r.body.approvals.length === PENDING ? true : undefined;
    });

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    // sign in as a person does (the tab keeps the session's CSRF token for the reloads below)
    await page.goto(`${url}/ui/signin`);
    await page.getByLabel('API token').fill(adminToken);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('navigation', { name: 'Main' }).waitFor();
    const samples = [];
    const stateMs = [];
    for (let i = 0; i <= LOADS; i++) {
      await page.goto(`${url}/ui/approvals`, { waitUntil: 'commit' });
      const handle = await page.waitForFunction(
        (n) =>
          globalThis.document.querySelectorAll('.list li').length >= n &&
          globalThis.document.querySelector('.detail') !== null
            ? performance.now()
            : false,
        PENDING,
        { polling: 'raf', timeout: 30_000 },
      );
      const ms = await handle.jsonValue();
      const state = await page.evaluate(() => {
        const e = performance.getEntriesByType('resource').find((r) => r.name.endsWith('/v1/state'));
        return e ? e.responseEnd - e.startTime : null;
      });
      if (i === 0) continue; // the first load warms the daemon's and the browser's caches
      samples.push(ms);
      if (state !== null) stateMs.push(state);
    }
    const rows = [
      {
        system: 'chromium',
        scenario: `ui-approvals-${PENDING}`,
        render_ms_p50: round1(median(samples)),
        render_ms_max: round1(Math.max(...samples)),
        state_fetch_ms_p50: stateMs.length ? round1(median(stateMs)) : null,
        loads: samples.length,
        target_ms: TARGET_MS,
      },
    ];
    printTable(BENCH, rows);
    const version = browser.version();
    writeResults(BENCH, rows, {
      chromium: version,
      samples_ms: samples.map(round1),
      notes: 'navigation start → all rows and the first detail in the document (requestAnimationFrame polling)',
    });
    process.stdout.write(
      `render of /ui/approvals with ${PENDING} pending: median ${round1(median(samples))} ms (target < ${TARGET_MS} ms), Chromium ${version}\n`,
    );
  } finally {
    await browser?.close();
    await app.close();
    await Promise.all(held);
    await rm(home, { recursive: true, force: true });
    await rm(workspace, { recursive: true, force: true });
  }
});
