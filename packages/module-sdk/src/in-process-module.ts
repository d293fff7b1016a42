import type { ModuleManifest } from '@finger/protocol';

import type { Logger } from './logger.js';
import type { ToolCallContext } from './tool-call-context.js';

/** Health of a runtime or module as reported by its check. */
export interface RuntimeHealth {
  ok: boolean;
  detail?: string;
  /** A module hosted elsewhere whose last node left and still drains the calls it took. */
  draining?: boolean;
}

/** Shape of an in-process module's entry: default export or named `createModule`. */
export interface InProcessModule {
  tools: Record<string, (args: any, ctx: ToolCallContext) => unknown | Promise<unknown>>;
  health?: () => RuntimeHealth | Promise<RuntimeHealth>;
  close?: () => void | Promise<void>;
  /**
   * Kill switch (halt): kills every process the module started for its calls and resolves once
   * they are gone. The module stays usable.
   */
  kill?: () => Promise<void>;
}

/** What the in-process runtime hands a module's factory (its default export or `createModule`). */
export interface InProcessModuleFactoryOptions {
  manifest: ModuleManifest;
  logger: Logger;
  /** Operator settings for this module (empty object when none are configured). */
  settings: Record<string, unknown>;
  /** Directory holding the module.json. */
  baseDir: string;
}
