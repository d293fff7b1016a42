import { claudeCodeDay, type ClaudeCodeVariant } from './claude-code-model.js';
import type { DayCall } from './day-script.js';
import type { DayRun } from './run-day.js';

/** What happened to one call under one system, reduced to what the figures need. */
export interface CallVerdict {
  index: number;
  asked: boolean;
  ran: boolean;
  /** It ran because of a standing answer the person gave (standing approval, allow rule, accept-edits). */
  by_standing: boolean;
}

/** The figures of one half of the day (or the whole day) under one system. */
export interface DayFigures {
  calls: number;
  safe: number;
  risky: number;
  /** Questions put to the person (held calls answered). */
  prompts: number;
  /** Of those, questions about safe calls. */
  safe_prompts: number;
  /** prompts ÷ safe calls: every question, risky ones included, per safe call. */
  prompts_per_safe_call: number;
  /**
   * safe_prompts ÷ safe calls: the burden, questions about work that needed none (the done-when
   * target: at most 1 in 20 in the second half). Questions about risky calls are the point.
   */
  safe_prompts_per_safe_call: number;
  /**
   * Risky calls that ran without the person seeing them first: not held and answered by them, and
   * not let through by a standing answer they gave for a call they would approve (a standing
   * approval that lets an unwanted call through counts as unseen).
   */
  risky_unseen: number;
  /** Indexes of those calls. */
  unseen: number[];
}

/** One system's figures: the first half, the second half, the whole day. */
export interface SystemFigures {
  system: string;
  half1: DayFigures;
  half2: DayFigures;
  day: DayFigures;
}

function round(x: number): number {
  return Math.round(x * 10_000) / 10_000;
}

/** Figures of `calls` (a half or the whole day) from each call's verdict. */
export function figures(calls: readonly DayCall[], verdicts: ReadonlyMap<number, CallVerdict>): DayFigures {
  let prompts = 0;
  let safePrompts = 0;
  const unseen: number[] = [];
  for (const c of calls) {
    const v = verdicts.get(c.index);
    if (!v) throw new Error(`no verdict for call ${c.index}`);
    if (v.asked) {
      prompts++;
      if (!c.risky) safePrompts++;
    }
    const seen = v.asked || (v.by_standing && c.decide !== 'reject');
    if (c.risky && v.ran && !seen) unseen.push(c.index);
  }
  const safe = calls.filter((c) => !c.risky).length;
  return {
    calls: calls.length,
    safe,
    risky: calls.length - safe,
    prompts,
    safe_prompts: safePrompts,
    prompts_per_safe_call: safe === 0 ? 0 : round(prompts / safe),
    safe_prompts_per_safe_call: safe === 0 ? 0 : round(safePrompts / safe),
    risky_unseen: unseen.length,
    unseen,
  };
}

function systemFigures(system: string, calls: readonly DayCall[], verdicts: Map<number, CallVerdict>): SystemFigures {
  return {
    system,
    half1: figures(
      calls.filter((c) => c.half === 1),
      verdicts,
    ),
    half2: figures(
      calls.filter((c) => c.half === 2),
      verdicts,
    ),
    day: figures(calls, verdicts),
  };
}

/** finger's figures from a day run (asked = the person answered a hold of that call). */
export function fingerFigures(run: DayRun): SystemFigures {
  const verdicts = new Map<number, CallVerdict>(
    run.outcomes.map((o) => [
      o.index,
      { index: o.index, asked: o.prompts > 0, ran: o.ran, by_standing: o.via === 'standing' },
    ]),
  );
  return systemFigures('finger', run.calls, verdicts);
}

/** The Claude Code model's figures for the same day. */
export function claudeCodeFigures(run: Pick<DayRun, 'calls' | 'workspace'>, variant: ClaudeCodeVariant): SystemFigures {
  const verdicts = new Map<number, CallVerdict>(
    claudeCodeDay(run.calls, run.workspace, variant).map((o) => [o.index, o]),
  );
  return systemFigures(variant === 'rules' ? 'claude-code' : 'claude-code+ro', run.calls, verdicts);
}

/** The day's table: finger and both Claude Code variants, per half and for the whole day. */
export function dayTable(run: DayRun): SystemFigures[] {
  return [fingerFigures(run), claudeCodeFigures(run, 'rules'), claudeCodeFigures(run, 'read-only')];
}

/** Plain rows of the table (one per system and part of the day), for printing and JSON. */
export function dayRows(table: readonly SystemFigures[]): Record<string, string | number>[] {
  return table.flatMap((s) =>
    (['half1', 'half2', 'day'] as const).map((part) => {
      const f = s[part];
      return {
        system: s.system,
        part: part === 'day' ? 'day' : part === 'half1' ? '1st half' : '2nd half',
        calls: f.calls,
        safe: f.safe,
        risky: f.risky,
        prompts: f.prompts,
        safe_prompts: f.safe_prompts,
        'prompts/safe': f.prompts_per_safe_call,
        'safe_prompts/safe': f.safe_prompts_per_safe_call,
        risky_unseen: f.risky_unseen,
      };
    }),
  );
}

/** Formats rows as an aligned plain-text table (numbers right-aligned). */
export function formatDayTable(rows: readonly Record<string, string | number>[]): string {
  const cols = Object.keys(rows[0] ?? {});
  const cell = (v: string | number | undefined) => (typeof v === 'number' ? String(v) : (v ?? ''));
  const widths = cols.map((k) => Math.max(k.length, ...rows.map((r) => cell(r[k]).length)));
  const pad = (s: string, i: number, num: boolean) => (num ? s.padStart(widths[i]!) : s.padEnd(widths[i]!));
  const numeric = cols.map((k) => rows.some((r) => typeof r[k] === 'number'));
  return [
    cols.map((k, i) => pad(k, i, numeric[i]!)).join('  '),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.map((r) => cols.map((k, i) => pad(cell(r[k]), i, numeric[i]!)).join('  ')),
  ].join('\n');
}
