// Held calls as the daemon sends them (`GET /v1/approvals`, the answer of `POST /v1/approvals/:id`,
// `GET /v1/standing-approvals`) and how the CLI and the console show them: rows, the full detail a
// person decides on, one line per answer.

import type { Colors } from './output.js';

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
