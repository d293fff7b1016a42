export type { AuditActor, AuditEntry, AuditEntryType, AuditRecord } from './audit/audit-entry.js';
export { AUDIT_ENTRY_TYPES, GENESIS_HASH } from './audit/audit-entry.js';
export type { AuditFile, AuditFileSystem } from './audit/audit-files.js';
export { nodeAuditFileSystem } from './audit/audit-files.js';
export type { AuditLogger, AuditLogOptions, AuditLogStats, AuditQuery } from './audit/audit-log.js';
export { AuditLog } from './audit/audit-log.js';
export type { AuditVerifyOptions, AuditVerifyResult } from './audit/audit-verify.js';
export { verifyAuditLog } from './audit/audit-verify.js';
export { canonicalJson, digestOf, sha256Hex } from './audit/canonical-json.js';
export type {
  Evaluation,
  Layer,
  Level,
  MatchedRule,
  Preview,
  ToolCallFacts,
  VerdictAction,
} from './engine/evaluation.js';
export { actionOf, LEVEL_ORDER, stricter } from './engine/evaluation.js';
export {
  checkGrantGlob,
  compileGrantGlob,
  GRANT_GLOB_PATTERN,
  GRANT_ROLE_PATTERN,
  grantRole,
} from './grants/grant-glob.js';
export type {
  GrantCall,
  GrantChecker,
  GrantDecision,
  GrantInterceptor,
  VerdictEvents,
} from './grants/grant-interceptor.js';
export { createGrantInterceptor, decideGrant } from './grants/grant-interceptor.js';
export type { GrantEntry, ToolGrantProfileOptions } from './grants/tool-grant-profile.js';
export { DEFAULT_ROLE_GRANTS, ToolGrantProfile } from './grants/tool-grant-profile.js';
export type { CommandPattern } from './risk/command-pattern.js';
export { compileCommandPattern } from './risk/command-pattern.js';
export type {
  Assignment,
  CommandFlags,
  CommandModel,
  CommandRiskLevel,
  PipelinePosition,
  Redirect,
  RiskAssessment,
  SimpleCommand,
  Via,
} from './risk/command-model.js';
export { maxLevel as maxCommandRiskLevel } from './risk/command-model.js';
export type { RiskAssessorOptions, RiskAssessorStats } from './risk/risk-assessor.js';
export { LONG_COMMAND, RiskAssessor } from './risk/risk-assessor.js';
export { safeProgramNames } from './risk/safe-commands.js';
export { atomicWriteFile } from './undo/atomic-write.js';
export type { SnapshotType } from './undo/snapshot.js';
export type { BackupEntry, BackupKind, RestoreResult, UndoManagerOptions } from './undo/undo-manager.js';
export { UNDO_DEFAULTS, UndoManager } from './undo/undo-manager.js';
export type { WorkspacePath } from './undo/workspace-path.js';
export { isInside, realRoots, resolveWorkspacePath } from './undo/workspace-path.js';
