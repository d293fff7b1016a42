import { FingerError } from '@finger/protocol';

import { InProcessRuntime } from './in-process.js';
import { McpRuntime } from './mcp.js';
import type { ModuleRuntime, RuntimeOptions } from './runtime.js';
import { StdioRuntime } from './stdio.js';

/**
 * Picks the runtime for a module by `manifest.runtime.type` (not started yet; call start()).
 * Throws E_INVALID_MANIFEST for a type it cannot run: `nats` names a module another node serves,
 * which only a hub in a cluster can reach (`runtimeSwitch` of @finger/hub/nats).
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
      const message =
        type === 'nats'
          ? 'runtime type "nats" names a module another node of a cluster serves: it can be imported by a daemon in that cluster, not run or served here (use inprocess, stdio or mcp)'
          : `runtime type "${type}" is not available in this build`;
      throw new FingerError('E_INVALID_MANIFEST', message, { issues: [{ path: '$.runtime.type', message }] });
    }
  }
}
