/**
 * The terminal console's data and its pure parts: what the console knows about the daemon
 * ({@link ConsoleData}), how one event changes it ({@link applyEvent}), the per-minute level
 * counts and their sparklines. No I/O here; `store.ts` fetches and follows, the views render.
 */
import type { FingerEvent } from '@finger/protocol';

import type { ModuleInfo } from '../api-types.js';
import type { ApprovalView, StandingApprovalView } from '../approval-views.js';
import type { SafetyHealth } from '../commands/safety.js';
import type { TaskView } from '../commands/task-follow.js';
import { escapeControls } from '../output.js';

/** The firewall's levels, least to most strict. */
export const LEVELS = ['AUTO', 'NOTIFY', 'CONFIRM', 'APPROVE', 'DENY'] as const;

/** How many activity lines the console keeps (oldest dropped first). */
export const ACTIVITY_MAX = 500;

/** How many minutes the level sparklines cover. */
export const SPARK_MINUTES = 15;

/** One line of the activity stream. */
export interface ActivityLine {
  /** Event id (or a local id for the console's own lines). */
  id: string;
  ts: string;
  type: string;
  /** The level of a verdict or hold, when the event has one. */
  level?: string;
  /** One line, controls escaped. */
  text: string;
}

/** The audit chain's state as `GET /v1/audit/verify` (or the snapshot) reports it. */
export interface AuditState {
  state: 'intact' | 'broken' | 'unknown';
  entries?: number;
  first_bad?: { seq: number | null; reason: string };
  checked_at?: string;
}

/** One breaker of `safety.breakers` (health details). */
export interface BreakerView {
  status: string;
  [k: string]: unknown;
}

/** Who the console's token is. */
export interface Who {
  id: string;
  roles: string[];
}

/** Everything the console shows; replaced (never mutated) on each change. */
export interface ConsoleData {
  connection: 'connecting' | 'live' | 'down';
  /** Why the connection is down (shown in the header). */
  connectionError?: string;
  who?: Who;
  /** Pending approvals, oldest first. */
  approvals: ApprovalView[];
  /** Approvals held on another daemon of the cluster: shown, answered there. */
  elsewhere: Record<string, string>;
  safety?: SafetyHealth & { breakers?: Record<string, BreakerView> };
  modules: ModuleInfo[];
  tasks: TaskView[];
  standing: StandingApprovalView[];
  audit: AuditState;
  activity: ActivityLine[];
  /** Verdicts per minute (epoch minute → level → count), the last {@link SPARK_MINUTES} minutes. */
  levels: Record<number, Record<string, number>>;
  /** Holds and answers seen (counted from the snapshot where the daemon has `/v1/state`). */
  holds: { held: number; answered: number; answerMsTotal: number; p50Ms?: number; p90Ms?: number };
  /** The last thing an action said (shown in the status line). */
  notice?: { text: string; error: boolean };
}

/** A console with nothing loaded yet. */
export function emptyData(): ConsoleData {
  return {
    connection: 'connecting',
    approvals: [],
    elsewhere: {},
    modules: [],
    tasks: [],
    standing: [],
    audit: { state: 'unknown' },
    activity: [],
    levels: {},
    holds: { held: 0, answered: 0, answerMsTotal: 0 },
  };
}

/** `s` safe for the terminal (controls shown as escapes) and cut to `max` characters. */
export function safe(s: unknown, max = 400): string {
  const t = escapeControls(typeof s === 'string' ? s : (JSON.stringify(s) ?? ''));
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** True when the roles may answer approvals and halt (operator or admin). */
export function canAnswer(who: Who | undefined): boolean {
  return who !== undefined && who.roles.some((r) => r === 'admin' || r === 'operator');
}

/** True when the roles may unlock (admin). */
export function canUnlock(who: Who | undefined): boolean {
  return who !== undefined && who.roles.includes('admin');
}

/** The role to name when something is refused: `viewer`, `operator`, … */
export function roleName(who: Who | undefined): string {
  return who?.roles.join(',') || 'unknown role';
}

/** Seconds left before `expires_at` (never below 0). */
export function secondsLeft(expiresAt: string, now: number): number {
  return Math.max(0, Math.round((Date.parse(expiresAt) - now) / 1000));
}

/** `4m05s`, `12s`. */
export function shortDuration(s: number): string {
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
}

const BARS = '▁▂▃▄▅▆▇█';

/** A sparkline of `values` (one character each); all zeros give a flat line of `·`. */
export function sparkline(values: number[], ascii = false): string {
  const max = Math.max(0, ...values);
  return values
    .map((v) => {
      if (v <= 0) return ascii ? '.' : '·';
      if (ascii) return v === max ? '#' : v * 2 >= max ? '+' : '-';
      return BARS[Math.min(BARS.length - 1, Math.ceil((v / max) * BARS.length) - 1)]!;
    })
    .join('');
}

/** Counts of `level` for each of the last {@link SPARK_MINUTES} minutes up to `now`, oldest first. */
export function levelSeries(levels: ConsoleData['levels'], level: string, now: number): number[] {
  const m = Math.floor(now / 60_000);
  return Array.from({ length: SPARK_MINUTES }, (_, i) => levels[m - SPARK_MINUTES + 1 + i]?.[level] ?? 0);
}

function countLevel(levels: ConsoleData['levels'], level: string, ts: number): ConsoleData['levels'] {
  const m = Math.floor(ts / 60_000);
  const out: ConsoleData['levels'] = {};
  for (const [k, v] of Object.entries(levels)) if (Number(k) > m - SPARK_MINUTES) out[Number(k)] = v;
  const bucket = { ...(out[m] ?? {}) };
  bucket[level] = (bucket[level] ?? 0) + 1;
  out[m] = bucket;
  return out;
}

/** The activity stream with `line` added (bounded by {@link ACTIVITY_MAX}). */
export function withActivity(activity: ActivityLine[], line: ActivityLine): ActivityLine[] {
  const next = activity.length >= ACTIVITY_MAX ? activity.slice(activity.length - ACTIVITY_MAX + 1) : [...activity];
  next.push(line);
  return next;
}

interface EventData {
  tool?: string;
  level?: string;
  action?: string;
  reasons?: string[];
  principal?: { kind?: string; id?: string };
  approval?: ApprovalView;
  id?: string | null;
  decision?: string;
  approved?: boolean;
  reason?: string;
  answered_by?: { id?: string };
  kind?: string;
  task_id?: string;
  state?: string;
  step?: number;
  step_usage?: TaskView['usage'];
  total?: TaskView['usage'];
  error?: { code?: string; message?: string };
  status?: string;
  healthy?: boolean;
  breaker?: string;
  agent_id?: string;
  by?: string;
}

/** One line describing `e`, or undefined for events the stream leaves out (a task's text deltas). */
export function describeEvent(e: FingerEvent): Omit<ActivityLine, 'id' | 'ts' | 'type'> | undefined {
  const d = e.data as EventData;
  const who = d.principal ? `${d.principal.kind}:${d.principal.id}` : '';
  switch (e.type) {
    case 'FIREWALL_VERDICT':
      return {
        level: d.level,
        text: safe(`${d.level} ${d.action ?? ''} ${d.tool ?? e.target} ${who} — ${d.reasons?.[0] ?? ''}`),
      };
    case 'APPROVAL_REQUESTED': {
      const a = d.approval;
      if (!a) return { text: 'held a call' };
      const origin = e.origin !== undefined ? ` on ${e.origin}` : '';
      return {
        level: a.level,
        text: safe(`HELD${origin} ${a.level} ${a.tool_id} ${a.id} — ${a.evaluation.reasons[0] ?? ''}`),
      };
    }
    case 'APPROVAL_RESOLVED':
      return {
        text: safe(
          `ANSWERED ${d.id ?? ''}: ${d.decision ?? (d.approved ? 'approve' : 'reject')}${d.answered_by?.id ? ` by ${d.answered_by.id}` : ''}${d.reason ? ` (${d.reason})` : ''}`,
        ),
      };
    case 'TASK_STATE': {
      if (d.kind === 'text') return undefined;
      const usage = d.total ?? d.step_usage;
      const cost = usage ? ` tokens ${usage.input_tokens + usage.output_tokens} cost ${usage.cost.toFixed(4)}` : '';
      return {
        text: safe(
          `task ${d.task_id ?? ''} ${d.kind ?? ''}${d.state ? ` ${d.state}` : ''}${d.step !== undefined ? ` step ${d.step}` : ''}${cost}${d.error?.code ? ` ${d.error.code}` : ''}`,
        ),
      };
    }
    case 'DISPATCH_RESULT':
      return { text: safe(`${e.target} ${d.status ?? ''}${d.error?.code ? ` ${d.error.code}` : ''}`) };
    case 'HALTED':
    case 'UNLOCKED':
    case 'BREAKER_TRIPPED':
      return { text: safe(`${e.type} ${d.breaker ?? ''} ${d.agent_id ?? ''} ${d.by ?? ''} ${d.reason ?? ''}`) };
    default:
      return { text: safe(`${e.target} ${JSON.stringify(e.data)}`, 200) };
  }
}

/**
 * `data` after the event `e`: the activity line, a verdict counted per minute, a hold added (or
 * named as held elsewhere), an answer removing its hold and counting its answer time.
 */
export function applyEvent(data: ConsoleData, e: FingerEvent, now = Date.now()): ConsoleData {
  const line = describeEvent(e);
  let next: ConsoleData = data;
  if (line) next = { ...next, activity: withActivity(next.activity, { id: e.id, ts: e.ts, type: e.type, ...line }) };
  const d = e.data as EventData;
  if (e.type === 'FIREWALL_VERDICT' && typeof d.level === 'string')
    next = { ...next, levels: countLevel(next.levels, d.level, Date.parse(e.ts) || now) };
  if (e.type === 'APPROVAL_REQUESTED' && d.approval) {
    const a = d.approval;
    if (e.origin !== undefined) next = { ...next, elsewhere: { ...next.elsewhere, [a.id]: e.origin } };
    else if (!next.approvals.some((x) => x.id === a.id))
      next = {
        ...next,
        approvals: [...next.approvals, a].sort((x, y) => x.created_at.localeCompare(y.created_at)),
        holds: { ...next.holds, held: next.holds.held + 1 },
      };
  }
  if (e.type === 'APPROVAL_RESOLVED' && typeof d.id === 'string') {
    const id = d.id;
    const gone = next.approvals.find((x) => x.id === id);
    const { [id]: _dropped, ...elsewhere } = next.elsewhere;
    next = { ...next, approvals: next.approvals.filter((x) => x.id !== id), elsewhere };
    if (gone) {
      const ms = Math.max(0, (Date.parse(e.ts) || now) - Date.parse(gone.created_at));
      next = {
        ...next,
        holds: { ...next.holds, answered: next.holds.answered + 1, answerMsTotal: next.holds.answerMsTotal + ms },
      };
    }
  }
  return next;
}
