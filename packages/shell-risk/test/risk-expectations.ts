// Assertions on RiskAssessor verdicts shared by the risk tests: each names the command in what it
// compares, so a failing case in a table says which command it was.

import { expect } from 'vitest';

import type { CommandRiskLevel, RiskAssessor } from '@finger/shell-risk';

export function riskExpectations(assessor: () => RiskAssessor) {
  return {
    /** `dangerous`, with `reason` among the reasons. */
    expectDangerous(command: string, reason: string): void {
      const a = assessor().assess(command);
      expect({ command, level: a.level, reasons: a.reasons }).toEqual({
        command,
        level: 'dangerous',
        reasons: expect.arrayContaining([reason]),
      });
    },
    /** Exactly `level`. */
    expectLevel(command: string, level: CommandRiskLevel): void {
      const a = assessor().assess(command);
      expect({ command, level: a.level, reasons: a.reasons }).toEqual({ command, level, reasons: a.reasons });
    },
    /** Exactly `level`, and no reason speaks of exfiltration. */
    expectNoExfiltration(command: string, level: CommandRiskLevel): void {
      const a = assessor().assess(command);
      expect({ command, level: a.level, exfiltration: a.reasons.filter((r) => r.includes('exfiltration')) }).toEqual({
        command,
        level,
        exfiltration: [],
      });
    },
  };
}

/** One table row: a command and the level it must get. */
export type LevelCase = readonly [command: string, level: CommandRiskLevel];

/** What {@link expectLevelsOf} needs of an assessor. */
interface Assesses {
  assess(command: string, context?: { cwd?: string | null }): { level: CommandRiskLevel };
}

/**
 * Each command's level beside the one expected, compared at once: a failing table names every
 * command that differs. `cwd` as RiskAssessor.assess takes it (absent: none).
 */
export function expectLevelsOf(assessor: Assesses, cases: readonly LevelCase[], cwd?: string | null): void {
  const context = cwd === undefined ? {} : { cwd };
  expect(cases.map(([command]) => [command, assessor.assess(command, context).level])).toEqual(
    cases.map(([command, level]) => [command, level]),
  );
}
