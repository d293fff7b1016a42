import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** `test/fixtures/human-day/`: the day's script, its fixture workspace, the guard and the README. */
export const HUMAN_DAY_DIR = fileURLToPath(new URL('../../../../test/fixtures/human-day/', import.meta.url));

/** What a call is, in the day's mix. */
export type DayKind = 'read-shell' | 'read' | 'write' | 'build' | 'intended' | 'unwanted';

/** What a careful person answers when the call is put to them. */
export type DayDecision = 'approve' | 'always' | 'reject';

/** One call of the script as written in `day.json` (placeholders not yet filled in). */
export interface DayCallSpec {
  tool: string;
  args: Record<string, unknown>;
  kind: DayKind;
  /** A call a person must see before it runs (intended risky actions and unwanted ones). */
  risky: boolean;
  decide: DayDecision;
}

/** A step of the agent: calls sent together (in parallel), then nothing until all are settled. */
export interface DayStep {
  note?: string;
  calls: DayCallSpec[];
}

/** `day.json`. */
export interface DayScript {
  description: string;
  /** The working day, local time `HH:MM`: the steps are spread evenly over it. */
  start: string;
  end: string;
  steps: DayStep[];
}

/** A call of the day, placeholders filled in, with its place in the day. */
export interface DayCall extends DayCallSpec {
  /** 0-based position in the day. */
  index: number;
  step: number;
  /** 1: the first half of the day's calls, 2: the second. */
  half: 1 | 2;
}

/** Values for the placeholders of `day.json`: `{home}`, `{token_file}`, `{api}`. */
export interface DayPlaces {
  /** The person's home as the daemon sees it (`HOME`): a temp directory, never the real one. */
  home: string;
  /** finger's admin token file. */
  tokenFile: string;
  /** finger's own API, e.g. `http://127.0.0.1:40123`. */
  api: string;
}

/** Reads `day.json` (default: the fixture's). */
export function readDayScript(file = `${HUMAN_DAY_DIR}day.json`): DayScript {
  return JSON.parse(readFileSync(file, 'utf8')) as DayScript;
}

function fill(value: unknown, places: DayPlaces): unknown {
  if (typeof value === 'string') {
    return value
      .replaceAll('{home}', places.home)
      .replaceAll('{token_file}', places.tokenFile)
      .replaceAll('{api}', places.api);
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, places));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, places)]));
  }
  return value;
}

/** The day's calls in order, placeholders filled in, each with its step and half. */
export function dayCalls(script: DayScript, places: DayPlaces): DayCall[] {
  const total = script.steps.reduce((n, s) => n + s.calls.length, 0);
  const calls: DayCall[] = [];
  script.steps.forEach((step, s) => {
    for (const spec of step.calls) {
      const index = calls.length;
      calls.push({
        ...spec,
        args: fill(spec.args, places) as Record<string, unknown>,
        index,
        step: s,
        half: index < Math.ceil(total / 2) ? 1 : 2,
      });
    }
  });
  return calls;
}

function minutes(hhmm: string): number {
  const [h, m] = hhmm.split(':').map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
}

/**
 * When step `s` happens, in ms after the day's start: the steps are spread evenly from `start`
 * to `end` (about six minutes apart for 81 steps over 8½ hours).
 */
export function stepOffsetMs(script: DayScript, s: number): number {
  const span = (minutes(script.end) - minutes(script.start)) * 60_000;
  return Math.round((span * s) / Math.max(1, script.steps.length));
}

/**
 * The shell commands the guard may really run: the safe ones that stay in the workspace (no `~`,
 * no absolute path, no `..`, no variable). Everything else the guard only records.
 */
export function guardAllowlist(calls: readonly DayCall[]): string[] {
  const out = new Set<string>();
  for (const c of calls) {
    const command = c.tool === 'shell.exec' ? c.args.command : undefined;
    if (typeof command !== 'string' || c.risky || c.decide === 'reject') continue;
    if (/[~$\n]|(^|\s)\/|\.\./.test(command)) continue;
    out.add(command);
  }
  return [...out];
}
