/**
 * The console's connection to the daemon: a snapshot over HTTP (`GET /v1/state` where the daemon
 * has it, else the separate read routes), then `/v1/events` over WebSocket, applied with
 * {@link applyEvent}; on a close it shows the daemon as down and reconnects with a bounded
 * back-off, re-reading the snapshot each time. The actions (answer, check, halt, unlock, verify)
 * are plain HTTP calls with the CLI's bearer token; the daemon enforces every role.
 */
import WebSocket from 'ws';

import type { FingerEvent } from '@finger/protocol';

import type { EventStreamMessage, ModuleInfo, WhoAmI } from '../api-types.js';
import type { AnswerResultView, ApprovalView, StandingApprovalView } from '../approval-views.js';
import { type DaemonClient, seg } from '../client.js';
import type { SafetyHealth } from '../commands/safety.js';
import type { TaskView } from '../commands/task-follow.js';
import { ApiError } from '../errors.js';
import { upgradeError } from '../event-stream.js';
import { applyEvent, type AuditState, type ConsoleData, emptyData, safe, type Who } from './model.js';

/** Events the console follows (a task's text deltas are dropped on arrival). */
const FOLLOWED = [
  'DISPATCH_RESULT',
  'FIREWALL_VERDICT',
  'APPROVAL_REQUESTED',
  'APPROVAL_RESOLVED',
  'POLICY_CHANGED',
  'BREAKER_TRIPPED',
  'HALTED',
  'UNLOCKED',
  'MODULE_REGISTERED',
  'MODULE_UNREGISTERED',
  'MODULE_HEALTH',
  'TASK_STATE',
  'DEGRADED',
  'ROUTE_FAILED',
  'LEASE_EXPIRED',
];

/** Events after which the snapshot's slower parts (safety, modules, tasks) are read again. */
const REFRESHING = new Set([
  'HALTED',
  'UNLOCKED',
  'BREAKER_TRIPPED',
  'MODULE_REGISTERED',
  'MODULE_UNREGISTERED',
  'MODULE_HEALTH',
  'POLICY_CHANGED',
  'TASK_STATE',
  'DEGRADED',
]);

/** Reconnect back-off bounds, ms. */
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5_000;
/** How long one snapshot request may take. */
const READ_TIMEOUT_MS = 10_000;
/** Period of the background re-read while live (budgets, time left), ms. */
const POLL_MS = 10_000;

/** The Evaluation of `POST /v1/policy/check` (the fields the console shows). */
export interface CheckResult {
  level: string;
  action: string;
  layer: string;
  reasons: string[];
  matched_rules: { source: string; id: string; level: string; reason: string }[];
  preview?: { kind: string; text: string; path?: string };
}

/** What `GET /v1/state` answers (.briefs/web-contract.md); every part optional to the console. */
interface StateSnapshot {
  approvals?: ApprovalView[];
  safety?: ConsoleData['safety'];
  breakers?: unknown;
  modules?: ModuleInfo[];
  tasks?: TaskView[];
  standing_approvals?: StandingApprovalView[];
  audit?: AuditState;
  counts?: SnapshotCounts;
}

/** `counts` of `GET /v1/state`: per-level calls and holds in one-minute buckets from `since`. */
interface SnapshotCounts {
  since: string;
  bucket_ms: number;
  levels: Record<string, number[]>;
  holds: number[];
  answer_ms: { count: number; p50: number | null; p90: number | null };
}

/** The snapshot's counts as the console keeps them (epoch minute → level → count) and its holds. */
export function fromCounts(c: SnapshotCounts): Pick<ConsoleData, 'levels' | 'holds'> {
  const start = Date.parse(c.since);
  const levels: ConsoleData['levels'] = {};
  for (const [level, series] of Object.entries(c.levels))
    series.forEach((n, i) => {
      if (!n) return;
      const m = Math.floor((start + (i + 1) * c.bucket_ms - 1) / 60_000);
      levels[m] = { ...(levels[m] ?? {}), [level]: (levels[m]?.[level] ?? 0) + n };
    });
  const holds: ConsoleData['holds'] = {
    held: c.holds.reduce((a, b) => a + b, 0),
    answered: c.answer_ms.count,
    answerMsTotal: 0,
  };
  if (c.answer_ms.p50 !== null) holds.p50Ms = c.answer_ms.p50;
  if (c.answer_ms.p90 !== null) holds.p90Ms = c.answer_ms.p90;
  return { levels, holds };
}

/** Options of a {@link ConsoleStore}. */
export interface ConsoleStoreOptions {
  client: DaemonClient;
  /** Ring the terminal bell on each new hold. */
  bell: boolean;
  /** Writes the bell (the terminal). */
  ring(): void;
}

/** The console's live view of one daemon; React reads it through subscribe/getSnapshot. */
export class ConsoleStore {
  private data: ConsoleData = emptyData();
  private readonly listeners = new Set<() => void>();
  private stopped = false;
  private ws: WebSocket | undefined;
  private wake: (() => void) | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private hasStateRoute: boolean | undefined;

  constructor(private readonly o: ConsoleStoreOptions) {}

  /** useSyncExternalStore's subscribe. */
  readonly subscribe = (l: () => void): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };

  /** useSyncExternalStore's getSnapshot. */
  readonly getSnapshot = (): ConsoleData => this.data;

  private set(next: ConsoleData): void {
    this.data = next;
    for (const l of this.listeners) l();
  }

  /** Shows `text` in the status line (an error in red). */
  notify(text: string, error = false): void {
    this.set({ ...this.data, notice: { text: safe(text), error } });
  }

  /** Starts the connect–follow–reconnect loop (runs until {@link stop}). */
  start(): void {
    void this.loop();
    this.pollTimer = setInterval(() => {
      if (this.data.connection === 'live') void this.readSnapshot().catch(() => undefined);
    }, POLL_MS);
  }

  /** Stops following and closes the socket. */
  stop(): void {
    this.stopped = true;
    clearInterval(this.pollTimer);
    clearTimeout(this.refreshTimer);
    this.ws?.terminate();
    this.wake?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(t);
        this.wake = undefined;
        resolve();
      };
    });
  }

  private async loop(): Promise<void> {
    let delay = RETRY_MIN_MS;
    while (!this.stopped) {
      let why: string;
      try {
        if (!this.data.who) this.set({ ...this.data, who: await this.whoAmI() });
        await this.readSnapshot();
        why = await this.follow(() => (delay = RETRY_MIN_MS));
      } catch (e) {
        why = e instanceof ApiError ? `${e.code}: ${e.message}` : (e as Error).message;
      }
      if (this.stopped) return;
      this.set({ ...this.data, connection: 'down', connectionError: safe(why, 200) });
      await this.sleep(delay);
      delay = Math.min(RETRY_MAX_MS, delay * 2);
    }
  }

  /**
   * The token's name and roles, as the daemon resolved them: `GET /v1/whoami` (any authenticated
   * role). Nothing is probed: a 401 (bad token) fails the connection like any other read.
   */
  private async whoAmI(): Promise<Who> {
    const w = await this.o.client.get<WhoAmI>('/v1/whoami', { timeoutMs: READ_TIMEOUT_MS });
    return { id: w.token.name ?? `${w.principal.kind}:${w.principal.id}`, roles: w.roles };
  }

  /** Reads the whole picture again (on every (re)connect, after state-changing events, every 10 s). */
  async readSnapshot(): Promise<void> {
    const c = this.o.client;
    const opts = { timeoutMs: READ_TIMEOUT_MS };
    let s: StateSnapshot | undefined;
    if (this.hasStateRoute !== false) {
      try {
        s = await c.get<StateSnapshot>('/v1/state', opts);
        this.hasStateRoute = true;
      } catch (e) {
        if (!(e instanceof ApiError) || e.status !== 404) throw e;
        this.hasStateRoute = false;
      }
    }
    if (!s) {
      const [approvals, health, modules, tasks, standing] = await Promise.all([
        c.get<{ approvals: ApprovalView[] }>('/v1/approvals', opts),
        c.get<{ safety?: SafetyHealth }>('/v1/health', opts),
        c.get<{ modules: ModuleInfo[] }>('/v1/modules', opts),
        c.get<{ tasks: TaskView[] }>('/v1/tasks?all=true', opts),
        c.get<{ standing_approvals: StandingApprovalView[] }>('/v1/standing-approvals', opts),
      ]);
      s = {
        approvals: approvals.approvals,
        modules: modules.modules,
        tasks: tasks.tasks,
        standing_approvals: standing.standing_approvals,
      };
      if (health.safety) s.safety = health.safety;
    }
    const next: ConsoleData = {
      ...this.data,
      approvals: [...(s.approvals ?? [])].sort((x, y) => x.created_at.localeCompare(y.created_at)),
      modules: s.modules ?? [],
      tasks: (s.tasks ?? []).slice(0, 50),
      standing: s.standing_approvals ?? [],
    };
    if (s.safety) next.safety = s.safety;
    if (s.audit) next.audit = s.audit;
    if (s.counts && Number.isFinite(Date.parse(s.counts.since))) Object.assign(next, fromCounts(s.counts));
    this.set(next);
    if (!s.audit && this.data.audit.state === 'unknown') void this.verifyAudit().catch(() => undefined);
  }

  private scheduleRefresh(): void {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      void this.readSnapshot().catch(() => undefined);
    }, 300);
  }

  /** Follows `/v1/events` until the socket closes; resolves with why it closed. */
  private follow(onLive: () => void): Promise<string> {
    const c = this.o.client;
    const headers: Record<string, string> = c.token ? { authorization: `Bearer ${c.token}` } : {};
    return new Promise((resolve) => {
      const ws = new WebSocket(c.wsUrl('/v1/events'), { headers });
      this.ws = ws;
      let why = 'the daemon went away';
      ws.on('unexpected-response', (_req, res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk.slice(0, 4096)));
        res.on('end', () => {
          const e = upgradeError(res.statusCode, text);
          why = `${e.code}: ${e.message}`;
          ws.terminate();
        });
      });
      ws.on('message', (raw) => {
        let msg: EventStreamMessage;
        try {
          msg = JSON.parse(String(raw)) as EventStreamMessage;
        } catch {
          return;
        }
        if (msg.type === 'ready') ws.send(JSON.stringify({ op: 'subscribe', types: FOLLOWED }));
        else if (msg.type === 'subscribed') {
          onLive();
          this.set({ ...this.data, connection: 'live' });
          // what was held between the snapshot and the subscription
          void this.readSnapshot().catch(() => undefined);
        } else if (msg.type === 'event') this.onEvent(msg.event);
        else if (msg.type === 'dropped') this.scheduleRefresh();
        else if (msg.type === 'error') why = `${msg.error.code}: ${msg.error.message}`;
      });
      ws.on('error', (e) => (why = e.message || why));
      ws.on('close', (code) => {
        if (code === 4401) why = 'E_UNAUTHENTICATED: the daemon refused the token';
        resolve(why);
      });
    });
  }

  private onEvent(e: FingerEvent): void {
    const before = this.data.approvals.length;
    this.set(applyEvent(this.data, e));
    if (e.type === 'APPROVAL_REQUESTED' && this.data.approvals.length > before && this.o.bell) this.o.ring();
    if (REFRESHING.has(e.type)) this.scheduleRefresh();
  }

  /** Answers a held call (`POST /v1/approvals/:id`); rejects with the daemon's ApiError. */
  async answer(id: string, body: Record<string, unknown>): Promise<AnswerResultView> {
    return (await this.o.client.post<AnswerResultView>(`/v1/approvals/${seg(id)}`, body)).body;
  }

  /** The firewall's Evaluation of `tool` with `args` as an agent would call it (nothing runs). */
  async check(tool: string, args: unknown): Promise<CheckResult> {
    return (await this.o.client.post<CheckResult>('/v1/policy/check', { tool, args, principal_kind: 'agent' })).body;
  }

  /** `POST /v1/halt` (operator, admin). */
  async halt(): Promise<{ phase: string }> {
    const r = (await this.o.client.post<{ phase: string }>('/v1/halt', { reason: 'myfinger console' })).body;
    this.scheduleRefresh();
    return r;
  }

  /** `POST /v1/unlock` (admin). */
  async unlock(): Promise<{ unlocked: boolean }> {
    const r = (await this.o.client.post<{ unlocked: boolean }>('/v1/unlock', {})).body;
    this.scheduleRefresh();
    return r;
  }

  /** `GET /v1/audit/verify`: the chain's state and its first bad entry. */
  async verifyAudit(): Promise<void> {
    const v = await this.o.client.get<{
      ok: boolean;
      entries: number;
      first_bad: number | null;
      reason: string | null;
    }>('/v1/audit/verify', { timeoutMs: 60_000 });
    const audit: AuditState = {
      state: v.ok ? 'intact' : 'broken',
      entries: v.entries,
      checked_at: new Date().toISOString(),
    };
    if (v.first_bad !== null) audit.first_bad = { seq: v.first_bad, reason: v.reason ?? '' };
    this.set({ ...this.data, audit });
  }
}
