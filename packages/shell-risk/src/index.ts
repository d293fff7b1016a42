// `@finger/shell-risk`: what a shell command line will do, judged before it runs — parsed with the
// bash grammar into a canonical CommandModel, each segment classified `safe | moderate | dangerous`
// with reasons a person can act on (issue 26 item 3). Pure apart from the grammar's WASM loading
// and the symbolic links it follows; it knows nothing of policies, grants or the human gate. The
// firewall asks it for an assessment and for the few facts below (what a command reads, writes,
// needs from the network) and decides; the way Codex keeps `execpolicy` apart from its manager.
//
// What lives where: parse/ (grammar, model builder, quoting), options/ (programs' option tables),
// wrappers/ (commands that run other commands), knowledge/ (programs; places: paths, homes,
// credential stores; finger's own home and daemon), rules/ (the findings of one segment and the
// classification), flow/ (secrets travelling through a line to a sender), facts/ (what the
// firewall's sandbox reads of a model).

export type {
  Assignment,
  CommandFlags,
  CommandModel,
  CommandRiskLevel,
  FunctionDefinition,
  LoopVariable,
  PipelinePosition,
  Redirect,
  RiskAssessment,
  SimpleCommand,
  Via,
} from './command-model.js';
export { maxLevel } from './command-model.js';
export { TOO_MANY_WORDS } from './facts/read-words.js';
export type { Confinement, SnapshotWord } from './facts/workspace-confinement.js';
export { confinementOf } from './facts/workspace-confinement.js';
export type { DaemonFacts } from './knowledge/finger/finger-self.js';
export { FORBIDDEN_REASON } from './knowledge/finger/forbidden.js';
export type { AssessContext } from './knowledge/places/cwd-paths.js';
export type { KnownHomes } from './knowledge/places/known-homes.js';
export { isStandardProgramPath, knownHomes, sensitiveWriteTarget } from './knowledge/places/paths.js';
export { startupFile } from './knowledge/places/startup-files.js';
export { networkNeed } from './knowledge/programs/network-need.js';
export { readsScriptFromStdin } from './knowledge/programs/programs.js';
export type { NetworkNeeds } from './knowledge/programs/registry-fetch.js';
export { fetchesFromManifest, networkNeeds } from './knowledge/programs/registry-fetch.js';
export { safeProgramNames } from './knowledge/programs/safe-commands.js';
export type { ParsedArgs } from './options/options.js';
export { parseArgs, SUBCOMMAND_PROGRAMS } from './options/options.js';
export { subcommandWords } from './options/subcommand-words.js';
export { stripInvisible } from './parse/unicode.js';
export { splitPatternWords } from './parse/words.js';
export type { RiskAssessorOptions, RiskAssessorStats } from './risk-assessor.js';
export { LONG_COMMAND, MAX_PARSE_LENGTH, RiskAssessor } from './risk-assessor.js';
