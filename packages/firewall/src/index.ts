export type { AuditAcknowledgeOptions, AuditAcknowledgeResult } from './audit/audit-acknowledge.js';
export { acknowledgeAuditGap } from './audit/audit-acknowledge.js';
export type { AuditAnchor } from './audit/audit-anchor.js';
export type { AuditArchiveResult } from './audit/audit-archive.js';
export { archiveAuditLog } from './audit/audit-archive.js';
export type { AuditActor, AuditEntry, AuditEntryType, AuditRecord } from './audit/audit-entry.js';
export { AUDIT_ENTRY_TYPES, GENESIS_HASH } from './audit/audit-entry.js';
export type { AuditFile, AuditFileSystem } from './audit/audit-files.js';
export { nodeAuditFileSystem } from './audit/audit-files.js';
export type { AuditHead, AuditHeadStore, SourcedHead } from './audit/audit-head.js';
export { asAuditHead, auditHeadPath, FileAuditHeadStore, readAuditHeadFile } from './audit/audit-head.js';
export type { AuditLogger, AuditLogOptions, AuditLogStats, AuditQuery, AuditWriteFailure } from './audit/audit-log.js';
export { AuditLog } from './audit/audit-log.js';
export type { AuditVerifyOptions, AuditVerifyResult } from './audit/audit-verify.js';
export { verifyAuditLog } from './audit/audit-verify.js';
export { canonicalJson, digestOf, sha256Hex } from './audit/canonical-json.js';
export type { Firewall, FirewallEvents, FirewallOptions } from './create-firewall.js';
export { createFirewall } from './create-firewall.js';
export type { FilterResult } from './engine/argument-filter.js';
export { ArgumentFilter } from './engine/argument-filter.js';
export type { BehaviourOptions, LayerFinding } from './engine/behaviour-monitor.js';
export { BEHAVIOUR_DEFAULTS, BehaviourMonitor, callFingerprint } from './engine/behaviour-monitor.js';
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
export type {
  CommandAssessor,
  EvaluateOptions,
  FirewallEngineOptions,
  PolicySource,
} from './engine/firewall-engine.js';
export { FirewallEngine, nodeReadFile } from './engine/firewall-engine.js';
export type {
  FirewallCall,
  FirewallEvaluator,
  FirewallGate,
  FirewallGateDecision,
  FirewallInterceptor,
  FirewallInterceptorOptions,
  FirewallTools,
  SandboxProfileChannel,
} from './engine/firewall-interceptor.js';
export { createFirewallInterceptor } from './engine/firewall-interceptor.js';
export type { ReadFile } from './engine/preview.js';
export { argsPreview, commandPreview, MAX_DIFF_BYTES, writePreview } from './engine/preview.js';
export { unifiedDiff } from './engine/unified-diff.js';
export type { VerdictCacheStats } from './engine/verdict-cache.js';
export type { AbandonedHoldsAudit, AbandonedHoldsOptions } from './gate/abandoned-holds.js';
export { ABANDONED_REASON, abandonedAuditRecord, pairHolds, settleAbandonedHolds } from './gate/abandoned-holds.js';
export type { BindingCheck } from './gate/binding.js';
export { argsDigest, bindingHolds, bindingOf, verifyBinding } from './gate/binding.js';
export type { CallShape, ShapeClass, ShapeFacts, ShapePath, ShellCommandShape } from './gate/call-shape.js';
export { deriveShape, describeShape, matchShape, narrows, parseShape, shapeClasses } from './gate/call-shape.js';
export type {
  AbortPhase,
  AbortResult,
  AnswerResult,
  ApprovalBinding,
  ApprovalFacts,
  ApprovalReview,
  DecidedBy,
  GateAnswer,
  GateAnswerDecision,
  GateAnswerer,
  GateAudit,
  GateClock,
  GateDecision,
  GateEvents,
  GateLogger,
  GatePerception,
  GateRejectCode,
  HumanGateOptions,
  PendingApproval,
  Reevaluate,
  ReviewerConfig,
  ReviewerMode,
  StandingOffer,
} from './gate/gate-types.js';
export { GATE_ANSWER_DECISIONS, systemGateClock } from './gate/gate-types.js';
export {
  DEFAULT_APPROVAL_TIMEOUT_MS,
  DEFAULT_HUMAN_RESERVE_SHARE,
  DEFAULT_MAX_PENDING,
  DEFAULT_MAX_PENDING_PER_PRINCIPAL,
  DEFAULT_PERSISTENT_MS,
  HumanGate,
  isHumanOnly,
  MAX_STANDING_MS,
  riskExplanation,
} from './gate/human-gate.js';
export { refuseHoldsOfReadOnlyCallers } from './gate/read-only-callers.js';
export type { ReviewerRun, ReviewerVerdict } from './gate/reviewer.js';
export { DEFAULT_REVIEWER_TIMEOUT_MS, parseReviewerOutput, runReviewer } from './gate/reviewer.js';
export type { SessionSnapshot } from './gate/session-state.js';
export { principalKey, SessionState } from './gate/session-state.js';
export type { ShapeResolver, ShapeResolverOptions } from './gate/shape-facts.js';
export { createShapeResolver } from './gate/shape-facts.js';
export type { StandingApproval, StandingQuery, StandingScope } from './gate/standing-approvals.js';
export { coverableLevel, covers, isLive, STANDING_SCOPES, StandingApprovals } from './gate/standing-approvals.js';
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
export type { HostLookupFn, HostResolverOptions } from './net/host-resolver.js';
export { HostResolver, systemHostLookup } from './net/host-resolver.js';
export type { HostResolution, ResolvedHosts, UrlArgument, UrlFinding } from './net/url-args.js';
export { hostsToResolve, judgeUrls, parseHttpUrl, urlArguments } from './net/url-args.js';
export type { AdaptationAction, AdaptationConfig, AdaptationInput } from './perception/adaptation.js';
export { adapt, adaptationConfig, avoidanceHint, DEFAULT_ADAPTATION, explainHint } from './perception/adaptation.js';
export type { AdaptationLoop, AdaptationLoopOptions } from './perception/adaptation-loop.js';
export { createAdaptationLoop } from './perception/adaptation-loop.js';
export type {
  AgentHint,
  ApprovalSample,
  ApprovalSource,
  ClassPerception,
  PerceptionBusOptions,
  PerceptionCounts,
  RejectionSample,
  RejectionSource,
  ResultClass,
  SessionPerception,
  ToolPerception,
} from './perception/perception-bus.js';
export { PerceptionBus } from './perception/perception-bus.js';
export type { CommandPattern } from './policy/command-pattern.js';
export { compileCommandPattern } from './policy/command-pattern.js';
export type { CompileContext } from './policy/compile-policy.js';
export { compilePolicy, DEFAULT_SHELL_TOOLS } from './policy/compile-policy.js';
export type { CompiledDefaults, ToolRules } from './policy/compiled-policy.js';
export { CompiledPolicy } from './policy/compiled-policy.js';
export type {
  EffectivePolicy,
  PermissionVerdict,
  PolicyFacts,
  SandboxProfileName,
  WorkspaceSandboxFacts,
} from './policy/evaluate-policy.js';
export { COMMAND_RISK_DEFAULTS, evaluatePolicy, RISK_LEVEL_DEFAULTS } from './policy/evaluate-policy.js';
export { policySchema, policySchemaIssues } from './policy/policy-schema.js';
export type { PolicyAudit, PolicyChange, PolicyStoreOptions, UserPolicyPersistence } from './policy/policy-store.js';
export { ADAPTATION_RULE_PREFIX, PolicyStore } from './policy/policy-store.js';
export type {
  ExampleCall,
  KnownTool,
  PolicyDefaults,
  PolicyDocument,
  PolicyLayer,
  PolicyRule,
  PolicyWarning,
} from './policy/policy-types.js';
export { emptyPolicyDocument } from './policy/policy-types.js';
export type { CompiledRule } from './policy/rule-match.js';
export type {
  RepeatEffect,
  RepeatEvent,
  StepEffect,
  SystemSafetyEffect,
  SystemSafetyEvent,
  SystemSafetyState,
} from './safety/breakers.js';
export {
  budgetTransition,
  cascadeTransition,
  denialSummary,
  denialTransition,
  MAX_DENIAL_NOTES,
  noteDenial,
  pushWindow,
  repeatTransition,
  stepTransition,
  systemTransition,
  timeTransition,
} from './safety/breakers.js';
export { FileSafetyStore } from './safety/file-safety-store.js';
export { MemorySafetyStore } from './safety/memory-safety-store.js';
export type { SafetyCall, SafetyInterceptor } from './safety/safety-interceptor.js';
export { createSafetyInterceptor, DENIAL_CODES } from './safety/safety-interceptor.js';
export type {
  HaltHandler,
  SafetyActor,
  SafetyCorrelation,
  SafetyMonitorOptions,
  SafetyState,
  TaskBudget,
} from './safety/safety-monitor.js';
export { SafetyMonitor, SYSTEM_ALERT_REPEAT } from './safety/safety-monitor.js';
export type { CounterKind, SafetyStateStore } from './safety/safety-state-store.js';
export { counterKey } from './safety/safety-state-store.js';
export type {
  AgentBreakers,
  AgentSafetyStatus,
  BreakerName,
  DenialNote,
  LockoutCause,
  LockoutRecord,
  RepeatState,
  SafetyChange,
  SafetyConfig,
  WindowState,
} from './safety/safety-types.js';
export { emptyAgentBreakers, SAFETY_DEFAULTS } from './safety/safety-types.js';
export { isPathArg, isWriteTool, PATH_ARG_NAMES } from './sandbox/path-args.js';
export type {
  PathSandboxOptions,
  ResolvedPath,
  ResolvedPaths,
  SandboxCall,
  SandboxVerdict,
} from './sandbox/path-sandbox.js';
export { PathSandbox } from './sandbox/path-sandbox.js';
export type { SandboxFs } from './sandbox/real-path.js';
export { nodeSandboxFs } from './sandbox/real-path.js';
// the shell risk assessor: @finger/shell-risk, re-exported for the firewall's callers (the engine
// takes a RiskAssessor; an Evaluation carries its RiskAssessment)
export type {
  Assignment,
  CommandFlags,
  CommandModel,
  CommandRiskLevel,
  Confinement,
  DaemonFacts,
  FunctionDefinition,
  LoopVariable,
  PipelinePosition,
  Redirect,
  RiskAssessment,
  RiskAssessorOptions,
  RiskAssessorStats,
  SimpleCommand,
  Via,
} from '@finger/shell-risk';
export {
  confinementOf,
  FORBIDDEN_REASON,
  LONG_COMMAND,
  MAX_PARSE_LENGTH,
  maxLevel as maxCommandRiskLevel,
  networkNeed,
  RiskAssessor,
  safeProgramNames,
} from '@finger/shell-risk';
// address classification: @finger/net-address, re-exported for the firewall's callers
export type { AddressClass, AddressKind, AddressPolicyOptions, AddressVerdict } from '@finger/net-address';
export { addressClass, AddressPolicy, canonicalAddress, classifyAddress, parseAddress } from '@finger/net-address';
// undo, backups and atomic workspace writes: @finger/workspace, re-exported for the firewall's callers
export type {
  BackupEntry,
  BackupKind,
  LinkBounds,
  RestoreResult,
  RestoreScope,
  SnapshotType,
  SnapshotWord,
  UndoManagerOptions,
  WorkspacePath,
} from '@finger/workspace';
export {
  atomicWriteFile,
  isInside,
  LINK_DEFAULTS,
  planLinkSnapshot,
  realRoots,
  resolveWorkspacePath,
  UNDO_DEFAULTS,
  UndoManager,
} from '@finger/workspace';
