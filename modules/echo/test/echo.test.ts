import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import { InProcessRuntime, silentLogger, type ToolCallContext } from '@finger/hub';
import { assertManifest, type ModuleManifest } from '@finger/protocol';
import { toolContext } from '@finger/testkit';

const DIR = fileURLToPath(new URL('..', import.meta.url));
const MANIFEST = JSON.parse(fs.readFileSync(path.join(DIR, 'module.json'), 'utf8')) as ModuleManifest;

const makeCtx = (): ToolCallContext => toolContext(5000);

let rt: InProcessRuntime | undefined;
afterEach(async () => {
  await rt?.close();
});

describe('echo module', () => {
  it('has a valid manifest with exactly one low-risk, read-only, idempotent tool', () => {
    expect(() => assertManifest(MANIFEST)).not.toThrow();
    expect(MANIFEST.id).toBe('echo');
    expect(MANIFEST.runtime).toEqual({ type: 'inprocess', entry: './dist/index.js' });
    expect(MANIFEST.grants).toEqual(['supervisor', 'executor', 'reviewer']);
    expect(MANIFEST.tools.map((t) => [t.name, t.risk_level, t.capability_level, t.side_effects, t.idempotent])).toEqual(
      [['echo', 'low', 'L0', false, true]],
    );
    expect(MANIFEST.tools[0]?.input_schema).toEqual({ type: 'object' });
  });

  it('returns its arguments unchanged through the in-process runtime', async () => {
    // The sources, so no build is needed: vitest transforms the .ts entry.
    rt = new InProcessRuntime({
      manifest: { ...MANIFEST, runtime: { type: 'inprocess', entry: './src/index.ts' } },
      baseDir: DIR,
      logger: silentLogger,
    });
    await rt.start();
    const args = { text: 'hi' };
    expect(await rt.invoke('echo', args, makeCtx())).toBe(args);
    expect(await rt.invoke('echo', { text: 'hi' }, makeCtx())).toEqual({ text: 'hi' });
    expect(await rt.health(100)).toEqual({ ok: true });
  });
});
