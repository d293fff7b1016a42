import path from 'node:path';

import type { Command } from 'commander';

import type { AuditEntry, AuditVerifyResult } from '@finger/firewall';

import { action, type CommandContext, type RunState } from '../context.js';
import { CliError, DaemonNotRunningError } from '../errors.js';
import { EXIT } from '../exit-codes.js';

interface ShowOptions {
  request?: string;
  type?: string;
  limit?: string;
  since?: string;
}

interface VerifyOptions {
  offline?: boolean;
  dir?: string;
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
 * acknowledged bytes of a live log), else by reading `<home>/audit` directly. The daemon is asked
 * only when its location is known (a `daemon.json` in the home, `--url` or FINGER_URL), so a
 * daemon of another home on the default port is never consulted.
 */
async function verify(
  ctx: CommandContext,
  offline: boolean,
  dirOption?: string,
): Promise<{ result: AuditVerifyResult; source: string }> {
  if (!offline && dirOption === undefined) {
    const loc = await ctx.locate();
    if (loc.info !== undefined || loc.urlSource !== 'default') {
      try {
        const client = await ctx.client();
        return { result: await client.get<AuditVerifyResult>('/v1/audit/verify'), source: `the daemon at ${loc.url}` };
      } catch (e) {
        if (!(e instanceof DaemonNotRunningError)) throw e;
      }
    }
  }
  const dir = dirOption === undefined ? path.join(ctx.home, 'audit') : path.resolve(dirOption);
  // Loaded only here and in `audit archive`: no other command needs the firewall package.
  const { verifyAuditLog } = await import('@finger/firewall');
  try {
    return { result: await verifyAuditLog(dir), source: dir };
  } catch (e) {
    const err = e as { code?: unknown; message?: string };
    throw new CliError(typeof err.code === 'string' ? err.code : 'E_STORE_UNAVAILABLE', err.message ?? String(e));
  }
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
    .action(
      action<VerifyOptions>(state, async (ctx, _args, opts) => {
        const { result, source } = await verify(ctx, opts.offline === true, opts.dir);
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
        else {
          out.errLine(out.ce.red(`audit log is BROKEN at entry ${first_bad}: ${reason}`));
          out.errLine(`(${entries} entry lines, ${source}; entries from ${first_bad} on cannot be trusted)`);
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
}
