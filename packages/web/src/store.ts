// The console's live state: rendered from a snapshot (`GET /v1/state`), then kept current by the
// WebSocket's events; every (re)connect fetches the snapshot again, so a reconnect never leaves
// stale state. Every list here is bounded.

import { api, ApiError, csrfTokenOf } from './api.ts';
import type {
  AuditState,
  Breaker,
  Counts,
  FingerEvent,
  Level,
  ModuleInfo,
  PendingApproval,
  SafetyState,
  Snapshot,
  StandingApproval,
  TaskInfo,
} from './types.ts';

/** One line of the activity stream: a call sent, a verdict, a result. */
export interface ActivityItem {
  id: string;
  ts: number;
  type: string;
  tool: string;
  agent: string;
  level?: Level;
  action?: string;
  text: string;
  request_id: string;
}

/** A settled hold, for the answer-time chart. */
export interface Answered {
  ts: number;
  tool: string;
  decision: string;
  latency_ms: number;
}

/** Calls per level in one minute (for the chart). */
export interface MinuteBucket {
  minute: number;
  counts: Partial<Record<Level, number>>;
}

export interface ConsoleState {
  connection: 'connecting' | 'live' | 'offline';
  loaded: boolean;
  error?: string;
  generated_at?: string;
  approvals: PendingApproval[];
  safety: SafetyState;
  breakers: Breaker[];
  modules: ModuleInfo[];
  tasks: TaskInfo[];
  standing: StandingApproval[];
  audit: AuditState;
  activity: ActivityItem[];
  answered: Answered[];
  holdReasons: Record<string, number>;
  minutes: MinuteBucket[];
  /** Answer times over the snapshot's window (p50, p90, max), when the daemon gave them. */
  answerMs?: Counts['answer_ms'];
}

export const MAX_ACTIVITY = 500;
export const MAX_ANSWERED = 200;
export const MAX_MINUTES = 30;
const MAX_REASONS = 200;
const MAX_BUFFERED = 2000;

const SUBSCRIBED_TYPES = [
  'APPROVAL_REQUESTED',
  'APPROVAL_RESOLVED',
  'FIREWALL_VERDICT',
  'DISPATCH_SENT',
  'DISPATCH_RESULT',
  'POLICY_CHANGED',
  'BREAKER_TRIPPED',
  'HALTED',
  'UNLOCKED',
  'MODULE_REGISTERED',
  'MODULE_UNREGISTERED',
  'MODULE_HEALTH',
  'TASK_STATE',
];
/** Events whose effect is easiest to show by fetching the snapshot again (debounced). */
const REFRESHING = new Set([
  'POLICY_CHANGED',
  'BREAKER_TRIPPED',
  'HALTED',
  'UNLOCKED',
  'MODULE_REGISTERED',
  'MODULE_UNREGISTERED',
  'MODULE_HEALTH',
  'TASK_STATE',
]);

function initial(): ConsoleState {
  return {
    connection: 'connecting',
    loaded: false,
    approvals: [],
    safety: {},
    breakers: [],
    modules: [],
    tasks: [],
    standing: [],
    audit: { state: 'unknown', entries: 0 },
    activity: [],
    answered: [],
    holdReasons: {},
    minutes: [],
  };
}

type Listener = () => void;

/** Pushes `item` onto the front of `list`, keeping at most `max`. */
function bounded<T>(list: T[], item: T, max: number): T[] {
  const next = [item, ...list];
  if (next.length > max) next.length = max;
  return next;
}

function agentOf(data: Record<string, unknown>): string {
  const p = data.principal as { kind?: string; id?: string } | undefined;
  return p?.id !== undefined ? `${p.kind ?? 'agent'}:${p.id}` : '';
}

/**
 * The live store. `start()` opens the WebSocket (cookie-authenticated) and loads the snapshot;
 * `stop()` closes everything. Components subscribe with `subscribe()` and read `state`.
 */
export class ConsoleStore {
  state: ConsoleState = initial();
  private listeners = new Set<Listener>();
  private socket: WebSocket | undefined;
  private retryMs = 500;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private refreshTimer: ReturnType<typeof setTimeout> | undefined;
  private buffered: FingerEvent[] | undefined;
  private stopped = true;
  /** Called once per new hold (for the opt-in browser notification). */
  onNewHold: ((a: PendingApproval) => void) | undefined;

  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private set(patch: Partial<ConsoleState>): void {
    this.state = { ...this.state, ...patch };
    for (const fn of this.listeners) fn();
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.refreshTimer);
    this.socket?.close(1000);
    this.socket = undefined;
    this.state = initial();
  }

  private connect(): void {
    if (this.stopped) return;
    this.set({ connection: 'connecting' });
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const ws = new WebSocket(`${scheme}://${location.host}/v1/events`);
    this.socket = ws;
    // the cookie authenticated the upgrade; the session's CSRF token completes it
    ws.onopen = () => ws.send(JSON.stringify({ op: 'auth', csrf: csrfTokenOf() }));
    ws.onmessage = (m) => {
      let msg: { type?: string; event?: FingerEvent };
      try {
        msg = JSON.parse(String(m.data)) as typeof msg;
      } catch {
        return;
      }
      if (msg.type === 'ready') ws.send(JSON.stringify({ op: 'subscribe', types: SUBSCRIBED_TYPES }));
      else if (msg.type === 'subscribed') {
        this.retryMs = 500;
        this.set({ connection: 'live' });
        void this.refresh();
      } else if (msg.type === 'event' && msg.event) this.receive(msg.event);
      else if (msg.type === 'dropped') void this.refresh();
    };
    ws.onclose = () => {
      if (this.socket !== ws) return;
      this.socket = undefined;
      if (this.stopped) return;
      this.set({ connection: 'offline' });
      // the session may have ended (sign-out, expiry, revoked token): a 401 here signs the page out
      void this.refresh();
      this.retryTimer = setTimeout(() => this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 10_000);
    };
    // Without a socket the page still shows the snapshot (and says it is not live).
    if (!this.state.loaded) void this.refresh();
  }

  /**
   * Fetches the snapshot; events that arrive meanwhile are buffered and applied on top (every
   * event application is idempotent by id, so one the snapshot already holds changes nothing).
   */
  async refresh(): Promise<void> {
    if (this.buffered !== undefined) return;
    this.buffered = [];
    try {
      const snap = await loadSnapshot();
      const pending = this.buffered;
      this.buffered = undefined;
      this.set({
        loaded: true,
        error: undefined,
        generated_at: snap.generated_at,
        approvals: [...snap.approvals].sort(newestFirst),
        safety: snap.safety ?? {},
        breakers: snap.breakers ?? [],
        modules: snap.modules ?? [],
        tasks: snap.tasks ?? [],
        standing: snap.standing_approvals ?? [],
        audit: snap.audit ?? { state: 'unknown', entries: 0 },
        ...(snap.counts ? fromCounts(snap.counts) : {}),
      });
      for (const e of pending) this.apply(e, false);
    } catch (e) {
      this.buffered = undefined;
      if (e instanceof ApiError && e.status === 401) return;
      this.set({ error: e instanceof Error ? e.message : String(e) });
    }
  }

  private scheduleRefresh(): void {
    if (this.refreshTimer !== undefined) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      void this.refresh();
    }, 300);
  }

  private receive(e: FingerEvent): void {
    if (this.buffered !== undefined) {
      if (this.buffered.length < MAX_BUFFERED) this.buffered.push(e);
      else this.scheduleRefresh();
      return;
    }
    this.apply(e, true);
  }

  /** Applies one event to the state (idempotent for approvals: upsert and remove by id). */
  apply(e: FingerEvent, live: boolean): void {
    const d = e.data ?? {};
    const ts = Date.parse(e.ts) || Date.now();
    const s = this.state;
    switch (e.type) {
      case 'APPROVAL_REQUESTED': {
        const a = d.approval as PendingApproval | undefined;
        if (!a) return;
        const known = s.approvals.some((x) => x.id === a.id);
        const reason = a.evaluation?.reasons?.[0] ?? a.level;
        const holdReasons = { ...s.holdReasons };
        if (!known && (reason in holdReasons || Object.keys(holdReasons).length < MAX_REASONS))
          holdReasons[reason] = (holdReasons[reason] ?? 0) + 1;
        this.set({
          approvals: [a, ...s.approvals.filter((x) => x.id !== a.id)].sort(newestFirst),
          holdReasons,
        });
        if (!known && live) this.onNewHold?.(a);
        return;
      }
      case 'APPROVAL_RESOLVED': {
        const id = d.id as string | null;
        const answered =
          typeof d.latency_ms === 'number'
            ? bounded(
                s.answered,
                { ts, tool: String(d.tool_id ?? e.target), decision: String(d.decision), latency_ms: d.latency_ms },
                MAX_ANSWERED,
              )
            : s.answered;
        this.set({ approvals: id ? s.approvals.filter((x) => x.id !== id) : s.approvals, answered });
        return;
      }
      case 'FIREWALL_VERDICT': {
        const level = d.level as Level | undefined;
        const item: ActivityItem = {
          id: e.id,
          ts,
          type: 'verdict',
          tool: String(d.tool ?? e.target),
          agent: agentOf(d),
          level,
          action: d.action as string | undefined,
          text: ((d.reasons as string[] | undefined) ?? []).slice(0, 1).join(''),
          request_id: e.request_id,
        };
        this.set({ activity: bounded(s.activity, item, MAX_ACTIVITY), minutes: countMinute(s.minutes, ts, level) });
        return;
      }
      case 'DISPATCH_SENT':
      case 'DISPATCH_RESULT': {
        const ok = d.ok as boolean | undefined;
        const err = d.error as { code?: string; message?: string } | undefined;
        const item: ActivityItem = {
          id: e.id,
          ts,
          type: e.type === 'DISPATCH_SENT' ? 'call' : 'result',
          tool: String(d.target ?? e.target),
          agent: '',
          text:
            e.type === 'DISPATCH_SENT' ? 'sent' : ok ? 'succeeded' : `failed: ${err?.code ?? ''} ${err?.message ?? ''}`,
          request_id: e.request_id,
        };
        this.set({ activity: bounded(s.activity, item, MAX_ACTIVITY) });
        return;
      }
      default:
        if (REFRESHING.has(e.type)) this.scheduleRefresh();
    }
  }
}

/** The charts' data from the snapshot's counts (live events add to it until the next snapshot). */
function fromCounts(c: Counts): Pick<ConsoleState, 'minutes' | 'holdReasons' | 'answerMs'> {
  const first = Math.floor(Date.parse(c.since) / 60_000);
  const minutes: MinuteBucket[] = [];
  for (let i = 0; i < c.buckets && i < MAX_MINUTES; i++) {
    const counts: MinuteBucket['counts'] = {};
    for (const [level, per] of Object.entries(c.levels) as [Level, number[]][]) if (per[i]) counts[level] = per[i];
    if (Object.keys(counts).length > 0 || minutes.length > 0) minutes.push({ minute: first + i, counts });
  }
  const holdReasons: Record<string, number> = {};
  for (const r of c.top_hold_reasons) holdReasons[r.reason] = r.count;
  return { minutes, holdReasons, answerMs: c.answer_ms };
}

function newestFirst(a: PendingApproval, b: PendingApproval): number {
  return b.created_at < a.created_at ? -1 : b.created_at > a.created_at ? 1 : 0;
}

function countMinute(minutes: MinuteBucket[], ts: number, level: Level | undefined): MinuteBucket[] {
  if (!level) return minutes;
  const minute = Math.floor(ts / 60_000);
  const last = minutes[minutes.length - 1];
  if (last && last.minute === minute) {
    const counts = { ...last.counts, [level]: (last.counts[level] ?? 0) + 1 };
    return [...minutes.slice(0, -1), { minute, counts }];
  }
  const next = [...minutes, { minute, counts: { [level]: 1 } }];
  return next.length > MAX_MINUTES ? next.slice(next.length - MAX_MINUTES) : next;
}

/**
 * `GET /v1/state`; against a daemon without it (404), the same picture from the separate routes
 * (approvals, standing approvals, modules, tasks, health's safety, audit verify).
 */
export async function loadSnapshot(): Promise<Snapshot> {
  try {
    return await api<Snapshot>('GET', '/v1/state');
  } catch (e) {
    if (!(e instanceof ApiError) || e.code !== 'E_NOT_FOUND') throw e;
  }
  const [approvals, standing, modules, tasks, health, verify] = await Promise.all([
    api<{ approvals: PendingApproval[] }>('GET', '/v1/approvals'),
    api<{ standing_approvals: StandingApproval[] }>('GET', '/v1/standing-approvals'),
    api<{ modules: ModuleInfo[] }>('GET', '/v1/modules'),
    api<{ tasks: TaskInfo[] }>('GET', '/v1/tasks?all=true'),
    api<{ safety?: SafetyState & { breakers?: Record<string, Omit<Breaker, 'id'>> } }>('GET', '/v1/health'),
    api<{ ok: boolean; entries: number; first_bad: number | null; reason: string | null }>('GET', '/v1/audit/verify'),
  ]);
  return {
    generated_at: new Date().toISOString(),
    approvals: approvals.approvals,
    safety: health.safety ?? {},
    breakers: Object.entries(health.safety?.breakers ?? {}).map(([id, b]) => ({ ...b, id })),
    modules: modules.modules,
    tasks: tasks.tasks.slice(0, 50),
    standing_approvals: standing.standing_approvals,
    audit: {
      state: verify.ok ? 'intact' : 'broken',
      entries: verify.entries,
      first_bad: verify.first_bad !== null ? { seq: verify.first_bad, reason: verify.reason ?? '' } : null,
      checked_at: new Date().toISOString(),
    },
  };
}
