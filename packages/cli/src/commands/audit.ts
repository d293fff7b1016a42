import { hostname, userInfo } from 'node:os';
import path from 'node:path';

import type { Command } from 'commander';

import type { AuditEntry, AuditVerifyResult, SourcedHead } from '@finger/firewall';

import { readDaemonInfo } from '../client.js';
import { action, type CommandContext, type RunState } from '../context.js';
import { CliError, DaemonNotRunningError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { offlineHeads } from './audit-heads.js';
import { pidAlive } from './daemon.js';

interface ShowOptions {
  request?: string;
  type?: string;
  limit?: string;
  since?: string;
}

interface VerifyOptions {
  offline?: boolean;
  dir?: string;
  anchor?: string;
}

interface AcknowledgeOptions {
  yes?: boolean;
  reason?: string;
  anchor?: string;
}

interface ArchiveOptions {
  to?: string;
}

/** `GET /v1/audit`: entries oldest first and the chain's head. */
interface AuditPage {
  entries: AuditEntry[];
  head: { seq: number; hash: string };
}

function count(value: string | undefined, flag: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < min)
    throw new CliError('E_USAGE', `${flag} must be an integer ≥ ${min}, got ${JSON.stringify(value)}`);
  return n;
}

/** The rows of `audit show`: seq, time, type, actor (`kind:id`), tool, decision. */
export function auditRows(entries: AuditEntry[]): string[][] {
  return entries.map((e) => [
    String(e.seq),
    e.ts,
    e.type,
    e.actor ? `${e.actor.kind}:${e.actor.id}` : '-',
    e.tool ?? '-',
    e.decision ?? '-',
  ]);
}

/**
 * Verifies the chain through the daemon when the daemon of this home answers (it reads only
 * acknowledged bytes of a live log, and compares it with the heads it keeps), else by reading
 * `<home>/audit` directly against the recorded heads (`state/audit-head.json`, Redis with
 * redis.url). `--anchor` (a copy of the head) and `--dir` always read the files. The daemon is
 * asked only when its location is known (a `daemon.json` in the home, `--url` or FINGER_URL), so
 * a daemon of another home on the default port is never consulted.
 */
async function verify(
  ctx: CommandContext,
  opts: VerifyOptions,
): Promise<{ result: AuditVerifyResult; source: string; heads: string[] }> {
  if (opts.offline !== true && opts.dir === undefined && opts.anchor === undefined) {
    const loc = await ctx.locate();
    if (loc.info !== undefined || loc.urlSource !== 'default') {
      try {
        const client = await ctx.client();
        const result = await client.get<AuditVerifyResult>('/v1/audit/verify');
        return { result, source: `the daemon at ${loc.url}`, heads: [] };
      } catch (e) {
        if (!(e instanceof DaemonNotRunningError)) throw e;
      }
    }
  }
  const dir = opts.dir === undefined ? path.join(ctx.home, 'audit') : path.resolve(opts.dir);
  const heads = await offlineHeads(ctx, {
    ...(opts.anchor !== undefined ? { anchor: opts.anchor } : {}),
    ...(opts.dir !== undefined ? { dir: opts.dir } : {}),
    strict: false,
  });
  for (const w of heads.warnings) ctx.out.errLine(`warning: ${w}`);
  try {
    // Loaded only here and in `audit archive|acknowledge`: no other command needs the firewall package.
    const { verifyAuditLog } = await import('@finger/firewall');
    const compared: SourcedHead[] = [...heads.copies];
    const unreadable: string[] = [];
    for (const store of heads.stores) {
      try {
        const h = await store.read();
        if (h !== undefined) compared.push({ ...h, source: store.source });
      } catch (e) {
        unreadable.push((e as Error).message);
      }
    }
    let result = await verifyAuditLog(dir, { heads: compared });
    if (unreadable.length > 0 && result.ok) result = { ...result, ok: false, reason: unreadable.join('; ') };
    return { result, source: dir, heads: compared.map((h) => `${h.source} (entry ${h.seq})`) };
  } catch (e) {
    const err = e as { code?: unknown; message?: string };
    throw new CliError(typeof err.code === 'string' ? err.code : 'E_STORE_UNAVAILABLE', err.message ?? String(e));
  } finally {
    await heads.close();
  }
}

/** Who runs `audit acknowledge`: the OS user and host (the entry's actor). */
function osActor(): { kind: string; id: string } {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (a container): the uid is still in the process, not needed here
  }
  return { kind: 'human', id: `${user}@${hostname()}` };
}

/**
 * `audit show` — GET /v1/audit as a table (or `--json`); `audit verify` — recompute the hash
 * chain (daemon, or the files when it is stopped or with `--offline`). A broken log exits 1.
 */
export function registerAudit(program: Command, state: RunState): void {
  const audit = program.command('audit').description('read and verify the tamper-evident audit log');

  audit
    .command('show')
    .description('list audit entries, oldest first (GET /v1/audit)')
    .option('--request <id>', 'only the entries of this request')
    .option('--type <type>', 'only entries of this type (tool.call, grant.changed, undo, …)')
    .option('--since <seq>', 'only entries after this seq (page on with the last seq shown)')
    .option('--limit <n>', 'at most this many entries (default 100)')
    .action(
      action<ShowOptions>(state, async (ctx, _args, opts) => {
        const q = new URLSearchParams();
        if (opts.request !== undefined) q.set('request_id', opts.request);
        if (opts.type !== undefined) q.set('type', opts.type);
        const since = count(opts.since, '--since', 0);
        if (since !== undefined) q.set('since_seq', String(since));
        const limit = count(opts.limit, '--limit', 1);
        if (limit !== undefined) q.set('limit', String(limit));
        const client = await ctx.client();
        const qs = q.toString();
        const page = await client.get<AuditPage>(`/v1/audit${qs ? `?${qs}` : ''}`);
        if (ctx.out.json) ctx.out.printJson(page);
        else if (!page.entries.length) ctx.out.line(`no audit entries (head: seq ${page.head.seq})`);
        else ctx.out.table(['SEQ', 'TIME', 'TYPE', 'ACTOR', 'TOOL', 'DECISION'], auditRows(page.entries));
        return EXIT.OK;
      }),
    );

  audit
    .command('verify')
    .description('recompute the hash chain and name the first bad entry (works with the daemon stopped)')
    .option('--offline', 'read FINGER_HOME/audit directly even when the daemon runs')
    .option('--dir <dir>', 'verify the segments in this directory instead (an archive made by `audit archive`)')
    .option('--anchor <file>', 'also check the log against this copy of state/audit-head.json kept elsewhere')
    .action(
      action<VerifyOptions>(state, async (ctx, _args, opts) => {
        const { result, source, heads } = await verify(ctx, opts);
        const { ok, entries, first_bad, reason, archived_through } = result;
        const out = ctx.out;
        if (out.json)
          out.printJson({
            ok,
            entries,
            first_bad,
            reason,
            ...(archived_through !== undefined ? { archived_through } : {}),
          });
        else if (ok && archived_through !== undefined)
          out.line(
            `${out.c.green('ok')}: the audit log's hash chain is intact from entry ${archived_through + 1} on (${entries} entries, ${source}); entries 1..${archived_through} are in the archive: check it with \`myfinger audit verify --dir <archive>\``,
          );
        else if (ok)
          out.line(`${out.c.green('ok')}: the audit log's hash chain is intact (${entries} entries, ${source})`);
        if (ok && !out.json) for (const h of heads) out.line(`  it reaches the head recorded in ${h}`);
        if (!ok && !out.json) {
          out.errLine(
            out.ce.red(`audit log is BROKEN${first_bad === null ? '' : ` at entry ${first_bad}`}: ${reason}`),
          );
          if (first_bad !== null)
            out.errLine(`(${entries} entry lines, ${source}; entries from ${first_bad} on cannot be trusted)`);
          if (/^(missing|truncated|rewritten):/.test(reason ?? ''))
            out.errLine(
              'the daemon will not start on it; once you know what happened, `myfinger audit acknowledge --yes` (daemon stopped) starts a new chain that records the gap',
            );
        }
        return ok ? EXIT.OK : EXIT.GENERIC;
      }),
    );

  audit
    .command('archive')
    .description('move the closed segments of FINGER_HOME/audit to an archive directory (the chain goes on here)')
    .requiredOption('--to <dir>', 'archive directory (created if missing; segments already there must match)')
    .action(
      action<ArchiveOptions>(state, async (ctx, _args, opts) => {
        const { archiveAuditLog } = await import('@finger/firewall');
        const r = await archiveAuditLog(path.join(ctx.home, 'audit'), opts.to!);
        const out = ctx.out;
        if (out.json) out.printJson(r);
        else if (r.archived.length === 0)
          out.line(`nothing to archive: only the newest segment is in ${ctx.home}/audit`);
        else {
          out.line(`archived ${r.archived.length} segment(s) to ${r.to}: ${r.archived[0]} … ${r.archived.at(-1)}`);
          if (r.anchor !== undefined && r.anchor.seq > 0)
            out.line(
              `the archive ends at entry ${r.anchor.seq}, hash ${r.anchor.hash} — record it with the backup; the log here goes on from it`,
            );
        }
        return EXIT.OK;
      }),
    );

  audit
    .command('acknowledge')
    .description(
      'with the daemon stopped: start a new audit chain over a broken one, its first entry recording what was lost',
    )
    .option('--yes', 'really do it (the current segments are moved to audit/superseded-<time>/)')
    .option('--reason <text>', 'why, in your words (kept in the entry)')
    .option('--anchor <file>', 'also compare with this copy of the head (recorded as superseded too)')
    .action(
      action<AcknowledgeOptions>(state, async (ctx, _args, opts) => {
        const info = await readDaemonInfo(ctx.home);
        if (info !== undefined && pidAlive(info.pid))
          throw new CliError(
            'E_CONFLICT',
            `the daemon of ${ctx.home} is running (pid ${info.pid}): stop it first (\`myfinger daemon stop\`)`,
          );
        if (opts.yes !== true)
          throw new CliError('E_USAGE', 'audit acknowledge starts a new audit chain: add --yes to do it', {
            notes: [
              'the current segments move to audit/superseded-<time>/ (kept; `audit verify --dir` reads them),',
              'a new chain starts with an `audit.acknowledged` entry recording what was lost, and the head is reset',
            ],
          });
        const heads = await offlineHeads(ctx, {
          ...(opts.anchor !== undefined ? { anchor: opts.anchor } : {}),
          strict: true,
        });
        try {
          const { acknowledgeAuditGap } = await import('@finger/firewall');
          const r = await acknowledgeAuditGap(path.join(ctx.home, 'audit'), {
            heads: heads.stores,
            copies: heads.copies,
            by: osActor(),
            ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
          });
          const out = ctx.out;
          if (out.json)
            out.printJson({
              acknowledged: true,
              found: r.found,
              ...(r.unreadable.length > 0 ? { unreadable: r.unreadable } : {}),
              superseded: r.superseded,
              entry: r.entry,
              head: r.head,
            });
          else {
            out.line(`acknowledged: ${r.found.reason ?? r.unreadable.map((u) => u.error).join('; ')}`);
            if (r.superseded !== null) out.line(`the old segments are in ${r.superseded}`);
            out.line(
              `a new chain starts at entry ${r.entry.seq} (audit.acknowledged, hash ${r.head.hash}); the daemon can start again`,
            );
          }
          return EXIT.OK;
        } finally {
          await heads.close();
        }
      }),
    );
}
