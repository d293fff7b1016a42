export { canonicalJson, jsonString } from './canonical-json.js';
export type { Envelope, EnvelopeKind, LeaseInfo, Principal } from './envelope.js';
export { envelopeSchema } from './envelope.js';
export type { ErrorCode } from './error-codes.js';
export { ERROR_CODE_LIST, ERROR_CODES, httpStatusFor, isErrorCode } from './error-codes.js';
export type { EventType, FingerEvent } from './events.js';
export { EVENT_TYPES, isEventType } from './events.js';
export type { ErrorInfo } from './finger-error.js';
export { FingerError, isFingerError, toErrorInfo } from './finger-error.js';
export type { HubCommand } from './hub-command.js';
export { isHubCommand, parseHubCommand } from './hub-command.js';
export { internId, isUlid, ulid } from './ids.js';
export type { JsonSyntaxProblem } from './json-error-position.js';
export { describeJsonSyntax, jsonErrorPosition, jsonSyntaxProblem } from './json-error-position.js';
export type { JsonLimitOptions, JsonLimitProblem } from './json-limits.js';
export {
  formatJsonPath,
  jsonLimitError,
  jsonLimitProblem,
  MAX_JSON_DEPTH,
  MAX_WIRE_JSON_DEPTH,
} from './json-limits.js';
export type { CapabilityLevel, ModuleManifest, PermissionLevel, RiskLevel, RuntimeSpec, ToolSpec } from './manifest.js';
export { manifestSchema, MCP_MODULE_ID_PATTERN, MODULE_ID_PATTERN } from './manifest.js';
export { rfc3339 } from './time.js';
export type { ValidationIssue } from './validation.js';
export { compileChecker, createAjv, formatAjvErrors } from './validation.js';
export { assertEnvelope, assertManifest, envelopeIssues, manifestIssues } from './validators.js';
