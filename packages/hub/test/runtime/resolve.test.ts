import { describe, expect, it } from 'vitest';

import type { ModuleManifest, RuntimeSpec } from '@finger/protocol';

import { silentLogger } from '../../src/logger.js';
import { InProcessRuntime } from '../../src/runtime/in-process.js';
import { McpRuntime } from '../../src/runtime/mcp.js';
import { createRuntime } from '../../src/runtime/resolve.js';
import { StdioRuntime } from '../../src/runtime/stdio.js';

function opts(runtime: RuntimeSpec) {
  const manifest: ModuleManifest = { id: 'm', name: 'm', version: '1.0.0', kind: 'tool', runtime, tools: [] };
  return { manifest, baseDir: '/nonexistent', logger: silentLogger };
}

describe('createRuntime', () => {
  it('picks the runtime by manifest.runtime.type', () => {
    expect(createRuntime(opts({ type: 'inprocess', entry: './x.js' }))).toBeInstanceOf(InProcessRuntime);
    expect(createRuntime(opts({ type: 'stdio', command: ['true'] }))).toBeInstanceOf(StdioRuntime);
    expect(createRuntime(opts({ type: 'mcp', transport: 'http', url: 'http://127.0.0.1:1' }))).toBeInstanceOf(
      McpRuntime,
    );
  });

  it.each([
    [{ type: 'nats' } as RuntimeSpec, /^runtime type "nats" names a module another node of a cluster serves: /],
    [
      { type: 'carrier-pigeon' } as unknown as RuntimeSpec,
      /^runtime type "carrier-pigeon" is not available in this build$/,
    ],
  ])('refuses %o with E_INVALID_MANIFEST', (spec, pattern) => {
    let err: unknown;
    try {
      createRuntime(opts(spec));
    } catch (e) {
      err = e;
    }
    const message = expect.stringMatching(pattern);
    expect(err).toMatchObject({
      code: 'E_INVALID_MANIFEST',
      message,
      details: { issues: [{ path: '$.runtime.type', message }] },
    });
  });
});
