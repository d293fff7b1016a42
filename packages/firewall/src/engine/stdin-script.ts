// A shell tool's `stdin` and `env` arguments change what the command runs outside its text: a
// shell (or `python3 -`) given no script reads its program from stdin (`{command: "sh", stdin:
// "rm -rf /"}`), and variables like GIT_PAGER or LD_PRELOAD make harmless programs run others.
// Both are judged here as the command line they amount to, and the more severe verdict is kept.

import type { RiskAssessment } from '@finger/shell-risk';
import { readsScriptFromStdin } from '@finger/shell-risk';

const RANK = { safe: 0, moderate: 1, dangerous: 2 } as const;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function quote(v: string): string {
  return `'${v.replace(/'/g, `'\\''`)}'`;
}

/** Whether a segment of `a` takes the call's stdin as its program (first in its pipeline, no `<` of its own). */
function readsCallStdin(a: RiskAssessment): boolean {
  return a.model.segments.some(
    (s) =>
      (s.pipeline === null || s.pipeline.index === 0) &&
      !s.redirects.some((r) => r.op === '<' || r.op === '<<' || r.op === '<<-' || r.op === '<<<' || r.op === '<>') &&
      readsScriptFromStdin(s),
  );
}

/** `a` with `b`'s findings added (prefixed `label: `) and the more severe level. */
function merged(a: RiskAssessment, b: RiskAssessment, label: string): RiskAssessment {
  const out: RiskAssessment = {
    level: RANK[b.level] > RANK[a.level] ? b.level : a.level,
    reasons: [...a.reasons, ...b.reasons.map((r) => `${label}: ${r}`)],
    model: { ...a.model, segments: [...a.model.segments, ...b.model.segments] },
  };
  if (a.unparseable === true || b.unparseable === true) out.unparseable = true;
  if (a.on_disk === true || b.on_disk === true) out.on_disk = true;
  const forbidden = [...(a.forbidden ?? []), ...(b.forbidden ?? []).map((r) => `${label}: ${r}`)];
  if (forbidden.length > 0) out.forbidden = forbidden;
  const reads = [...new Set([...(a.reads ?? []), ...(b.reads ?? [])])];
  if (reads.length > 0) out.reads = reads;
  return out;
}

/**
 * `assessment` of a shell tool call's command, with its `env` judged as `export K='v'…` and its
 * `stdin` judged as a script when the command reads its program from stdin. `assess` judges a
 * command line in the call's context. The assessment itself when the call has neither.
 */
export function withStdinAndEnv(
  assessment: RiskAssessment,
  args: unknown,
  assess: (command: string) => RiskAssessment,
): RiskAssessment {
  if (typeof args !== 'object' || args === null) return assessment;
  const a = args as { env?: unknown; stdin?: unknown };
  let out = assessment;
  if (typeof a.env === 'object' && a.env !== null) {
    const pairs = Object.entries(a.env as Record<string, unknown>).filter(
      (e): e is [string, string] => NAME.test(e[0]) && typeof e[1] === 'string',
    );
    if (pairs.length > 0)
      out = merged(out, assess(`export ${pairs.map(([k, v]) => `${k}=${quote(v)}`).join(' ')}`), 'env');
  }
  if (typeof a.stdin === 'string' && a.stdin.trim() !== '' && readsCallStdin(assessment))
    out = merged(out, assess(a.stdin), 'stdin');
  return out;
}
