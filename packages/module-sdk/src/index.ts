// `@finger/module-sdk`: the types a tool module is written against — the context of a tool call,
// the in-process module shape and its factory options, the manifest types and the lines of the
// stdio protocol. Types only: importing it loads no code. Modules import these instead of the
// hub's internals; the hub implements them (issue 26 item 3, docs/architecture.md "Packages").

export type { InProcessModule, InProcessModuleFactoryOptions, RuntimeHealth } from './in-process-module.js';
export type { Logger } from './logger.js';
export type {
  StdioCallLine,
  StdioCallMeta,
  StdioCancelLine,
  StdioHostLine,
  StdioModuleLine,
  StdioPingLine,
} from './stdio-lines.js';
export type { ToolCallContext } from './tool-call-context.js';
export type {
  CapabilityLevel,
  ModuleManifest,
  PermissionLevel,
  RiskLevel,
  RuntimeSpec,
  ToolSpec,
} from '@finger/protocol';
