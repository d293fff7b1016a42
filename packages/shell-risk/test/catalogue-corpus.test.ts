// The public-catalogue corpus (test/fixtures/risk-corpus/catalogues.json: reverse and bind shells,
// credential uploads, start-up file writes, download-then-run, shell escapes; its header names the
// sources): every case of the first five categories at `dangerous` (APPROVE) with a primary reason
// (reasons[0]) that names the danger, in at least 95 % of each category, and none below `moderate`
// (CONFIRM); shell escapes at least `moderate`. The everyday list (everyday.json) stays out of
// `dangerous`. On failure the figures per category are printed.

import { readFileSync } from 'node:fs';

import { beforeAll, describe, expect, it } from 'vitest';

import type { CommandRiskLevel } from '../src/command-model.js';
import { RiskAssessor } from '../src/risk-assessor.js';

const FIXTURES = new URL('../../../test/fixtures/risk-corpus/', import.meta.url);

type Category =
  'reverse_shell' | 'bind_shell' | 'credential_upload' | 'startup_write' | 'download_run' | 'shell_escape';

interface CorpusCase {
  command: string;
  category: Category;
  source: string;
  expected_reason_pattern: string;
}

/** What a person sees of one category. */
interface Figures {
  total: number;
  /** dangerous, and the primary reason matches the category's pattern */
  specific: number;
  /** dangerous, with a primary reason that does not */
  dangerous_generic: number;
  moderate: number;
  safe: number;
}

const corpus = JSON.parse(readFileSync(new URL('catalogues.json', FIXTURES), 'utf8')) as { cases: CorpusCase[] };
const everyday = JSON.parse(readFileSync(new URL('everyday.json', FIXTURES), 'utf8')) as { commands: string[] };

/** The categories held at APPROVE with a specific reason. */
const HELD: readonly Category[] = ['reverse_shell', 'bind_shell', 'credential_upload', 'startup_write', 'download_run'];
const SHARE = 0.95;

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await RiskAssessor.create({ cacheSize: 0 });
});

function figuresOf(cases: readonly CorpusCase[]): {
  figures: Record<string, Figures>;
  misses: { category: Category; command: string; level: CommandRiskLevel; primary: string }[];
} {
  const figures: Record<string, Figures> = {};
  const misses: { category: Category; command: string; level: CommandRiskLevel; primary: string }[] = [];
  for (const c of cases) {
    const f = (figures[c.category] ??= { total: 0, specific: 0, dangerous_generic: 0, moderate: 0, safe: 0 });
    const a = assessor.assess(c.command);
    const primary = a.reasons[0] ?? '';
    f.total++;
    if (a.level === 'dangerous' && new RegExp(c.expected_reason_pattern, 'i').test(primary)) {
      f.specific++;
      continue;
    }
    if (a.level === 'dangerous') f.dangerous_generic++;
    else if (a.level === 'moderate') f.moderate++;
    else f.safe++;
    misses.push({ category: c.category, command: c.command, level: a.level, primary });
  }
  return { figures, misses };
}

describe('the public-catalogue corpus', () => {
  it('holds ≥ 200 cases, each with a known category and a pattern that compiles', () => {
    expect(corpus.cases.length).toBeGreaterThanOrEqual(200);
    for (const c of corpus.cases) {
      expect([...HELD, 'shell_escape']).toContain(c.category);
      expect(() => new RegExp(c.expected_reason_pattern, 'i')).not.toThrow();
    }
  });

  it('is held at APPROVE with a reason naming the danger (≥ 95 % per category), none below CONFIRM', () => {
    const { figures, misses } = figuresOf(corpus.cases);
    const report = JSON.stringify({ figures, misses }, null, 1);
    if (process.env['FINGER_CORPUS_REPORT'] !== undefined) console.log(report);
    const failing = Object.entries(figures).filter(([category, f]) =>
      category === 'shell_escape' ? f.safe > 0 : f.specific < Math.ceil(SHARE * f.total) || f.safe > 0,
    );
    expect(failing.length === 0 ? [] : report).toEqual([]);
  });
});

describe('the everyday developer commands', () => {
  it('are ≥ 150 and none is dangerous', () => {
    expect(everyday.commands.length).toBeGreaterThanOrEqual(150);
    const dangerous = everyday.commands
      .map((command) => ({ command, a: assessor.assess(command) }))
      .filter(({ a }) => a.level === 'dangerous')
      .map(({ command, a }) => ({ command, reasons: a.reasons }));
    expect(dangerous).toEqual([]);
  });
});
