// The daemon's side of supervised tasks: builds the TaskService (@finger/agents) from config.json —
// the `llm` adapters (`secondary_model` for planning when set), the guardrail parser,
// `safety.max_steps`, `llm.prices` — and the ports the daemon owns (hub, events, audit, the
// scratchpad module's reader).

import {
  createModelAdapter,
  type ExecutorSafety,
  parseTaskDecision,
  type ScratchpadReader,
  type TaskConfidence,
  TaskService,
  type TaskWorkspaces,
} from '@finger/agents';
import type { AuditRecord, PerceptionBus, ToolGrantProfile } from '@finger/firewall';
import type { Clock, EventBus, MessageHub } from '@finger/hub';

import type { DaemonConfig } from './config.js';

/**
 * Builds the TaskService from the daemon's config: the `llm` adapters (`secondary_model` for
 * planning when set), the guardrail parser, `safety.max_steps`, `llm.prices`. Marks the tasks a
 * previous process left running as INTERRUPTED.
 */
export function wireTasks(o: {
  hub: MessageHub;
  events: EventBus;
  grants: ToolGrantProfile;
  home: string;
  workspaceRoots: readonly string[];
  workspaces: TaskWorkspaces;
  confidence?: TaskConfidence;
  homeDir?: string;
  tokenFile?: string;
  config: DaemonConfig;
  scratchpad?: ScratchpadReader;
  perception?: PerceptionBus;
  safety?: ExecutorSafety;
  audit?: { append(record: AuditRecord): Promise<unknown> };
  clock: Clock;
  logger: { warn(obj: object, msg?: string): void };
}): TaskService {
  const llm = o.config.llm;
  return new TaskService({
    hub: o.hub,
    events: o.events,
    grants: o.grants,
    home: o.home,
    workspaceRoots: o.workspaceRoots,
    workspaces: o.workspaces,
    ...(o.confidence ? { confidence: o.confidence } : {}),
    ...(o.homeDir !== undefined ? { homeDir: o.homeDir } : {}),
    ...(o.tokenFile !== undefined ? { tokenFile: o.tokenFile } : {}),
    model: createModelAdapter(llm),
    ...(llm.secondary_model ? { secondary_model: createModelAdapter(llm, { secondary: true }) } : {}),
    parseDecision: parseTaskDecision,
    ...(o.scratchpad ? { scratchpad: o.scratchpad } : {}),
    ...(o.perception ? { perception: o.perception } : {}),
    ...(o.safety ? { safety: o.safety } : {}),
    ...(o.audit ? { audit: o.audit } : {}),
    ...(llm.prices ? { prices: llm.prices } : {}),
    max_steps: o.config.safety.max_steps,
    clock: o.clock,
    logger: o.logger,
  });
}
