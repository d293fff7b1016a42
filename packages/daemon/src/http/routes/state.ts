import type { FastifyInstance } from 'fastify';

import type { FingerEvent } from '@finger/protocol';
import { rfc3339 } from '@finger/protocol';

import { ACCESS } from '../../auth/auth-hook.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { shown } from './approvals.js';
import { principalOf } from './input.js';
import { healthView } from './safety.js';
import { brief } from './tasks.js';

/** Most recent tasks in the snapshot. */
const MAX_TASKS = 50;
/** Most events of each kind read for the counts. */
const MAX_COUNT_EVENTS = 2000;
/** The counts cover this many one-minute buckets, oldest first. */
const COUNT_MINUTES = 30;
/** A verification of the audit chain younger than this is reused (the snapshot stays cheap). */
const AUDIT_VERIFY_MAX_AGE_MS = 5000;

/** The audit chain's state as the snapshot shows it. */
export interface AuditState {
  state: 'intact' | 'broken' | 'unknown';
  entries: number;
  first_bad?: { seq: number | null; reason: string };
  checked_at: string;
}

const anyObject = { type: 'object', additionalProperties: true } as const;
const anyArray = { type: 'array', items: anyObject } as const;

/** Per-level calls, holds and answer times over the last {@link COUNT_MINUTES} minutes, from the event log. */
export function countsOf(
  verdicts: readonly FingerEvent[],
  requested: readonly FingerEvent[],
  resolved: readonly FingerEvent[],
  now: number,
): Record<string, unknown> {
  const bucketMs = 60_000;
  const start = now - COUNT_MINUTES * bucketMs;
  const bucket = (e: FingerEvent): number => {
    const t = Date.parse(e.ts);
    return Number.isFinite(t) && t >= start && t <= now ? Math.floor((t - start) / bucketMs) : -1;
  };
  const perLevel: Record<string, number[]> = {};
  for (const e of verdicts) {
    const i = bucket(e);
    const level = typeof e.data.level === 'string' ? e.data.level : 'unknown';
    if (i < 0 || i >= COUNT_MINUTES) continue;
    (perLevel[level] ??= new Array<number>(COUNT_MINUTES).fill(0))[i]!++;
  }
  const holds = new Array<number>(COUNT_MINUTES).fill(0);
  const reasons = new Map<string, number>();
  for (const e of requested) {
    const i = bucket(e);
    if (i < 0 || i >= COUNT_MINUTES) continue;
    holds[i]!++;
    const approval = e.data.approval as { evaluation?: { reasons?: unknown[] } } | undefined;
    const first = approval?.evaluation?.reasons?.[0];
    if (typeof first === 'string') reasons.set(first, (reasons.get(first) ?? 0) + 1);
  }
  const answered: number[] = [];
  const decisions: Record<string, number> = {};
  for (const e of resolved) {
    if (bucket(e) < 0 || e.data.id === null) continue;
    const d = typeof e.data.decision === 'string' ? e.data.decision : 'unknown';
    decisions[d] = (decisions[d] ?? 0) + 1;
    if (typeof e.data.latency_ms === 'number' && e.data.decided_by !== 'timeout') answered.push(e.data.latency_ms);
  }
  answered.sort((a, b) => a - b);
  const pct = (p: number): number | null =>
    answered.length ? answered[Math.min(answered.length - 1, Math.floor(p * answered.length))]! : null;
  return {
    since: rfc3339(start),
    bucket_ms: bucketMs,
    buckets: COUNT_MINUTES,
    levels: perLevel,
    holds,
    decisions,
    answer_ms: { count: answered.length, p50: pct(0.5), p90: pct(0.9), max: answered.at(-1) ?? null },
    top_hold_reasons: [...reasons.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 5)
      .map(([reason, count]) => ({ reason, count })),
  };
}

/**
 * `GET /v1/state` (viewer+): one snapshot for a UI to render from before it applies the live
 * events of `/v1/events` — pending approvals, safety and breakers, modules, recent tasks,
 * standing approvals, the audit chain's verification (rerun when older than 5 s) and counts of
 * the last 30 minutes. The gateway does not resume from a position: `last_event_seq` is null and
 * a client re-fetches the snapshot on every (re)connect; `last_event_id` names the newest event.
 */
export function stateRoutes(app: FastifyInstance, deps: RouteDeps, now: () => number = Date.now): void {
  let audit: { at: number; value: AuditState } | undefined;
  let verifying: Promise<AuditState> | undefined;
  const auditState = (): Promise<AuditState> => {
    if (audit && now() - audit.at < AUDIT_VERIFY_MAX_AGE_MS) return Promise.resolve(audit.value);
    verifying ??= (async (): Promise<AuditState> => {
      let value: AuditState;
      try {
        const r = await deps.audit.verify();
        value = {
          state: r.ok ? 'intact' : 'broken',
          entries: r.entries,
          ...(r.ok ? {} : { first_bad: { seq: r.first_bad, reason: r.reason ?? 'unknown' } }),
          checked_at: rfc3339(now()),
        };
      } catch (e) {
        value = {
          state: 'unknown',
          entries: 0,
          first_bad: { seq: null, reason: (e as Error).message },
          checked_at: rfc3339(now()),
        };
      }
      audit = { at: now(), value };
      return value;
    })().finally(() => (verifying = undefined));
    return verifying;
  };

  app.get(
    '/v1/state',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['state'],
        summary: 'A snapshot for UIs: approvals, safety, breakers, modules, tasks, standing approvals, audit, counts',
        response: {
          200: {
            type: 'object',
            required: [
              'generated_at',
              'last_event_seq',
              'approvals',
              'safety',
              'breakers',
              'modules',
              'tasks',
              'standing_approvals',
              'audit',
              'counts',
            ],
            properties: {
              generated_at: { type: 'string' },
              last_event_seq: { type: 'null', description: 'null: the event stream does not resume from a position' },
              last_event_id: { type: ['string', 'null'] },
              approvals: anyArray,
              safety: anyObject,
              breakers: anyArray,
              modules: anyArray,
              tasks: anyArray,
              standing_approvals: anyArray,
              audit: anyObject,
              counts: anyObject,
            },
          },
          ...errorResponses(),
        },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const t = now();
      const [latest, verdicts, requested, resolved, safetyState, auditView] = await Promise.all([
        deps.hub.events.recent({}, 1),
        deps.hub.events.recent({ types: ['FIREWALL_VERDICT'] }, MAX_COUNT_EVENTS),
        deps.hub.events.recent({ types: ['APPROVAL_REQUESTED'] }, MAX_COUNT_EVENTS),
        deps.hub.events.recent({ types: ['APPROVAL_RESOLVED'] }, MAX_COUNT_EVENTS),
        deps.safety?.state(),
        auditState(),
      ]);
      const safety = safetyState ? healthView(safetyState, true) : { state: 'open', locked: false };
      const breakers = safetyState
        ? Object.entries(safetyState.breakers).map(([id, b]) => ({ id, ...(b as object) }))
        : [];
      const modules = deps.hub.registry
        .list()
        .map((m) => ({ ...m, ...(deps.cluster?.placement(m.id) ?? { location: 'local', nodes: [] }) }));
      const tasks = deps.tasks ? deps.tasks.list(principal, true).slice(0, MAX_TASKS).map(brief) : [];
      return {
        generated_at: rfc3339(t),
        last_event_seq: null,
        last_event_id: latest.at(-1)?.id ?? null,
        approvals: deps.gate?.list({}) ?? [],
        safety,
        breakers,
        modules,
        tasks,
        standing_approvals: (deps.gate?.standingApprovals.list({}) ?? []).map(shown),
        audit: auditView,
        counts: countsOf(verdicts, requested, resolved, t),
      };
    },
  );
}
