import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { build, type BuildOptions, type DaemonConfigInput, type FingerApp } from '@finger/daemon';

/** A fresh temp directory. */
export function tempDir(prefix = 'finger-daemon-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

const FX_ENTRY = `
export default {
  tools: {
    echo: (args) => args,
    whoami: (_args, ctx) => ({ source: ctx.source, request_id: ctx.request_id, correlation_id: ctx.correlation_id }),
    sleep: (args) => new Promise((resolve) => setTimeout(() => resolve({ slept: args.ms }), args.ms)),
    fail: () => { throw new Error('boom'); },
  },
};
`;

const ECHO_ENTRY = `export default { tools: { echo: (args) => args } };\n`;

/** A valid manifest of an in-process module with `entry` next to it. */
export function manifest(id: string, tools: string[], entry = './index.mjs'): Record<string, unknown> {
  return {
    id,
    name: `fixture ${id}`,
    version: '1.0.0',
    kind: 'tool',
    runtime: { type: 'inprocess', entry },
    tools: tools.map((name) => ({ name, description: `${name} tool`, input_schema: { type: 'object' } })),
  };
}

/**
 * Writes fixture modules under `dir`: `echo` (one tool, echoes) and `fx` (echo, whoami, sleep,
 * fail — whoami returns the `ctx.source` the module was given).
 */
export async function writeFixtureModules(dir: string): Promise<string> {
  await mkdir(join(dir, 'echo'), { recursive: true });
  await writeFile(join(dir, 'echo', 'module.json'), JSON.stringify(manifest('echo', ['echo'])));
  await writeFile(join(dir, 'echo', 'index.mjs'), ECHO_ENTRY);
  await mkdir(join(dir, 'fx'), { recursive: true });
  await writeFile(join(dir, 'fx', 'module.json'), JSON.stringify(manifest('fx', ['echo', 'whoami', 'sleep', 'fail'])));
  await writeFile(join(dir, 'fx', 'index.mjs'), FX_ENTRY);
  return dir;
}

/** A built daemon on a temp FINGER_HOME with fixture modules, plus request helpers. */
export interface TestDaemon {
  app: FingerApp;
  home: string;
  /** The workspace root: a temp directory beside the home (unless config.workspace was given). */
  workspace: string;
  admin: string;
  /** fastify.inject with an optional bearer token. */
  call(
    method: 'GET' | 'POST' | 'DELETE' | 'PUT',
    url: string,
    opts?: { token?: string | null; body?: unknown },
  ): Promise<{ status: number; json: any; body: string; headers: Record<string, unknown> }>;
  /** Mints a token with `role` and returns it. */
  token(role: string, name?: string): Promise<string>;
  close(): Promise<void>;
}

let tokenSeq = 0;

/** Builds a daemon (no built-in modules, fixture modules loaded, silent logs) on a temp home. */
export async function startDaemon(
  config: DaemonConfigInput = {},
  extra: Partial<BuildOptions> = {},
): Promise<TestDaemon> {
  const home = await tempDir();
  const workspace = await tempDir('finger-workspace-');
  const modules = await writeFixtureModules(join(home, 'fixture-modules'));
  const app = await build({
    home,
    config: {
      log: { level: 'silent' },
      server: { port: 0 },
      workspace: { roots: [workspace] },
      ...config,
      modules: { builtin: false, paths: [modules], ...config.modules },
    },
    ...extra,
  });
  const admin = app.tokens.readAdminToken();
  const d: TestDaemon = {
    app,
    home,
    workspace,
    admin,
    async call(method, url, opts = {}) {
      const token = opts.token === undefined ? admin : opts.token;
      const res = await app.fastify.inject({
        method,
        url,
        headers: token ? { authorization: `Bearer ${token}` } : {},
        ...(opts.body !== undefined ? { payload: opts.body as object } : {}),
      });
      let json: unknown;
      try {
        json = res.json();
      } catch {
        json = undefined;
      }
      return { status: res.statusCode, json, body: res.body, headers: res.headers };
    },
    async token(role, name) {
      const res = await d.call('POST', '/v1/tokens', { body: { name: name ?? `t${++tokenSeq}`, role } });
      if (res.status !== 201) throw new Error(`token create failed: ${res.body}`);
      return res.json.token as string;
    },
    async close() {
      await app.close();
      await rm(home, { recursive: true, force: true });
      await rm(workspace, { recursive: true, force: true });
    },
  };
  return d;
}
