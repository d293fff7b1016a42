// `npm run test:conformance`: the official MCP conformance suite (server scenarios) against
// finger's /mcp. Starts the built daemon on a temp FINGER_HOME (port 0), mints an agent:executor
// token, and puts a loopback relay in front of /mcp that adds the bearer header (the suite sends
// none). The suite's test_* tools come from fixture.mjs, loaded as modules of this daemon only
// (FINGER_MODULE_PATHS). Runs under Node 22 (the suite needs it); expected-failures.yml lists what
// fails and why.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { writeFixtureModules } from './fixture.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..');
const MAIN = join(ROOT, 'packages', 'daemon', 'dist', 'main.js');
const CLI = join(HERE, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

if (!existsSync(MAIN)) throw new Error('daemon not built: run `npm run build` first');
if (!existsSync(CLI)) {
  // first use: install the suite from the registry (its lock file is committed)
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: HERE, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

const home = mkdtempSync(join(tmpdir(), 'finger-conformance-'));
const fixture = join(home, 'conformance-modules');
writeFixtureModules(fixture);
const env = { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FINGER_'))) };
// the daemon runs on the repository's Node (20), not this script's 22
const daemonNode = process.env.FINGER_DAEMON_NODE ?? 'node';
const daemon = spawn(daemonNode, [MAIN], {
  env: {
    ...env,
    FINGER_HOME: home,
    FINGER_PORT: '0',
    FINGER_HOST: '127.0.0.1',
    FINGER_LOG_LEVEL: 'warn',
    FINGER_MODULE_PATHS: fixture,
  },
  stdio: 'ignore',
});
let code = 1;
try {
  const info = await new Promise((resolve, reject) => {
    const until = Date.now() + 30_000;
    const t = setInterval(() => {
      try {
        const i = JSON.parse(readFileSync(join(home, 'daemon.json'), 'utf8'));
        if (i.pid === daemon.pid) (clearInterval(t), resolve(i));
      } catch {
        if (Date.now() > until) (clearInterval(t), reject(new Error('daemon did not start')));
      }
    }, 100);
  });
  const admin = readFileSync(join(home, 'token'), 'utf8').trim();
  const r = await fetch(`${info.url}/v1/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'conformance', role: 'agent:executor' }),
  });
  const { token } = await r.json();
  const target = new URL(info.url);
  const relay = http.createServer((req, res) => {
    const up = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, host: target.host, authorization: `Bearer ${token}` },
      },
      (ur) => {
        res.writeHead(ur.statusCode ?? 502, ur.headers);
        ur.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${relay.address().port}/mcp`;
  const args = [
    CLI,
    'server',
    '--url',
    url,
    '--expected-failures',
    join(HERE, 'expected-failures.yml'),
    ...process.argv.slice(2),
  ];
  code = await new Promise((resolve) =>
    spawn(process.execPath, args, { stdio: 'inherit' }).on('exit', (c) => resolve(c ?? 1)),
  );
  relay.close();
} finally {
  daemon.kill('SIGTERM');
  await new Promise((r) => (daemon.exitCode !== null ? r() : daemon.once('exit', r)));
  rmSync(home, { recursive: true, force: true });
}
process.exit(code);
