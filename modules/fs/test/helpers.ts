import { promises as fsp, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { expect } from 'vitest';

import { InProcessRuntime, silentLogger, type ToolCallContext } from '@finger/hub';
import { createAjv, formatAjvErrors, type ModuleManifest } from '@finger/protocol';
import { toolContext } from '@finger/testkit';

export const MODULE_DIR = fileURLToPath(new URL('..', import.meta.url));
export const MANIFEST = JSON.parse(readFileSync(path.join(MODULE_DIR, 'module.json'), 'utf8')) as ModuleManifest;

const ajv = createAjv();

const ctx = (): ToolCallContext => toolContext(30_000);

/** A started fs module over a fresh temp workspace. */
export interface FsHarness {
  tmp: string;
  ws: string;
  backups: string;
  rt: InProcessRuntime;
  /** Invokes a tool after checking `args` against its input_schema; checks the result against its output_schema. */
  call<T = any>(tool: string, args: Record<string, unknown>): Promise<T>;
  /** Invokes a tool without the schema checks; resolves with the error code or 'resolved'. */
  codeOf(tool: string, args: Record<string, unknown>): Promise<string>;
  /** Invokes a tool expecting an error; resolves with it. */
  errorOf(tool: string, args: Record<string, unknown>): Promise<{ code: string; message: string; details?: any }>;
  close(): Promise<void>;
}

/** Starts the module from its sources (no build) through the hub's InProcessRuntime. */
export async function startFs(settings: Record<string, unknown> = {}): Promise<FsHarness> {
  const tmp = await fsp.realpath(await fsp.mkdtemp(path.join(os.tmpdir(), 'finger-fs-')));
  const ws = path.join(tmp, 'workspace');
  const backups = path.join(tmp, 'backups');
  const rt = new InProcessRuntime({
    manifest: { ...MANIFEST, runtime: { type: 'inprocess', entry: './src/index.ts' } },
    baseDir: MODULE_DIR,
    logger: silentLogger,
    settings: { home: tmp, workspace_roots: [ws], backups_dir: backups, ...settings },
  });
  await rt.start();
  const spec = (tool: string) => MANIFEST.tools.find((t) => t.name === tool)!;
  const errorOf = async (tool: string, args: Record<string, unknown>) => {
    try {
      await rt.invoke(tool, args, ctx());
    } catch (e) {
      return e as { code: string; message: string; details?: any };
    }
    throw new Error(`${tool} unexpectedly succeeded`);
  };
  return {
    tmp,
    ws,
    backups,
    rt,
    async call(tool, args) {
      const s = spec(tool);
      const vin = ajv.compile(s.input_schema!);
      expect(formatAjvErrors(vin(args) ? [] : vin.errors)).toEqual([]);
      const out = await rt.invoke(tool, args, ctx());
      const vout = ajv.compile(s.output_schema!);
      expect(formatAjvErrors(vout(out) ? [] : vout.errors)).toEqual([]);
      return out as any;
    },
    async codeOf(tool, args) {
      try {
        await rt.invoke(tool, args, ctx());
      } catch (e) {
        return (e as { code: string }).code;
      }
      return 'resolved';
    },
    errorOf,
    async close() {
      await rt.close();
      await fsp.rm(tmp, { recursive: true, force: true });
    },
  };
}
