import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';

import type { Command } from 'commander';

import type { FingerEvent } from '@finger/protocol';

import { type DaemonClient, type Env, seg } from '../client.js';
import { action, type CommandContext, type RunState } from '../context.js';
import { ApiError, CliError } from '../errors.js';
import { type StreamControl, streamEvents } from '../event-stream.js';
import { EXIT } from '../exit-codes.js';
import type { Colors, Output } from '../output.js';

/** A pending approval as `GET /v1/approvals` sends it (the fields the CLI shows). */
export interface ApprovalView {
  id: string;
  tool_id: string;
  args: unknown;
  level: string;
  evaluation: {
    level: string;
    layer: string;
    reasons: string[];
    matched_rules: { source: string; id: string; level: string; reason: string }[];
    preview?: {
      kind: 'diff' | 'command' | 'args';
      text: string;
      file_sha256?: string | null;
      path?: string;
      cwd?: string;
    };
  };
  facts: {
    principal: { kind: string; id: string; roles: string[] };
    session_id: string;
    request_id: string;
    correlation_id: string;
  };
  risk: string;
  human_only: boolean;
  /** What `always` would approve from now on (absent from an older daemon). */
  standing?: { offered: true; shape: unknown; description: string } | { offered: false; reason: string };
  status: 'reviewing' | 'waiting';
  review?: { mode: string; status: string; reason?: string };
  created_at: string;
  expires_at: string;
}

/** `POST /v1/approvals/:id`. */
export interface AnswerResultView {
  id: string;
  decision: 'approve' | 'reject' | 'always' | 'abort';
  approved: boolean;
  tool_id: string;
  edited: boolean;
  session_approval: boolean;
  reason?: string;
  code?: string;
  args_digest?: string;
  abort?: 'stopping' | 'stopped';
  /** The token that answered: its name (id) and roles. */
  answered_by?: AnsweredByView;
  /** The standing approval `always` created. */
  standing_approval?: StandingApprovalView;
}

/** A standing approval (`GET /v1/standing-approvals`). */
export interface StandingApprovalView {
  id: string;
  tool_id: string;
  shape: unknown;
  description?: string;
  level: string;
  principal: string;
  scope: 'session' | 'workspace' | 'persistent';
  session_id?: string;
  workspace?: string;
  expires_at?: string;
  by: string;
  created_at: string;
  approval_id: string;
}

/** The rows of `approvals standing`: id, scope, caller, shape, expiry. */
export function standingRows(list: StandingApprovalView[]): string[][] {
  return list.map((a) => [
    a.id,
    a.scope === 'session' ? `session ${a.session_id ?? '-'}` : a.scope,
    a.principal,
    a.description ?? a.tool_id,
    a.expires_at ?? '-',
  ]);
}

/** Every field of one standing approval, a line each. */
export function formatStanding(a: StandingApprovalView): string[] {
  return [
    `standing approval ${a.id}`,
    `shape:     ${a.description ?? JSON.stringify(a.shape)}`,
    `caller:    ${a.principal}`,
    `scope:     ${a.scope}${a.session_id ? ` (session ${a.session_id})` : ''}${a.workspace ? ` (workspace ${a.workspace})` : ''}`,
    `level:     up to ${a.level} holds (never APPROVE or DENY)`,
    `given by:  ${a.by} at ${a.created_at} on approval ${a.approval_id}`,
    `expires:   ${a.expires_at ?? 'with its scope'}`,
  ];
}

/** Who answered a held call (the answer, APPROVAL_RESOLVED): the token's name and roles. */
export interface AnsweredByView {
  kind?: string;
  id: string;
  roles?: string[];
}

/** ` by alice (operator)`, or '' when the answer names nobody. */
export function answeredBySuffix(by: AnsweredByView | undefined): string {
  if (!by || typeof by.id !== 'string') return '';
  const roles = Array.isArray(by.roles) && by.roles.length ? ` (${by.roles.join(', ')})` : '';
  return ` by ${by.id}${roles}`;
}

/** The rows of `approvals`: id, level, tool, principal, session, expiry. */
export function approvalRows(list: ApprovalView[]): string[][] {
  return list.map((a) => [
    a.id,
    a.level,
    a.tool_id,
    `${a.facts.principal.kind}:${a.facts.principal.id}`,
    a.facts.session_id || '-',
    a.expires_at,
  ]);
}

/** Everything a person needs to decide: tool, principal, level, reasons, rules and the full preview. */
export function formatApproval(a: ApprovalView, c: Colors): string[] {
  const ev = a.evaluation;
  const lines = [
    `${c.bold(`approval ${a.id}`)}  ${c.yellow(a.level)}  ${c.cyan(a.tool_id)}${a.human_only ? c.red('  human only') : ''}`,
    `principal: ${a.facts.principal.kind}:${a.facts.principal.id} (${a.facts.principal.roles.join(',') || 'no role'})` +
      `  session: ${a.facts.session_id || '-'}  request: ${a.facts.request_id || '-'}`,
    `held by:   ${ev.layer}  expires: ${a.expires_at}`,
  ];
  for (const r of ev.reasons) lines.push(`reason:    ${r}`);
  for (const r of ev.matched_rules) lines.push(`rule:      ${r.source} ${r.id} → ${r.level} (${r.reason})`);
  if (a.review)
    lines.push(`reviewer:  ${a.review.mode}, ${a.review.status}${a.review.reason ? `: ${a.review.reason}` : ''}`);
  if (a.standing?.offered === true) lines.push(`always:    from now on approves ${a.standing.description}`);
  else if (a.standing?.offered === false) lines.push(`always:    ${a.standing.reason}`);
  const p = ev.preview;
  if (p?.kind === 'diff') {
    lines.push(
      c.bold(
        `diff of ${p.path ?? '(file)'}${p.file_sha256 ? ` (sha256 ${p.file_sha256.slice(0, 12)}…)` : p.file_sha256 === null ? ' (new file)' : ''}:`,
      ),
    );
    for (const l of p.text.split('\n')) lines.push(l.startsWith('+') ? c.green(l) : l.startsWith('-') ? c.red(l) : l);
  } else if (p?.kind === 'command' && p.text.startsWith('$ ')) {
    // the firewall's preview already reads `$ <command>`, `cwd: …`, `runs:` and the risk
    lines.push(c.bold('command:'), ...p.text.split('\n').map((l) => `  ${l}`));
  } else if (p?.kind === 'command') {
    lines.push(c.bold('command:'), `  $ ${p.text}`);
    if (p.cwd) lines.push(`  cwd: ${p.cwd}`);
  } else if (p) {
    lines.push(c.bold('args:'), ...p.text.split('\n').map((l) => `  ${l}`));
  } else {
    lines.push(
      c.bold('args:'),
      ...JSON.stringify(a.args, null, 2)
        .split('\n')
        .map((l) => `  ${l}`),
    );
  }
  return lines;
}

/** One line telling what an answer did. */
export function describeAnswer(r: AnswerResultView): string {
  const by = answeredBySuffix(r.answered_by);
  if (r.decision === 'abort')
    return `aborted the session of ${r.id} (${r.abort ?? 'stopping'})${by}: its pending approvals were rejected`;
  if (!r.approved) return `rejected ${r.id} (${r.tool_id})${by}${r.reason ? `: ${r.reason}` : ''}`;
  const sa = r.standing_approval;
  const standing = sa
    ? `and from now on: ${sa.description ?? sa.tool_id} (${sa.scope}, standing approval ${sa.id})`
    : r.session_approval
      ? 'and for the rest of this session'
      : '';
  const how = [r.edited ? 'with edited args' : '', standing].filter(Boolean).join(' ');
  return `approved ${r.id} (${r.tool_id})${how ? ` ${how}` : ''}${by}${r.reason && !r.session_approval ? ` — ${r.reason}` : ''}`;
}

/** Reads one answer line from the person. */
export interface Prompter {
  question(q: string): Promise<string>;
}

/** What {@link reviewApproval} needs. `editArgs` resolves undefined when the edit was cancelled. */
export interface ReviewDeps {
  client: Pick<DaemonClient, 'post'>;
  out: Output;
  prompter: Prompter;
  editArgs(args: unknown): Promise<unknown>;
}

const KEYS =
  "[a]pprove  [r]eject  [R]eject, not the agent's fault  [A]lways (this shape, this session)  [W] always in this workspace  [e]dit args  [x] abort session  [s]kip";

/**
 * Shows one approval and asks until it is answered or skipped. Resolves `answered`, `skipped`,
 * or `gone` (answered elsewhere meanwhile). Edited args the firewall refuses as invalid are
 * reported and asked again.
 */
export async function reviewApproval(deps: ReviewDeps, a: ApprovalView): Promise<'answered' | 'skipped' | 'gone'> {
  const { out, prompter } = deps;
  for (const l of formatApproval(a, out.c)) out.line(l);
  for (;;) {
    const key = (await prompter.question(`${KEYS} > `)).trim();
    let body: Record<string, unknown>;
    switch (key) {
      case 'a':
        body = { decision: 'approve' };
        break;
      case 'A':
        body = { decision: 'always' };
        break;
      case 'W':
        body = { decision: 'always', scope: 'workspace' };
        break;
      case 'r':
      case 'R': {
        const reason = (await prompter.question('reason (sent back to the agent; empty for none): ')).trim();
        body = reason ? { decision: 'reject', reason } : { decision: 'reject' };
        // not the agent's fault: it does not count toward the agent's denial breaker
        if (key === 'R') body.agent_fault = false;
        break;
      }
      case 'e': {
        const args = await deps.editArgs(a.args);
        if (args === undefined) {
          out.line('edit cancelled');
          continue;
        }
        body = { decision: 'approve', args };
        break;
      }
      case 'x':
        body = { decision: 'abort' };
        break;
      case 's':
      case '':
        out.line(`skipped ${a.id}`);
        return 'skipped';
      default:
        out.line(`unknown key ${JSON.stringify(key)}`);
        continue;
    }
    try {
      const { body: r } = await deps.client.post<AnswerResultView>(`/v1/approvals/${seg(a.id)}`, body);
      out.line(describeAnswer(r));
      return 'answered';
    } catch (e) {
      if (e instanceof ApiError && (e.code === 'E_CONFLICT' || e.code === 'E_NOT_FOUND')) {
        out.line(`${a.id} is no longer pending (${e.message})`);
        return 'gone';
      }
      if (e instanceof ApiError && e.code === 'E_INVALID_ARGS') {
        out.line(out.c.red(`the edited args were refused: ${e.message}`));
        continue;
      }
      throw e;
    }
  }
}

/**
 * Edits `args` as JSON: in `$VISUAL`/`$EDITOR` on a temp file when one is set, else as one line
 * read with `prompter`. Resolves undefined when cancelled, the editor failed or the JSON is bad.
 */
export async function editArgs(env: Env, args: unknown, prompter: Prompter, out: Output): Promise<unknown> {
  const editor = env.VISUAL || env.EDITOR;
  let text: string;
  if (editor) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'myfinger-args-'));
    const file = path.join(dir, 'args.json');
    try {
      await writeFile(file, `${JSON.stringify(args, null, 2)}\n`, { mode: 0o600 });
      const r = spawnSync(`${editor} ${JSON.stringify(file)}`, { shell: true, stdio: 'inherit' });
      if (r.status !== 0) {
        out.line(`the editor exited with ${r.status ?? r.signal}`);
        return undefined;
      }
      text = await readFile(file, 'utf8');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  } else {
    text = await prompter.question('new args as JSON on one line (empty to cancel): ');
  }
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    out.line(out.c.red(`not JSON: ${(e as Error).message}`));
    return undefined;
  }
}

/** A prompter on the terminal: a fresh readline per question, so an editor can take the TTY in between. */
function terminalPrompter(signal: AbortSignal): Prompter {
  return {
    async question(q) {
      const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
      try {
        return await rl.question(q, { signal });
      } finally {
        rl.close();
      }
    },
  };
}

/**
 * `approvals --watch`: lists what is pending, then follows APPROVAL_REQUESTED/RESOLVED on
 * `/v1/events`. Interactive (a TTY on both ends, no --json): asks about each approval in turn.
 * Otherwise prints each new approval (JSON lines with --json) and each resolution. A call held on
 * another daemon of the cluster (an event with `origin`) is only named, with that node: it is
 * answered there. Ends on interrupt (0) or when the daemon goes away (3).
 */
async function watch(ctx: CommandContext, interactive: boolean): Promise<number> {
  const client = await ctx.client();
  const out = ctx.out;
  const signal = ctx.interrupt();
  const prompter = terminalPrompter(signal);
  const seen = new Set<string>();
  const gone = new Set<string>();
  const queue: ApprovalView[] = [];
  let busy = false;
  let ctl: StreamControl | undefined;

  const pump = async (): Promise<void> => {
    if (busy) return;
    busy = true;
    try {
      while (queue.length && !ctl?.done) {
        const a = queue.shift()!;
        if (gone.has(a.id)) continue;
        const deps: ReviewDeps = {
          client,
          out,
          prompter,
          editArgs: (args) => editArgs(ctx.io.env, args, prompter, out),
        };
        await reviewApproval(deps, a);
        out.line();
      }
    } catch (e) {
      if (!signal.aborted) ctl?.fail(e);
    } finally {
      busy = false;
    }
  };
  const onApproval = (a: ApprovalView): void => {
    if (seen.has(a.id) || gone.has(a.id)) return;
    seen.add(a.id);
    if (interactive) {
      queue.push(a);
      void pump();
    } else if (out.json) out.printJsonLine({ event: 'APPROVAL_REQUESTED', approval: a });
    else {
      for (const l of formatApproval(a, out.c)) out.line(l);
      out.line();
    }
  };
  /**
   * A call held on another daemon of the cluster (its event names that node in `origin`): it can
   * be answered only there, so it is shown as such and never asked about here.
   */
  const onHeldElsewhere = (a: ApprovalView, node: string): void => {
    if (out.json) out.printJsonLine({ event: 'APPROVAL_REQUESTED', origin: node, approval: a });
    else out.line(`approval ${a.id} (${a.level} ${a.tool_id}) is held on ${node}: answer it on that daemon`);
  };
  const onResolved = (e: FingerEvent): void => {
    const d = e.data as {
      id?: string | null;
      decision?: string;
      approved?: boolean;
      reason?: string;
      answered_by?: AnsweredByView;
    };
    if (typeof d.id === 'string') gone.add(d.id);
    if (interactive) return;
    const on = e.origin !== undefined ? ` on ${e.origin}` : '';
    if (out.json)
      out.printJsonLine({ event: 'APPROVAL_RESOLVED', ...(e.origin !== undefined ? { origin: e.origin } : {}), ...d });
    else if (typeof d.id === 'string')
      out.line(
        `resolved ${d.id}${on}: ${d.decision}${answeredBySuffix(d.answered_by)}${d.reason ? ` (${d.reason})` : ''}`,
      );
  };

  return streamEvents(ctx, client, signal, {
    subscribe: { op: 'subscribe', types: ['APPROVAL_REQUESTED', 'APPROVAL_RESOLVED'] },
    onMessage(msg, control) {
      ctl = control;
      switch (msg.type) {
        case 'subscribed':
          if (!out.json) out.errLine(out.ce.dim('watching for approvals — Ctrl-C to stop'));
          client
            .get<{ approvals: ApprovalView[] }>('/v1/approvals')
            .then(({ approvals }) => [...approvals].reverse().forEach(onApproval), control.fail);
          break;
        case 'event':
          if (msg.event.type === 'APPROVAL_REQUESTED') {
            const a = (msg.event.data as { approval?: ApprovalView }).approval;
            if (a && msg.event.origin !== undefined) onHeldElsewhere(a, msg.event.origin);
            else if (a) onApproval(a);
          } else if (msg.event.type === 'APPROVAL_RESOLVED') onResolved(msg.event);
          break;
        case 'dropped':
          out.warn(`${msg.count} event(s) dropped: run \`myfinger approvals\` to see what is pending`);
          break;
        default:
          break;
      }
    },
  });
}

function parseArgsOption(text: string): unknown {
  return parseJsonOption('--args', text);
}

function parseJsonOption(name: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new CliError('E_USAGE', `${name} is not JSON: ${(e as Error).message}`);
  }
}

/** `approvals standing [list|show <id>|revoke <id>]`: what `always` left behind. */
function registerStanding(approvals: Command, state: RunState): void {
  const standing = approvals
    .command('standing')
    .description('standing approvals (what `always` left behind): list, show, revoke');
  const list = action(state, async (ctx) => {
    const client = await ctx.client();
    const res = await client.get<{ standing_approvals: StandingApprovalView[] }>('/v1/standing-approvals');
    if (ctx.out.json) ctx.out.printJson(res);
    else if (!res.standing_approvals.length) ctx.out.line('no standing approvals');
    else ctx.out.table(['ID', 'SCOPE', 'CALLER', 'SHAPE', 'EXPIRES'], standingRows(res.standing_approvals));
    return EXIT.OK;
  });
  standing.action(list);
  standing.command('list').description('list the standing approvals in force').action(list);
  standing
    .command('show')
    .description('show one standing approval')
    .argument('<id>', 'standing approval id')
    .action(
      action(state, async (ctx, [id = '']) => {
        const client = await ctx.client();
        const body = await client.get<StandingApprovalView>(`/v1/standing-approvals/${seg(id)}`);
        if (ctx.out.json) ctx.out.printJson(body);
        else for (const l of formatStanding(body)) ctx.out.line(l);
        return EXIT.OK;
      }),
    );
  standing
    .command('revoke')
    .description('revoke a standing approval: the next call of its shape is held again')
    .argument('<id>', 'standing approval id')
    .action(
      action(state, async (ctx, [id = '']) => {
        const client = await ctx.client();
        const body = await client.delete<{ revoked: StandingApprovalView }>(`/v1/standing-approvals/${seg(id)}`);
        if (ctx.out.json) ctx.out.printJson(body);
        else ctx.out.line(`revoked ${body.revoked.id}: ${body.revoked.description ?? body.revoked.tool_id}`);
        return EXIT.OK;
      }),
    );
}

/** Prints an answer; exit 8 when an approval did not go through (the edited args were denied). */
function printAnswer(ctx: CommandContext, r: AnswerResultView): number {
  if (ctx.out.json) ctx.out.printJson(r);
  else ctx.out.line(describeAnswer(r));
  return r.approved || (r.decision !== 'approve' && r.decision !== 'always') ? EXIT.OK : EXIT.DENIED;
}

/** `approvals [--watch] [--full]`, `approve <id> [--always] [--args '{…}']`, `reject <id> [--reason …]`. */
export function registerApprovals(program: Command, state: RunState): void {
  const approvals = program
    .command('approvals')
    .description('list calls held for a person; --watch answers them interactively as they come')
    .option('--watch', 'follow new approvals (interactive on a terminal: approve, reject, always, edit, skip)')
    .option('--full', 'print every approval with its full preview instead of a table')
    .action(
      action<{ watch?: boolean; full?: boolean }>(state, async (ctx, _args, opts) => {
        if (opts.watch) {
          const interactive = !ctx.out.json && ctx.io.stdout.isTTY === true && process.stdin.isTTY === true;
          return watch(ctx, interactive);
        }
        const client = await ctx.client();
        const res = await client.get<{ approvals: ApprovalView[] }>('/v1/approvals');
        if (ctx.out.json) ctx.out.printJson(res);
        else if (!res.approvals.length) ctx.out.line('no pending approvals');
        else if (opts.full) {
          for (const a of res.approvals) {
            for (const l of formatApproval(a, ctx.out.c)) ctx.out.line(l);
            ctx.out.line();
          }
        } else ctx.out.table(['ID', 'LEVEL', 'TOOL', 'PRINCIPAL', 'SESSION', 'EXPIRES'], approvalRows(res.approvals));
        return EXIT.OK;
      }),
    );
  registerStanding(approvals, state);

  program
    .command('approve')
    .description('approve a held call (see: myfinger approvals)')
    .argument('<id>', 'approval id')
    .option('--always', "also approve the call's shape from now on (the approval's proposed shape; see --shape)")
    .option('--scope <scope>', 'with --always: session (default), workspace or persistent')
    .option('--expires <time>', 'with --always: RFC 3339 end (persistent: default 30 days)')
    .option('--shape <json>', 'with --always: a narrower shape than the proposed one')
    .option('--args <json>', 'run with these edited arguments instead (re-checked by the firewall)')
    .action(
      action<{ always?: boolean; args?: string; scope?: string; expires?: string; shape?: string }>(
        state,
        async (ctx, [id = ''], opts) => {
          const body: Record<string, unknown> = { decision: opts.always ? 'always' : 'approve' };
          if ((opts.scope ?? opts.expires ?? opts.shape) !== undefined && !opts.always)
            throw new CliError('E_USAGE', '--scope, --expires and --shape go with --always');
          if (opts.scope !== undefined) body.scope = opts.scope;
          if (opts.expires !== undefined) body.expires_at = opts.expires;
          if (opts.shape !== undefined) body.shape = parseJsonOption('--shape', opts.shape);
          if (opts.args !== undefined) body.args = parseArgsOption(opts.args);
          const client = await ctx.client();
          const { body: r } = await client.post<AnswerResultView>(`/v1/approvals/${seg(id)}`, body);
          return printAnswer(ctx, r);
        },
      ),
    );

  program
    .command('reject')
    .description('reject a held call; the reason goes back to the agent')
    .argument('<id>', 'approval id')
    .option('--reason <text>', 'why (shown to the agent)')
    .option('--not-agent-fault', "not the agent's fault: does not count toward its denial breaker")
    .action(
      action<{ reason?: string; notAgentFault?: boolean }>(state, async (ctx, [id = ''], opts) => {
        const body: Record<string, unknown> = { decision: 'reject' };
        if (opts.reason !== undefined) body.reason = opts.reason;
        if (opts.notAgentFault) body.agent_fault = false;
        const client = await ctx.client();
        const { body: r } = await client.post<AnswerResultView>(`/v1/approvals/${seg(id)}`, body);
        return printAnswer(ctx, r);
      }),
    );
}
