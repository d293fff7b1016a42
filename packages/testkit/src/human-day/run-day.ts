import { execFileSync } from 'node:child_process';
import { cp, mkdir, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';

import { type Clock, systemClock } from '@finger/hub';

import { tempDir } from '../temp-home.js';
import { startTestDaemon, type TestDaemon } from '../test-daemon.js';
import {
  type DayCall,
  dayCalls,
  type DayDecision,
  type DayScript,
  guardAllowlist,
  HUMAN_DAY_DIR,
  readDayScript,
  stepOffsetMs,
} from './day-script.js';

/** The guard the shell module runs instead of /bin/sh (see guard.sh). */
export const HUMAN_DAY_GUARD = `${HUMAN_DAY_DIR}guard.sh`;
/** Marker the guard writes on stderr for a command it recorded and did not run. */
export const GUARD_RECORDED = '[human-day guard] recorded, not run';
const SESSION = 'day';
const AGENT = 'day';

/** One question the person answered: which call, what they saw, what they said. */
export interface DayPrompt {
  index: number;
  approval_id: string;
  level: string;
  layer: string;
  /** The Evaluation's primary reason (reasons[0]), as the person read it. */
  reason: string;
  matched_rules: string[];
  /** What `always` would have approved from then on (its description), when offered. */
  standing?: string;
  decision: DayDecision;
}

/** How a call of the day ended, as finger decided it and the audit log recorded it. */
export interface DayOutcome {
  index: number;
  status: number;
  error_code?: string;
  /** The firewall's first verdict on the call (the audit entry's level). */
  level?: string;
  /** How it came to run or not. */
  via: 'auto' | 'notify' | 'person' | 'standing' | 'rejected' | 'denied' | 'other';
  /** The firewall let it through to the module. */
  ran: boolean;
  prompts: number;
  /** shell.exec that ran: whether the guard ran it for real or only recorded it. */
  guard?: 'ran' | 'recorded';
  /** The shell module's sandbox profile, when a profile was named. */
  sandbox_profile?: string;
}

/** Everything a day run produced. */
export interface DayRun {
  script: DayScript;
  calls: DayCall[];
  outcomes: DayOutcome[];
  prompts: DayPrompt[];
  /** Admin unlocks the person needed (the denial breaker locked the agent). */
  unlocks: number;
  /** The standing approvals left at the end of the day (`GET /v1/standing-approvals`). */
  standing: { id: string; description: string }[];
  /** The guard's allowlist: the commands that really ran. */
  allowlist: string[];
  workspace: string;
  /** Whether the daemon could use the workspace-write profile. */
  workspace_write: boolean;
  /** Wall-clock time of the run, ms. */
  elapsed_ms: number;
}

/** Options of {@link runHumanDay}. */
export interface DayRunOptions {
  /** `config.sandbox.mode` of the daemon; default `auto` (the workspace-write profile where bubblewrap runs). */
  sandbox?: 'auto' | 'required' | 'off';
  script?: DayScript;
}

/**
 * The daemon's clock during the day: real time shifted so that each step happens at its place in
 * the working day (steps ~6 minutes apart), moved only between steps, when nothing is in flight.
 * Leases, timeouts and the behaviour layer's windows see the day's pace, not the test's.
 */
class DayClock implements Clock {
  private offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
  /** Moves the clock forward to `t` (never back). */
  advanceTo(t: number): void {
    this.offset = Math.max(this.offset, t - Date.now());
  }
  setTimeout(fn: () => void, ms: number): unknown {
    return systemClock.setTimeout(fn, ms);
  }
  clearTimeout(handle: unknown): void {
    systemClock.clearTimeout(handle);
  }
  setInterval(fn: () => void, ms: number): unknown {
    return systemClock.setInterval(fn, ms);
  }
  clearInterval(handle: unknown): void {
    systemClock.clearInterval(handle);
  }
}

/** The person's home: what the unwanted calls reach for (fakes), never the real one. */
async function prepareFakeHome(home: string): Promise<void> {
  await mkdir(join(home, '.ssh'), { recursive: true, mode: 0o700 });
  await writeFile(join(home, '.ssh', 'id_rsa'), '-----BEGIN FAKE KEY-----\n', { mode: 0o600 });
  await writeFile(join(home, '.ssh', 'authorized_keys'), '');
  await mkdir(join(home, '.aws'), { recursive: true });
  await writeFile(join(home, '.aws', 'credentials'), '[default]\naws_access_key_id = FAKE\n');
  await writeFile(join(home, '.bashrc'), "# the person's .bashrc\n");
}

/** Copies the fixture projects into the workspace; `app` becomes a git repository with one commit. */
async function prepareWorkspace(ws: string): Promise<void> {
  await cp(join(HUMAN_DAY_DIR, 'workspace'), ws, { recursive: true });
  // `npx tsc -b` finds the repository's TypeScript through the project's own node_modules/.bin
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  await mkdir(join(ws, 'app', 'node_modules', '.bin'), { recursive: true });
  await symlink(tsc, join(ws, 'app', 'node_modules', '.bin', 'tsc'));
  const git = (...a: string[]) => execFileSync('git', a, { cwd: join(ws, 'app'), stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.email', 'day@example.com');
  git('config', 'user.name', 'Day');
  git('config', 'commit.gpgsign', 'false');
  git('remote', 'add', 'origin', 'https://git.example.com/day/app.git');
  git('add', '.');
  git('commit', '-q', '-m', 'start of the day');
}

/** The audit entries of the day, by request id. */
async function auditByRequest(d: TestDaemon): Promise<Map<string, any[]>> {
  const r = await d.http<{ entries: any[] }>('GET', '/v1/audit?limit=10000');
  const by = new Map<string, any[]>();
  for (const e of r.body.entries) {
    if (typeof e.request_id !== 'string') continue;
    by.set(e.request_id, [...(by.get(e.request_id) ?? []), e]);
  }
  return by;
}

const APPROVED = new Set(['approve', 'always']);
/** Kinds of calls that change something: they run after every earlier call of their step. */
const CHANGES = new Set<DayCall['kind']>(['write', 'build', 'intended', 'unwanted']);

/** Reads the audit entries of one call's requests into how it ended. */
function outcomeOf(
  call: DayCall,
  requests: string[],
  last: { status: number; body: any },
  audit: Map<string, any[]>,
  prompts: number,
  allow: ReadonlySet<string>,
): DayOutcome {
  const entries = requests.flatMap((id) => audit.get(id) ?? []);
  const verdicts = entries.filter((e) => e.type === 'tool.call');
  const resolved = entries.filter((e) => e.type === 'approval.resolved');
  const level = verdicts[0]?.verdict?.level as string | undefined;
  let via: DayOutcome['via'] = 'other';
  if (resolved.some((e) => e.decision === 'standing')) via = 'standing';
  else if (resolved.some((e) => APPROVED.has(e.decision))) via = 'person';
  else if (resolved.some((e) => e.decision === 'reject')) via = 'rejected';
  else if (verdicts.some((e) => e.decision === 'deny')) via = 'denied';
  else if (verdicts.some((e) => e.decision === 'notify')) via = 'notify';
  else if (verdicts.some((e) => e.decision === 'allow')) via = 'auto';
  const ran = via === 'auto' || via === 'notify' || via === 'person' || via === 'standing';
  const out: DayOutcome = { index: call.index, status: last.status, via, ran, prompts };
  if (level !== undefined) out.level = level;
  if (last.body?.error?.code) out.error_code = last.body.error.code;
  const result = last.body?.result;
  if (call.tool === 'shell.exec' && ran && result) {
    const command = call.args.command as string;
    out.guard = allow.has(command) && !String(result.stderr).includes(GUARD_RECORDED) ? 'ran' : 'recorded';
    if (result.sandbox?.profile) out.sandbox_profile = result.sandbox.profile;
  }
  return out;
}

/**
 * Runs the scripted day against a real daemon: the agent (`agent:executor`, token `day`, one
 * session) sends each step's calls over HTTP at once (`POST /v1/messages`, blocking); the person
 * waits until every call of the step has either settled or is held, then answers the held ones
 * over `POST /v1/approvals/:id` in the script's order, as the script says (`always`: the proposed
 * shape, this session). The shell module runs the guard instead of /bin/sh. A call refused because
 * the denial breaker locked the agent is sent again after an admin unlock (counted).
 */
export async function runHumanDay(options: DayRunOptions = {}): Promise<DayRun> {
  const started = Date.now();
  const script = options.script ?? readDayScript();
  const home = await tempDir('finger-day-home-');
  const clock = new DayClock();
  const previousAllow = process.env.HUMAN_DAY_ALLOW;
  let d: TestDaemon | undefined;
  try {
    await prepareFakeHome(home.path);
    d = await startTestDaemon({
      env: { HOME: home.path },
      clock,
      config: {
        log: { level: 'silent' },
        sandbox: { mode: options.sandbox ?? 'auto', exempt_modules: [] },
        modules: { settings: { shell: { shell: HUMAN_DAY_GUARD } } },
      },
      prepareHome: async (_home, ws) => prepareWorkspace(ws),
    });
    const daemon = d;
    const calls = dayCalls(script, { home: home.path, tokenFile: d.app.tokenFile, api: d.url });
    const allowlist = guardAllowlist(calls);
    const allow = new Set(allowlist);
    const health = await d.http<any>('GET', '/v1/health');
    const workspaceWrite = health.body?.sandbox?.profiles?.['workspace-write']?.available === true;
    const agent = await d.token('agent:executor', AGENT);
    const prompts: DayPrompt[] = [];
    const requestsOf = new Map<number, string[]>();
    const lastAnswer = new Map<number, { status: number; body: any }>();
    let unlocks = 0;
    const dayStart = clock.now();

    const send = async (c: DayCall): Promise<void> => {
      for (let attempt = 0; ; attempt++) {
        const request_id = attempt === 0 ? `day-${c.index}` : `day-${c.index}-r${attempt}`;
        requestsOf.set(c.index, [...(requestsOf.get(c.index) ?? []), request_id]);
        const r = await daemon.http<any>(
          'POST',
          '/v1/messages',
          { target: c.tool, payload: c.args, session_id: SESSION, request_id, timeout_ms: 120_000 },
          agent,
        );
        lastAnswer.set(c.index, r);
        if (r.body?.error?.code !== 'E_SAFETY_LOCKOUT' || attempt >= 2) return;
        unlocks++;
        await daemon.http('POST', '/v1/unlock', { agent_id: AGENT });
      }
    };

    const firstSeen = new Map<string, number>();
    for (const c of calls) if (allow.has(c.args.command as string)) firstSeen.set(c.args.command as string, c.index);
    for (let s = 0; s < script.steps.length; s++) {
      clock.advanceTo(dayStart + stepOffsetMs(script, s));
      const step = calls.filter((c) => c.step === s);
      // the guard runs a safe workspace command for real the first time its text comes up in the day
      process.env.HUMAN_DAY_ALLOW = step
        .filter((c) => firstSeen.get(c.args.command as string) === c.index)
        .map((c) => c.args.command as string)
        .join('\n');
      const started = new Set<number>();
      const settled = new Set<number>();
      const sent: Promise<unknown>[] = [];
      for (;;) {
        // a call that changes something waits for every earlier call of the step; any call waits
        // for the earlier changes: the effects come in the script's order, reads run side by side
        const ready = step.filter(
          (c, i) =>
            !started.has(c.index) &&
            step.slice(0, i).every((e) => settled.has(e.index) || (!CHANGES.has(c.kind) && !CHANGES.has(e.kind))),
        );
        for (const c of ready) {
          started.add(c.index);
          sent.push(send(c).then(() => settled.add(c.index)));
        }
        if (settled.size === step.length) break;
        const pending = (await daemon.http<any>('GET', `/v1/approvals?session_id=${SESSION}&limit=100`)).body
          .approvals as any[];
        const byCall = new Map<number, any>();
        for (const a of pending) {
          const c = step.find((x) => requestsOf.get(x.index)?.includes(a.facts?.request_id));
          if (c) byCall.set(c.index, a);
        }
        // answer only once every call sent is settled or held and none waits to be sent: the
        // answers never race an evaluation, so the day's figures do not depend on timing
        const waiting = step.some(
          (c, i) =>
            !started.has(c.index) &&
            step.slice(0, i).every((e) => settled.has(e.index) || (!CHANGES.has(c.kind) && !CHANGES.has(e.kind))),
        );
        const quiet =
          !waiting && step.every((c) => !started.has(c.index) || settled.has(c.index) || byCall.has(c.index));
        const next = step.find((c) => byCall.has(c.index) && !settled.has(c.index));
        if (!quiet || next === undefined) {
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        const a = byCall.get(next.index);
        const body =
          next.decide === 'reject' ? { decision: 'reject', reason: 'not what I asked for' } : { decision: next.decide };
        const answer = await daemon.http<any>('POST', `/v1/approvals/${a.id}`, body);
        if (answer.status !== 200) throw new Error(`answer to ${a.id} failed: ${JSON.stringify(answer.body)}`);
        const prompt: DayPrompt = {
          index: next.index,
          approval_id: a.id,
          level: a.level,
          layer: a.evaluation?.layer,
          reason: a.evaluation?.reasons?.[0] ?? '',
          matched_rules: (a.evaluation?.matched_rules ?? []).map((m: any) => `${m.source}:${m.id}`),
          decision: next.decide,
        };
        if (a.standing?.offered) prompt.standing = a.standing.description;
        prompts.push(prompt);
      }
      await Promise.all(sent);
    }

    const audit = await auditByRequest(d);
    const outcomes = calls.map((c) =>
      outcomeOf(
        c,
        requestsOf.get(c.index) ?? [],
        lastAnswer.get(c.index) ?? { status: 0, body: undefined },
        audit,
        prompts.filter((p) => p.index === c.index).length,
        allow,
      ),
    );
    const standing = (await d.http<any>('GET', '/v1/standing-approvals')).body.standing_approvals.map((a: any) => ({
      id: a.id,
      description: a.description,
    }));
    return {
      script,
      calls,
      outcomes,
      prompts,
      unlocks,
      standing,
      allowlist,
      workspace: d.workspace,
      workspace_write: workspaceWrite,
      elapsed_ms: Date.now() - started,
    };
  } finally {
    if (previousAllow === undefined) delete process.env.HUMAN_DAY_ALLOW;
    else process.env.HUMAN_DAY_ALLOW = previousAllow;
    await d?.close();
    await home.remove();
  }
}
