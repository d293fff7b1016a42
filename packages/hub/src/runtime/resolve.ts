import { FingerError } from '@finger/protocol';

import { InProcessRuntime } from './in-process.js';
import { McpRuntime } from './mcp.js';
import type { ModuleRuntime, RuntimeOptions } from './runtime.js';
import { StdioRuntime } from './stdio.js';

/**
 * Picks the runtime for a module by `manifest.runtime.type` (not started yet; call start()).
 * Throws E_INVALID_MANIFEST for a type this build cannot run (`nats` for now).
 */
export function createRuntime(opts: RuntimeOptions): ModuleRuntime {
  const type = opts.manifest.runtime.type;
  switch (type) {
    case 'inprocess':
      return new InProcessRuntime(opts);
    case 'stdio':
      return new StdioRuntime(opts);
    case 'mcp':
      return new McpRuntime(opts);
    default: {
      const message = `runtime type "${type}" is not available in this build`;
      throw new FingerError('E_INVALID_MANIFEST', message, { issues: [{ path: '$.runtime.type', message }] });
    }
  }
}
