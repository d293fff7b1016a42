export type { CliChild, CliRun } from './cli-runner.js';
export { MYFINGER_BIN, runCli, startCli } from './cli-runner.js';
export { executorDecision } from './executor-decision.js';
export type {
  FakeLlmApi,
  FakeLlmDropReply,
  FakeLlmRawReply,
  FakeLlmReply,
  FakeLlmRequest,
  FakeLlmScript,
  FakeLlmServer,
  FakeLlmServerOptions,
  FakeLlmStatusReply,
  FakeLlmTextReply,
} from './fake-llm-server.js';
export { startFakeLlmServer } from './fake-llm-server.js';
export type {
  CallVerdict,
  ClaudeCodeVariant,
  DayCall,
  DayCallSpec,
  DayDecision,
  DayFigures,
  DayKind,
  DayOutcome,
  DayPlaces,
  DayPrompt,
  DayRun,
  DayRunOptions,
  DayScript,
  DayStep,
  ModelOutcome,
  SystemFigures,
} from './human-day/index.js';
export {
  bashPrefix,
  bashSegments,
  claudeCodeDay,
  claudeCodeFigures,
  dayCalls,
  dayRows,
  dayTable,
  figures,
  fingerFigures,
  formatDayTable,
  GUARD_RECORDED,
  guardAllowlist,
  HUMAN_DAY_DIR,
  HUMAN_DAY_GUARD,
  readDayScript,
  runHumanDay,
  stepOffsetMs,
} from './human-day/index.js';
export { pidsWith } from './live-pids.js';
export { ManualClock } from './manual-clock.js';
export { isRedis, redisServerBinary, RedisServerChild, redisUrlForTests, testRedisPrefix } from './redis-for-tests.js';
export { requestEnvelope } from './request-envelope.js';
export { sandboxForTests } from './sandbox-for-tests.js';
export type { NatsServerChild, ServiceLookup, ServiceSpec } from './services.js';
export {
  binaryForTests,
  firstBytes,
  freePort,
  hostPort,
  natsServerBinary,
  natsUrlForTests,
  serviceUrlForTests,
  startConfiguredNats,
  testClusterName,
} from './services.js';
export type { TempDir } from './temp-home.js';
export { tempDir } from './temp-home.js';
export type { HttpAnswer, TestDaemon } from './test-daemon.js';
export { startTestDaemon } from './test-daemon.js';
export { thrownBy } from './thrown.js';
export { toolContext } from './tool-context.js';
export { waitFor, waitUntil } from './wait-for.js';
export type { EventsClient, EventsMessage } from './ws-client.js';
export { connectEvents } from './ws-client.js';
