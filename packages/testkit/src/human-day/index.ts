/**
 * The scripted day of issue 23 item 6: a working day of an agent's tool calls driven over HTTP
 * against a real daemon, a scripted person answering the holds, the shell behind a guard, and the
 * same day under a model of Claude Code's permission rules. Used by test/e2e/human-day.test.ts
 * and `npm run bench -- human-day`. The data and the model's sources: test/fixtures/human-day/.
 */
export type { ClaudeCodeVariant, ModelOutcome } from './claude-code-model.js';
export { bashPrefix, bashSegments, claudeCodeDay } from './claude-code-model.js';
export type { CallVerdict, DayFigures, SystemFigures } from './day-report.js';
export { claudeCodeFigures, dayRows, dayTable, figures, fingerFigures, formatDayTable } from './day-report.js';
export type { DayCall, DayCallSpec, DayDecision, DayKind, DayPlaces, DayScript, DayStep } from './day-script.js';
export { dayCalls, guardAllowlist, HUMAN_DAY_DIR, readDayScript, stepOffsetMs } from './day-script.js';
export type { DayOutcome, DayPrompt, DayRun, DayRunOptions } from './run-day.js';
export { GUARD_RECORDED, HUMAN_DAY_GUARD, runHumanDay } from './run-day.js';
