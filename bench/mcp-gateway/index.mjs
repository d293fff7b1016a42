// mcp-gateway: an AUTO tools/call through finger's /mcp gateway vs the same upstream MCP tool
// called directly. Upstream: server-everything's `echo` over stdio. Direct: an MCP client spawns
// its own server-everything and calls `echo`. Gateway: the same client kind talks streamable HTTP
// (2026-07-28 era) to the real daemon (packages/daemon/dist/main.js, temp FINGER_HOME), which
// judges `mcp.everything.echo` (trusted server, AUTO) and forwards it to its server-everything.
// Reports p50/p99 per call (sequential, one in flight) and the overhead (gateway p50 − direct
// p50); the target is ≤ 1 ms p50, reported, never asserted. See bench/README.md.

import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

import { REPO_ROOT, runBench } from '../lib/bench-main.mjs';
import { api, DAEMON_MAIN, startDaemon, stopChild } from '../lib/http-load.mjs';
import { printTable, writeResults } from '../lib/report.mjs';
import { round } from '../lib/suite.mjs';

const BENCH = 'mcp-gateway';
const EVERYTHING = join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const WARMUP = 100;
const RUNS = 1000;
const TARGET_OVERHEAD_MS = 1;

function quantiles(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  return { p50: q(0.5), p99: q(0.99) };
}

/**
 * Times the three paths call by call in turn (direct, gateway, REST), so load from other work on
 * this shared machine falls on all three alike; blocks of one path after another let a busy
 * minute land on one of them only (the overhead moved by several ms between runs).
 */
async function timeInterleaved(paths) {
  const out = paths.map(() => []);
  for (let i = 0; i < WARMUP + RUNS; i++) {
    for (let k = 0; k < paths.length; k++) {
      const t0 = process.hrtime.bigint();
      await paths[k](i);
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (i >= WARMUP) out[k].push(ms);
    }
  }
  return out.map(quantiles);
}

runBench(BENCH, async () => {
  if (!existsSync(DAEMON_MAIN)) {
    process.stdout.write(`\n== ${BENCH} ==\nskipped: not built (\`npm run build\`)\n`);
    return;
  }
  const home = await mkdtemp(join(tmpdir(), 'finger-bench-mcp-'));
  await mkdir(join(home, 'config'), { recursive: true });
  await writeFile(
    join(home, 'config', 'config.json'),
    JSON.stringify({
      log: { level: 'warn' },
      mcp: {
        servers: [
          { name: 'everything', transport: 'stdio', command: [process.execPath, EVERYTHING, 'stdio'], trusted: true },
        ],
      },
      grants: { executor: ['mcp.everything.*'] },
      // the behaviour layer would hold the same tool called thousands of times in its window
      firewall: { behaviour: { max_repeats: 100000, max_tool_calls: 100000 } },
    }),
  );
  const daemon = await startDaemon(home);
  const direct = new Client({ name: 'bench-direct', version: '1' });
  let gateway;
  try {
    const { token } = await api(daemon.url, daemon.admin, 'POST', '/v1/tokens', {
      name: 'mcp-bench',
      role: 'agent:executor',
    });
    await direct.connect(
      new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }),
    );
    gateway = new Client({ name: 'bench-gateway', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    await gateway.connect(
      new StreamableHTTPClientTransport(new URL(`${daemon.url}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    const [d, g, rest] = await timeInterleaved([
      async (i) => {
        const r = await direct.callTool({ name: 'echo', arguments: { message: `d${i}` } });
        if (r.isError) throw new Error(`echo failed: ${JSON.stringify(r.content)}`);
      },
      async (i) => {
        const r = await gateway.callTool({ name: 'mcp.everything.echo', arguments: { message: `g${i}` } });
        if (r.isError) throw new Error(`mcp.everything.echo failed: ${JSON.stringify(r.content)}`);
      },
      // the same call through finger's REST route: the hub and firewall without the MCP layer
      (i) => api(daemon.url, token, 'POST', '/v1/tools/mcp.everything.echo/run', { args: { message: `r${i}` } }),
    ]);
    const overhead = g.p50 - d.p50;
    const rows = [
      {
        system: 'upstream',
        scenario: 'server-everything echo, direct (stdio)',
        ops_per_s: round(1000 / d.p50, 1),
        p50_us: round(d.p50 * 1000, 0),
        p99_us: round(d.p99 * 1000, 0),
      },
      {
        system: 'finger',
        scenario: `/mcp mcp.everything.echo (AUTO, ${gateway.getNegotiatedProtocolVersion()})`,
        ops_per_s: round(1000 / g.p50, 1),
        p50_us: round(g.p50 * 1000, 0),
        p99_us: round(g.p99 * 1000, 0),
      },
      {
        system: 'finger',
        scenario: 'POST /v1/tools/mcp.everything.echo/run (same hub path, no MCP layer)',
        ops_per_s: round(1000 / rest.p50, 1),
        p50_us: round(rest.p50 * 1000, 0),
        p99_us: round(rest.p99 * 1000, 0),
      },
    ];
    printTable(BENCH, rows);
    const met = overhead <= TARGET_OVERHEAD_MS;
    process.stdout.write(
      `\ngateway overhead p50 ${round(overhead, 3)} ms (gateway p50 ${round(g.p50, 3)} ms, p99 ${round(g.p99, 3)} ms; direct p50 ${round(d.p50, 3)} ms, p99 ${round(d.p99, 3)} ms; REST route p50 ${round(rest.p50, 3)} ms); target ≤ ${TARGET_OVERHEAD_MS} ms: ${met ? 'yes' : 'NO'}\n`,
    );
    const file = writeResults(BENCH, rows, {
      target: {
        rule: `gateway AUTO call p50 − direct call p50 ≤ ${TARGET_OVERHEAD_MS} ms`,
        met,
        overhead_p50_ms: round(overhead, 3),
      },
      runs: RUNS,
      notes: [
        'Sequential calls, one in flight, after 100 warm-up calls of each path; the three paths take turns call by call (direct, gateway, REST); wall time in the client from callTool (or the REST request) to its result.',
        'The gateway path is HTTP to the daemon, a fresh MCP server instance per request, the hub and the firewall (AUTO), then stdio to the daemon’s own server-everything.',
      ],
    });
    process.stdout.write(`results: ${file}\n`);
  } finally {
    await gateway?.close().catch(() => undefined);
    await direct.close().catch(() => undefined);
    await stopChild(daemon.child);
    await rm(home, { recursive: true, force: true });
  }
});
