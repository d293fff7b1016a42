import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import { InProcessRuntime, silentLogger, type ToolCallContext } from '@finger/hub';
import { assertManifest, compileChecker, createAjv, type ModuleManifest, ulid } from '@finger/protocol';

import { rejection, startServer, type TestServer } from './helpers.js';

const DIR = fileURLToPath(new URL('..', import.meta.url));
const MANIFEST = JSON.parse(fs.readFileSync(path.join(DIR, 'module.json'), 'utf8')) as ModuleManifest;

function makeCtx(): ToolCallContext {
  const id = ulid();
  const ctrl = new AbortController();
  return {
    call_id: id,
    request_id: id,
    correlation_id: id,
    session_id: 's',
    workflow_id: 'w',
    lease_id: id,
    deadline: Date.now() + 10_000,
    source: { kind: 'system', id: 'test', roles: [] },
    signal: ctrl.signal,
    extendLease() {},
    progress() {},
    call: () => Promise.reject(new Error('no nested calls')),
  };
}

let rt: InProcessRuntime | undefined;
let srv: TestServer | undefined;
afterEach(async () => {
  await rt?.close();
  await srv?.close();
  rt = undefined;
  srv = undefined;
});

async function runtime(settings: Record<string, unknown>): Promise<InProcessRuntime> {
  rt = new InProcessRuntime({
    manifest: { ...MANIFEST, runtime: { type: 'inprocess', entry: './src/index.ts' } },
    baseDir: DIR,
    logger: silentLogger,
    settings,
  });
  await rt.start();
  return rt;
}

describe('web module', () => {
  it('has a valid manifest: fetch and search, medium risk, L2, read-only, idempotent, executor grant', () => {
    expect(() => assertManifest(MANIFEST)).not.toThrow();
    expect(MANIFEST.id).toBe('web');
    expect(MANIFEST.grants).toEqual(['executor']);
    expect(MANIFEST.tools.map((t) => [t.name, t.risk_level, t.capability_level, t.side_effects, t.idempotent])).toEqual(
      [
        ['fetch', 'medium', 'L2', false, true],
        ['search', 'medium', 'L2', false, true],
      ],
    );
  });

  it('runs through the in-process runtime with the daemon settings shape; results match output_schema', async () => {
    srv = await startServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<title>t</title><p>hi</p>');
    });
    const r = await runtime({ home: '/tmp/h', workspace_roots: ['/tmp/h/workspace'], allow_cidrs: ['127.0.0.1/32'] });
    const out = await r.invoke('fetch', { url: `${srv.origin}/` }, makeCtx());
    expect(out).toMatchObject({ status: 200, title: 't', text: 'hi', truncated: false });
    const check = compileChecker(createAjv(), MANIFEST.tools[0]!.output_schema!);
    expect(check(out)).toEqual([]);
    const checkArgs = compileChecker(createAjv(), MANIFEST.tools[0]!.input_schema!);
    expect(
      checkArgs({
        url: 'http://x/',
        method: 'HEAD',
        headers: { a: 'b' },
        max_bytes: 5,
        timeout_ms: 10,
        max_redirects: 0,
      }),
    ).toEqual([]);
    expect(checkArgs({ url: 'http://x/', method: 'POST', extra: 1 }).length).toBe(2);
  });

  it('refuses loopback through the runtime by default (E_FORBIDDEN) and reports a missing search backend', async () => {
    const r = await runtime({ home: '/tmp/h', workspace_roots: ['/tmp/h/workspace'] });
    expect((await rejection(r.invoke('fetch', { url: 'http://127.0.0.1/' }, makeCtx()))).code).toBe('E_FORBIDDEN');
    expect((await rejection(r.invoke('search', { query: 'x' }, makeCtx()))).code).toBe('E_ROUTE_FAILED');
  });

  it('search results match the search output_schema', async () => {
    srv = await startServer((_req, res) => {
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ results: [{ title: 'T', url: 'https://t.example/', content: 'c' }] }));
    });
    const r = await runtime({ searxng: { url: srv.origin } });
    const out = await r.invoke('search', { query: 'x' }, makeCtx());
    expect(compileChecker(createAjv(), MANIFEST.tools[1]!.output_schema!)(out)).toEqual([]);
  });
});
