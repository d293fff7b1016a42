export type { CliRun } from './cli-runner.js';
export { MYFINGER_BIN, runCli } from './cli-runner.js';
export type { TempDir } from './temp-home.js';
export { tempDir } from './temp-home.js';
export type { HttpAnswer, TestDaemon } from './test-daemon.js';
export { startTestDaemon } from './test-daemon.js';
export { toolContext } from './tool-context.js';
export type { EventsClient, EventsMessage } from './ws-client.js';
export { connectEvents } from './ws-client.js';
