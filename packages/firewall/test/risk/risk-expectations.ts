// Assertions on RiskAssessor verdicts shared by the risk tests: each names the command in what it
// compares, so a failing case in a table says which command it was.

import { expect } from 'vitest';

import type { CommandRiskLevel, RiskAssessor } from '@finger/firewall';

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
