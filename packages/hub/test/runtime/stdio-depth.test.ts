import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MAX_JSON_DEPTH, type ModuleManifest, ulid } from '@finger/protocol';

import { silentLogger } from '../../src/logger.js';
import type { ToolCallContext } from '../../src/runtime/runtime.js';
import { StdioRuntime } from '../../src/runtime/stdio.js';

// A real child process (modules/pyworker under python3) whose reply nests past the JSON nesting
// limit: the call is answered with E_MODULE_ERROR naming the limit, and the module keeps serving.

const PYWORKER = fileURLToPath(new URL('../../../../modules/pyworker/', import.meta.url));
const MANIFEST = JSON.parse(fs.readFileSync(path.join(PYWORKER, 'module.json'), 'utf8')) as ModuleManifest;

function ctx(): ToolCallContext {
  const id = ulid();
  return {
    call_id: id,
    request_id: id,
    correlation_id: id,
    session_id: 's1',
    workflow_id: 'w1',
    lease_id: `lease-${id}`,
    deadline: Date.now() + 15_000,
    source: { kind: 'system', id: 'test', roles: ['admin'] },
    signal: new AbortController().signal,
    extendLease() {},
    progress() {},
    call: () => Promise.reject(new Error('no nested calls in this test')),
  };
}

let rt: StdioRuntime;

beforeAll(async () => {
  rt = new StdioRuntime({ manifest: MANIFEST, baseDir: PYWORKER, logger: silentLogger });
  await rt.start();
});

afterAll(async () => {
  await rt?.close();
});

describe('a stdio module reply nested past the JSON nesting limit', () => {
  it('deep JSON: is E_MODULE_ERROR with the limit, not a crash; the module serves on', async () => {
    // echo sends its arguments back as the result: 100 levels of result in a 101-level line
    const args: unknown = JSON.parse(`{"v":${'['.repeat(99)}1${']'.repeat(99)}}`);
    const err = await rt.invoke('echo', args, ctx()).then(
      () => undefined,
      (e: unknown) => e as { code: string; details: unknown; message: string },
    );
    expect({ code: err?.code, details: err?.details }).toEqual({
      code: 'E_MODULE_ERROR',
      details: { reason: 'json_depth', limit: MAX_JSON_DEPTH + 2, path: `line.result.v${'[0]'.repeat(14)}…` },
    });
    expect(err?.message).toContain(`limit of ${MAX_JSON_DEPTH + 2} levels`);
    expect(await rt.invoke('echo', { ok: [[1]] }, ctx())).toEqual({ ok: [[1]] });
  });
});
