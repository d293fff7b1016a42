/**
 * scratchpad: an agent's short working memory in the workspace, `.finger/scratchpad.md`, with a
 * `# Current Task` section (at most 10 lines) and a `# Todo` checklist. `update` rewrites one
 * section and answers exactly `OK`; `read` returns the file (the empty template when there is
 * none). A supervised task's calls use the task's own workspace (setting `workspace_for`). The default export is the factory the hub's in-process runtime calls with the settings.
 */
import path from 'node:path';

import type { InProcessModuleFactoryOptions } from '@finger/module-sdk';
import { FingerError, type Principal } from '@finger/protocol';

import { checkSection, EMPTY_SCRATCHPAD, replaceSection, type SectionType } from './scratchpad-format.js';
import { ScratchpadStore } from './scratchpad-store.js';

export type { SectionType } from './scratchpad-format.js';
export { checkSection, EMPTY_SCRATCHPAD, HEADERS, replaceSection, TASK_MAX_LINES } from './scratchpad-format.js';
export { SCRATCHPAD_DIR, SCRATCHPAD_FILE, ScratchpadStore } from './scratchpad-store.js';

/** Arguments of `scratchpad.update`. */
export interface UpdateParams {
  type: SectionType;
  content: string;
}

/** Default of the `max_bytes` setting: the largest content one update may carry. */
export const DEFAULT_MAX_BYTES = 64 * 1024;

/** What the hub's in-process runtime passes a tool beside its arguments (the caller, as the hub set it). */
export interface ScratchpadCallContext {
  readonly source?: Principal;
}

/** The daemon's resolver of a supervised task's own workspace (setting `workspace_for`, in-process only). */
export type WorkspaceFor = (source: Principal) => string | undefined;

/**
 * The daemon's hook for its own reads (setting `expose_reader`, in-process only): the module hands
 * it a reader of a task workspace's scratchpad through this store — the same symlink and root
 * checks as the tool, and no tool call (the agent's loop detector never counts the daemon's reads).
 * The reader resolves undefined when nothing was written yet (the empty template).
 */
export type ExposeReader = (read: (workspace: string) => Promise<string | undefined>) => void;

/** At most this many task workspaces keep a store object; past it the map starts over. */
const MAX_TASK_STORES = 256;

/** The module object. */
export interface ScratchpadModule {
  tools: {
    update: (args: UpdateParams, call?: ScratchpadCallContext) => Promise<'OK'>;
    read: (args?: Record<string, never>, call?: ScratchpadCallContext) => Promise<string>;
  };
  /** The scratchpad file this module writes. */
  readonly file: string;
}

function setting(key: string, expected: string): never {
  throw new FingerError('E_MODULE_UNHEALTHY', `module "scratchpad": setting ${key} must be ${expected}`, {
    setting: key,
  });
}

/** The workspace root: `settings.workspace`, else the first of `settings.workspace_roots`. */
function workspaceOf(settings: Record<string, unknown>): string {
  const explicit = settings.workspace;
  if (explicit !== undefined) {
    if (typeof explicit !== 'string' || !path.isAbsolute(explicit)) setting('workspace', 'an absolute path');
    return explicit;
  }
  const roots = settings.workspace_roots;
  if (!Array.isArray(roots) || typeof roots[0] !== 'string' || !path.isAbsolute(roots[0])) {
    setting('workspace_roots', 'a non-empty array of absolute paths (or set workspace)');
  }
  return roots[0] as string;
}

/**
 * Builds the module over the workspace named by the settings. Throws E_MODULE_UNHEALTHY naming
 * the setting when there is no usable workspace or `max_bytes` is malformed.
 */
export function createScratchpadModule(settings: Record<string, unknown> = {}): ScratchpadModule {
  const root = workspaceOf(settings);
  const maxBytes = settings.max_bytes ?? DEFAULT_MAX_BYTES;
  if (typeof maxBytes !== 'number' || !Number.isInteger(maxBytes) || maxBytes < 1) {
    setting('max_bytes', 'a positive integer');
  }
  const store = new ScratchpadStore(root);
  // A supervised task's scratchpad lives in its own workspace (§3.13): the daemon's resolver maps the
  // task's principal (the very object the hub passes, never a payload field) to that directory.
  const workspaceFor =
    typeof settings.workspace_for === 'function' ? (settings.workspace_for as WorkspaceFor) : undefined;
  const taskStores = new Map<string, ScratchpadStore>();
  const storeAt = (ws: string | undefined): ScratchpadStore => {
    if (ws === undefined || !path.isAbsolute(ws)) return store;
    let s = taskStores.get(ws);
    if (s === undefined) {
      if (taskStores.size >= MAX_TASK_STORES) taskStores.clear();
      s = new ScratchpadStore(ws);
      taskStores.set(ws, s);
    }
    return s;
  };
  const storeFor = (call?: ScratchpadCallContext): ScratchpadStore =>
    storeAt(workspaceFor !== undefined && call?.source !== undefined ? workspaceFor(call.source) : undefined);
  if (typeof settings.expose_reader === 'function')
    (settings.expose_reader as ExposeReader)(async (workspace) => {
      const text = await storeAt(workspace).read();
      return text === EMPTY_SCRATCHPAD ? undefined : text;
    });
  return {
    file: store.file,
    tools: {
      /**
       * Rewrites one section, leaving every byte of the other as it was. Rejects E_INVALID_ARGS
       * naming the rule that the content breaks (nothing is written then), E_FORBIDDEN when the
       * scratchpad path leads out of the workspace, E_STORE_UNAVAILABLE when the disk fails.
       */
      async update(args: UpdateParams, call?: ScratchpadCallContext): Promise<'OK'> {
        const a = (args ?? {}) as Partial<UpdateParams>;
        if (a.type !== 'task' && a.type !== 'todo') {
          throw new FingerError('E_INVALID_ARGS', 'type must be "task" or "todo"', {
            issues: [{ path: '$.type', message: 'must be "task" or "todo"' }],
          });
        }
        if (typeof a.content !== 'string') {
          throw new FingerError('E_INVALID_ARGS', 'content must be a string', {
            issues: [{ path: '$.content', message: 'must be a string' }],
          });
        }
        const type = a.type;
        const lines = checkSection(type, a.content, maxBytes);
        await storeFor(call).update((current) => replaceSection(current, type, lines));
        return 'OK';
      },
      /** The file's text as stored; the empty template when there is none yet. */
      read(_args?: Record<string, never>, call?: ScratchpadCallContext): Promise<string> {
        return storeFor(call).read();
      },
    },
  };
}

/** The entry the in-process runtime loads. */
export default function createModule(opts: InProcessModuleFactoryOptions): ScratchpadModule {
  return createScratchpadModule(opts.settings);
}
