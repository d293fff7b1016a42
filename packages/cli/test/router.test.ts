import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { registryFromJson } from '../src/commands/router.js';
import { runCli } from './helpers.js';

const TOKEN = 'fgr_router_test';

/** The two routes `router parse` reads, on a real loopback socket. */
async function registryServer(): Promise<{ url: string; seen: string[]; close(): Promise<void> }> {
  const seen: string[] = [];
  const modules = [
    { id: 'echo', kind: 'tool', tools: [{ name: 'echo' }] },
    { id: 'shell', kind: 'tool', tools: [{ name: 'exec' }] },
    { id: 'planner', kind: 'agent', tools: [{ name: 'handle' }] },
  ];
  const tools = [
    { id: 'echo.echo', module: 'echo', risk_level: 'low' },
    { id: 'shell.exec', module: 'shell', risk_level: 'critical' },
    { id: 'planner.handle', module: 'planner', risk_level: 'low' },
  ];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization ?? '-'}`);
    const body = req.url === '/v1/modules' ? { modules } : req.url === '/v1/tools' ? { tools } : undefined;
    res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body ?? { error: { code: 'E_NOT_FOUND', message: 'no route' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((r) => server.close(() => r())) };
}

describe('myfinger router parse', () => {
  let dir: string;
  let srv: Awaited<ReturnType<typeof registryServer>>;
  const file = async (name: string, text: string): Promise<string> => {
    const f = path.join(dir, name);
    await writeFile(f, text);
    return f;
  };
  const parse = async (answer: string, extra: string[] = []) => {
    const f = await file('answer.txt', answer);
    const r = await runCli(['router', 'parse', '-f', f, '--url', srv.url, ...extra], {
      env: { FINGER_TOKEN: TOKEN, FINGER_HOME: dir },
    });
    return { ...r, json: r.stdout ? (JSON.parse(r.stdout) as Record<string, unknown>) : undefined };
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'cli-router-'));
    srv = await registryServer();
  });
  afterAll(async () => {
    await srv?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('takes agents from modules of kind agent and targets from /v1/tools, with the token', async () => {
    const r = await parse('{"decision":"dispatch_agent","target":"planner","confidence":0.9,"requires_human":false}');
    expect(r.code).toBe(0);
    expect(r.json).toEqual({
      outcome: 'ok',
      decision: {
        decision: 'dispatch_agent',
        target: 'planner',
        confidence: 0.9,
        reason: '',
        payload: {},
        requires_human: false,
      },
      repairs: [{ kind: 'default_reason' }, { kind: 'default_payload' }],
    });
    expect(srv.seen).toContain(`GET /v1/modules Bearer ${TOKEN}`);
    expect(srv.seen).toContain(`GET /v1/tools Bearer ${TOKEN}`);
  });

  it("does not offer an agent's own tools as module targets (exit 8, reject)", async () => {
    const r = await parse('{"decision":"dispatch_module","target":"planner.handle","confidence":0.9}');
    expect(r.code).toBe(8);
    expect(r.json).toMatchObject({ outcome: 'reject', reason_code: 'unknown_target', retryable: true });
  });

  it('marks a critical tool and its module high risk', async () => {
    for (const target of ['shell.exec', 'shell']) {
      const r = await parse(
        `{"decision":"dispatch_module","target":"${target}","confidence":0.9,"requires_human":false}`,
      );
      expect(r.code).toBe(0);
      expect(r.json).toMatchObject({ outcome: 'ok', decision: { target, requires_human: true } });
    }
  });

  it('exits 1 for ask_human', async () => {
    const r = await parse('{"decision":"dispatch_module","target":"echo","confidence":0.2}');
    expect(r.code).toBe(1);
    expect(r.json).toMatchObject({ outcome: 'ask_human', reason_code: 'low_confidence' });
  });

  it('reads --registry without asking the daemon', async () => {
    const reg = await file('reg.json', JSON.stringify({ modules: ['calc'] }));
    const before = srv.seen.length;
    const r = await parse('{"decision":"dispatch_module","target":"calc","confidence":0.9,"requires_human":true}', [
      '--registry',
      reg,
    ]);
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject({ outcome: 'ok', decision: { target: 'calc' } });
    expect(srv.seen.length).toBe(before);
  });

  it('fails with E_USAGE (exit 2) for a missing registry file', async () => {
    const r = await runCli(['router', 'parse', '--registry', path.join(dir, 'nope.json'), '--json'], { env: {} });
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'E_USAGE' } });
  });
});

describe('registryFromJson', () => {
  it('accepts the three lists, agents and high_risk optional', () => {
    expect(registryFromJson({ modules: ['a'] }, 'r.json')).toEqual({ agents: [], modules: ['a'], high_risk: [] });
  });

  it.each([[[]], [{ modules: 'a' }], [{ modules: ['a'], agents: [1] }], [null]])('rejects %j with E_USAGE', (v) => {
    expect(() => registryFromJson(v, 'r.json')).toThrow(expect.objectContaining({ code: 'E_USAGE' }));
  });
});
