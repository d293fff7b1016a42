import { Socket } from 'node:net';
import os from 'node:os';

import type { Command } from 'commander';

import type { DaemonConfig } from '@finger/daemon';
import { toErrorInfo } from '@finger/protocol';

import { action, type CommandContext, type RunState } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { eventsCheck } from './doctor-events.js';
import { allWirings } from './hook-install.js';

/** Outcome of one `doctor` check. */
export interface DoctorCheck {
  name: 'config' | 'daemon' | 'nats' | 'redis' | 'llm' | 'sandbox' | 'limits' | 'events' | 'hooks';
  status: 'ok' | 'warn' | 'fail' | 'skip';
  detail: string;
}

const TIMEOUT_MS = 2000;

/** What a daemon of a NATS cluster without Redis keeps to itself (operations.md, "Redis: shared state"). */
const CLUSTER_WITHOUT_REDIS =
  'redis.url not set: with NATS alone each daemon keeps its own lockouts, budgets, idempotency records, UserPolicy and standing approvals, and a halt or unlock reaches the others only as an event (missed by a daemon cut off from NATS then) — set redis.url to share them';

/**
 * Opens a TCP connection to the first host of `url`, optionally writes `send`, and resolves with
 * the first bytes received (or '' when the server sent nothing before `timeout_ms`). Rejects when
 * the connection fails.
 */
export function probeTcp(url: string, send?: string, timeout_ms = TIMEOUT_MS): Promise<string> {
  const u = new URL(url.split(',')[0]!.trim());
  const port = Number(u.port) || (u.protocol.startsWith('redis') ? 6379 : 4222);
  return new Promise((resolve, reject) => {
    const s = new Socket();
    let connected = false;
    const done = (err: Error | undefined, data = '') => {
      s.destroy();
      if (err) reject(err);
      else resolve(data);
    };
    s.setTimeout(timeout_ms, () =>
      connected ? done(undefined) : done(new Error(`no answer within ${timeout_ms} ms`)),
    );
    s.once('error', (e) => done(e));
    s.once('data', (d) => done(undefined, d.toString('utf8')));
    s.connect(port, u.hostname || '127.0.0.1', () => {
      connected = true;
      if (send !== undefined) s.write(send);
    });
  });
}

/**
 * NATS: the server's `INFO` greeting, then a connection with the daemon's credentials and TLS
 * files, and what the server refuses a daemon of the cluster (natsAccessProblems).
 */
async function checkNats(config: DaemonConfig, home: string): Promise<DoctorCheck> {
  const url = config.nats.url!;
  const { withoutCredentials } = await import('@finger/hub');
  const shown = withoutCredentials(url);
  let server: string;
  try {
    const first = await probeTcp(url);
    if (!first.startsWith('INFO ')) return { name: 'nats', status: 'fail', detail: `${shown} does not speak NATS` };
    const info = JSON.parse(first.slice(5).split('\r\n')[0]!) as { version?: string; jetstream?: boolean };
    server = `${shown}: nats-server ${info.version ?? '?'}${info.jetstream ? ', JetStream on' : ''}`;
  } catch (e) {
    return { name: 'nats', status: 'fail', detail: `${shown}: ${(e as Error).message}` };
  }
  const [d, nats] = await Promise.all([import('@finger/daemon'), import('@finger/hub/nats')]);
  let key: string;
  try {
    key = d.clusterKey(config, home); // the daemon refuses to start without it
  } catch (e) {
    return { name: 'nats', status: 'fail', detail: `${server}; ${toErrorInfo(e).message}` };
  }
  let nc: Awaited<ReturnType<typeof nats.connectNats>>;
  try {
    nc = await nats.connectNats({
      ...d.natsConnectOptions(config.nats, home, 'finger-doctor'),
      timeout_ms: TIMEOUT_MS,
    });
  } catch (e) {
    return { name: 'nats', status: 'fail', detail: `${server}; ${toErrorInfo(e).message}` };
  }
  try {
    // signs its probes of the registry, events and cancel subjects as a node of its own
    const auth = new nats.WireAuth({ role: 'daemon', node: `finger-doctor-${process.pid}`, cluster_key: key });
    const refused = await nats.natsAccessProblems(nc, config.cluster, auth);
    if (refused.length > 0)
      return {
        name: 'nats',
        status: 'fail',
        detail: `${server}; the daemon's NATS user is refused ${refused.join(', ')}`,
      };
    return { name: 'nats', status: 'ok', detail: `${server}; credentials and permissions ok` };
  } finally {
    await nc.close().catch(() => undefined);
  }
}

/**
 * Redis: a connection with the URL's credentials (and TLS for `rediss://`), then PING and the
 * URL's database; a failure says what it means (redisCause, as the daemon's start does). Then
 * what the user's ACL lets it do with the cluster's keys, scripts and channel: a refusal fails.
 */
async function checkRedis(url: string, cluster: string): Promise<DoctorCheck> {
  const { parseRedisUrl, withoutCredentials } = await import('@finger/hub');
  const shown = withoutCredentials(url);
  let parts: ReturnType<typeof parseRedisUrl>;
  try {
    parts = parseRedisUrl(url);
  } catch (e) {
    return { name: 'redis', status: 'fail', detail: toErrorInfo(e).message };
  }
  const { pingRedis, redisAccessRefusals, redisCause } = await import('@finger/hub/redis');
  try {
    const pong = await pingRedis(url, TIMEOUT_MS);
    const auth = shown !== url ? ' (authenticated)' : '';
    const prefix = `finger:${cluster}:`;
    const refused = await redisAccessRefusals(url, prefix, TIMEOUT_MS);
    if (refused.length > 0)
      return {
        name: 'redis',
        status: 'fail',
        detail: `${shown}: ${pong}${auth}, but the Redis user may not ${refused.join('; ')} — a daemon needs the keys ~${prefix}*, the channels &${prefix}* and the commands listed in docs/operations.md`,
      };
    return { name: 'redis', status: 'ok', detail: `${shown}: ${pong}${auth}` };
  } catch (e) {
    return { name: 'redis', status: 'fail', detail: `${shown}: ${redisCause(e, parts)}` };
  }
}

async function checkLlm(llm: DaemonConfig['llm']): Promise<DoctorCheck> {
  if (llm.provider === 'offline') return { name: 'llm', status: 'skip', detail: 'provider offline' };
  const base =
    llm.base_url ?? (llm.provider === 'anthropic' ? 'https://api.anthropic.com' : 'https://api.openai.com/v1');
  try {
    // reachability only: no credentials are sent
    const res = await fetch(base, { method: 'GET', redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
    return { name: 'llm', status: 'ok', detail: `${llm.provider} at ${base}: HTTP ${res.status}` };
  } catch (e) {
    return { name: 'llm', status: 'fail', detail: `${llm.provider} at ${base}: ${(e as Error).message}` };
  }
}

/** What doctor reads of the running daemon's `/v1/health`. */
interface DaemonHealth {
  status?: string;
  reasons?: string[];
  version?: string;
  nats?: { connected?: boolean; refused?: number; last_refused?: string; url?: string; cluster?: string };
  sandbox?: {
    mode: 'auto' | 'required' | 'off';
    available: boolean;
    active: boolean;
    reason?: string;
    bwrap?: string;
    profiles?: { 'workspace-write'?: { available: boolean; reason?: string } };
    network?: { allow: string[]; hosts: string[]; socket: string };
  };
}

/**
 * The sandbox of AI-initiated processes: what the running daemon reports, else what a trial run
 * here says for the config's mode. Unsandboxed is `warn` with the loud line the daemon logs.
 */
async function checkSandbox(
  config: DaemonConfig | undefined,
  health: DaemonHealth | undefined,
  env: Record<string, string | undefined>,
): Promise<DoctorCheck> {
  const hub = await import('@finger/hub');
  let s = health?.sandbox;
  let where = 'the running daemon';
  if (s === undefined) {
    const mode = config?.sandbox.mode ?? 'auto';
    const p: { available: boolean; reason?: string; bwrap?: string } =
      mode === 'off' ? { available: false, reason: 'sandbox.mode is off' } : hub.probeSandbox({ env });
    const ww =
      mode !== 'off' && p.available && p.bwrap !== undefined
        ? hub.probeWorkspaceWrite(p.bwrap)
        : { available: false, reason: p.reason ?? 'no sandbox' };
    s = {
      mode,
      available: p.available,
      active: mode !== 'off' && p.available,
      ...(p.reason ? { reason: p.reason } : {}),
      profiles: {
        'workspace-write': ww.available ? { available: true } : { available: false, reason: ww.reason ?? '' },
      },
    };
    where = 'a trial run here (daemon not reachable with a token)';
  }
  const warning = hub.sandboxWarning(s);
  const ww = s.profiles?.['workspace-write'];
  const profile =
    ww === undefined
      ? ''
      : ww.available
        ? '; workspace-write profile available (moderate shell calls that stay in the workspace run at NOTIFY)'
        : `; workspace-write profile not available: ${ww.reason ?? 'unknown reason'} (moderate shell calls are held)`;
  // the package-registry proxy: what the running daemon reports, else what the config says
  const allow = health?.sandbox !== undefined ? (s.network?.allow ?? []) : (config?.sandbox.network.allow ?? []);
  const network =
    allow.length === 0
      ? '; no network in the workspace-write profile'
      : `; the workspace-write profile reaches ${allow.join(', ')} through the filtering proxy` +
        (s.network !== undefined ? ` (${s.network.hosts.length} host:port pairs, socket ${s.network.socket})` : '');
  if (warning === undefined)
    return { name: 'sandbox', status: 'ok', detail: `bubblewrap, mode ${s.mode}${profile}${network} (${where})` };
  return { name: 'sandbox', status: s.mode === 'required' ? 'fail' : 'warn', detail: `${warning} (${where})` };
}

async function checkDaemon(ctx: CommandContext): Promise<DoctorCheck & { health?: DaemonHealth }> {
  let url = '?';
  try {
    const loc = await ctx.locate();
    url = loc.url;
    // with the token: without one the daemon names no NATS URL or cluster, which the config check below compares
    const headers: Record<string, string> = loc.token ? { authorization: `Bearer ${loc.token}` } : {};
    const res = await fetch(`${url}/v1/health`, { headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
    const h = (await res.json()) as DaemonHealth;
    let nats = h.nats === undefined ? '' : h.nats.connected ? ', NATS connected' : ', NATS disconnected';
    if (h.nats?.refused) nats += `; NATS refused it ${h.nats.refused}× (last: ${h.nats.last_refused ?? '?'})`;
    const why = h.reasons !== undefined && h.reasons.length > 0 ? `: ${h.reasons.join('; ')}` : '';
    const detail = `${url}: ${h.status ?? 'unknown'}${why} (version ${h.version ?? '?'}${nats})`;
    return { name: 'daemon', status: h.status === 'ok' ? 'ok' : 'warn', detail, health: h };
  } catch (e) {
    return { name: 'daemon', status: 'fail', detail: `${url}: not reachable (${(e as Error).message})` };
  }
}

/** Runs every check; a missing section is `skip`. */
export async function runDoctor(ctx: CommandContext): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  let config: DaemonConfig | undefined;
  try {
    const d = await import('@finger/daemon');
    const file = d.readConfigFile(ctx.home); // undefined when there is no config.json
    config = d.resolveConfig(file, ctx.io.env);
    const source =
      file === undefined
        ? `no config file (defaults): ${d.configPath(ctx.home)} does not exist`
        : d.configPath(ctx.home);
    checks.push({ name: 'config', status: 'ok', detail: `${source} (cluster ${config.cluster})` });
  } catch (e) {
    checks.push({ name: 'config', status: 'fail', detail: toErrorInfo(e).message });
  }
  const [daemon, nats, redis, llm] = await Promise.all([
    checkDaemon(ctx),
    config?.nats.url
      ? checkNats(config, ctx.home)
      : ({ name: 'nats', status: 'skip', detail: 'nats.url not set' } as const),
    !config
      ? ({ name: 'redis', status: 'skip', detail: 'no valid config' } as const)
      : config.redis.url
        ? checkRedis(config.redis.url, config.cluster)
        : config.nats.url
          ? ({ name: 'redis', status: 'warn', detail: CLUSTER_WITHOUT_REDIS } as const)
          : ({ name: 'redis', status: 'skip', detail: 'redis.url not set' } as const),
    config ? checkLlm(config.llm) : ({ name: 'llm', status: 'skip', detail: 'no valid config' } as const),
  ]);
  const { health, ...daemonCheck } = daemon;
  checks.push(daemonCheck, nats, redis, llm, await checkSandbox(config, health, ctx.io.env));
  if (config) {
    checks.push(limitsCheck((await import('@finger/daemon')).firewallLimits(config)));
    const { EVENT_STORE_DEFAULTS } = await import('@finger/hub');
    checks.push(await eventsCheck(ctx.home, { ...EVENT_STORE_DEFAULTS, ...config.events }));
  }
  checks.push(...(await hooksChecks(process.cwd(), ctx.io.env.HOME ?? os.homedir(), config?.hooks.hold_ms)));
  const differs = config ? runningDiffers(config, health, (await import('@finger/hub')).withoutCredentials) : undefined;
  if (differs !== undefined) checks.push({ name: 'config', status: 'warn', detail: differs });
  return checks;
}

/**
 * One line per agent wired to finger (delegated mode) here or for this user: ok when the agent
 * blocks a call whose hook failed (Claude Code `onFailure: "block"`, Cursor `failClosed`), warn when
 * only the hook's own deny stands between a crash and the call (Codex, Copilot) — a warning, so
 * doctor still exits 0; skip when none is. `holdMs` (config `hooks.hold_ms`): how long each
 * agent's hook waits for a person.
 */
export async function hooksChecks(
  cwd: string,
  userHome: string,
  holdMs?: Readonly<Record<string, number>>,
): Promise<DoctorCheck[]> {
  const wired = (await allWirings(cwd, userHome)).filter((w) => w.wired);
  if (wired.length === 0)
    return [{ name: 'hooks', status: 'skip', detail: 'no agent wired (myfinger hook install <agent>)' }];
  return wired.map((w) => {
    const hold = holdMs?.[w.agent];
    const waits = hold === undefined ? '' : `; waits up to ${hold / 1000} s for a person (hooks.hold_ms.${w.agent})`;
    return {
      name: 'hooks',
      status: w.fail_closed ? 'ok' : 'warn',
      detail: `${w.agent} (${w.scope}, ${w.file}): ${w.fail_closed ? 'fails closed' : 'fails open if the hook itself cannot answer (the agent has no fail-closed switch)'}${w.post ? '; post events audited' : ''}${waits}`,
    };
  });
}

/**
 * The limits that decide how often an agent is stopped or asked (config `safety.denial_*` and
 * `firewall.behaviour`), in words.
 */
export function limitsCheck(l: {
  denial: { denial_consecutive: number; denial_threshold: number; denial_window: number };
  behaviour: {
    window_ms: number;
    max_repeats: number;
    max_repeats_low_confidence: number;
    max_tool_calls: number;
    volume_kinds?: readonly string[];
  };
  holds?: { max_pending: number; max_pending_per_principal: number; human_reserve: number };
}): DoctorCheck {
  const b = l.behaviour;
  const secs = b.window_ms % 1000 === 0 ? `${b.window_ms / 1000} s` : `${b.window_ms} ms`;
  return {
    name: 'limits',
    status: 'ok',
    detail:
      `denial breaker: ${l.denial.denial_consecutive} in a row or ${l.denial.denial_threshold} of the last ` +
      `${l.denial.denial_window} decisions lock an agent (a rejection marked not the agent's fault does not count); ` +
      `behaviour: the same call more than ${b.max_repeats} times (${b.max_repeats_low_confidence} at low confidence) ` +
      `in ${secs} → APPROVE, the same call shape (tool, or shell program) more than ${b.max_tool_calls} times → CONFIRM` +
      (b.volume_kinds === undefined
        ? ''
        : b.volume_kinds.length === 0
          ? ' (counted for no caller)'
          : ` (counted for ${b.volume_kinds.join(', ')} callers; firewall.behaviour.volume_kinds)`) +
      (l.holds
        ? `; holds: ${l.holds.max_pending} calls held for a person at most, ${l.holds.max_pending_per_principal} per token, ` +
          `${l.holds.human_reserve} of them kept for people's own calls (approvals.max_pending, max_pending_per_principal, human_reserve)`
        : ''),
  };
}

/**
 * Where the running daemon's cluster differs from the config doctor read (FINGER_HOME's file and
 * this shell's FINGER_* variables): doctor then checked another NATS or cluster than the daemon uses.
 */
function runningDiffers(
  config: DaemonConfig,
  health: DaemonHealth | undefined,
  withoutCredentials: (url: string) => string,
): string | undefined {
  const running = health?.nats;
  const mine = config.nats.url === undefined ? undefined : withoutCredentials(config.nats.url);
  if (running === undefined) {
    return mine === undefined
      ? undefined
      : health === undefined
        ? undefined
        : `this config sets nats.url (${mine}) but the running daemon is not in a cluster: restart it to apply the config`;
  }
  // no URL: the daemon answered without details (no valid token), so there is nothing to compare
  if (running.url === undefined) return undefined;
  const parts: string[] = [];
  if (mine !== running.url) parts.push(`NATS ${running.url ?? '?'} (this config: ${mine ?? 'none'})`);
  if (running.cluster !== undefined && running.cluster !== config.cluster)
    parts.push(`cluster ${running.cluster} (this config: ${config.cluster})`);
  if (parts.length === 0) return undefined;
  return `the running daemon uses ${parts.join(' and ')}: run doctor with the daemon's environment (FINGER_HOME, FINGER_NATS_URL, FINGER_CLUSTER) to check what it uses`;
}

/**
 * `myfinger doctor [--json]`: checks the config (file + FINGER_* env), the daemon (/v1/health),
 * NATS (`INFO` greeting, the credentials, the permissions a daemon needs) and Redis (a connection
 * with the URL's credentials, then `PING`) when
 * configured, and that the LLM endpoint answers
 * HTTP. Exits 0 when nothing failed (warnings allowed), 1 otherwise.
 */
export function registerDoctor(program: Command, state: RunState): void {
  program
    .command('doctor')
    .description('check config, daemon, NATS, Redis and the LLM endpoint')
    .action(
      action(state, async (ctx) => {
        const checks = await runDoctor(ctx);
        const ok = checks.every((c) => c.status !== 'fail');
        if (ctx.out.json) ctx.out.printJson({ ok, checks });
        else {
          const c = ctx.out.c;
          const paint = (s: DoctorCheck['status']) =>
            s === 'ok' ? c.green(s) : s === 'fail' ? c.red(s) : s === 'warn' ? c.yellow(s) : s;
          ctx.out.table(
            ['CHECK', 'STATUS', 'DETAIL'],
            checks.map((x) => [x.name, paint(x.status), x.detail]),
          );
        }
        return ok ? EXIT.OK : EXIT.GENERIC;
      }),
    );
}
