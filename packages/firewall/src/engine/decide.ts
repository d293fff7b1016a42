// The firewall's one decision: a call's facts and the static layers' verdict, plus what the
// stateful layers (behaviour, metacognitive) found in their memory, combined into the Evaluation —
// the strictest contribution decides. Pure: no clock, no I/O, no memory of its own; the decision id
// comes in. The engine adds the preview (it reads files) and the verdict cache sits in front of
// the static layers as a decorator (verdict-cache.ts, cached-verdicts.ts): whichever path a call
// takes, this function is what decides it.

import type { SandboxVerdict } from '../sandbox/path-sandbox.js';
import type { LayerFinding } from './behaviour-monitor.js';
import { EngineEvaluation } from './engine-evaluation.js';
import type { Layer, Level, MatchedRule, ToolCallFacts } from './evaluation.js';
import { actionOf, LEVEL_ORDER } from './evaluation.js';
import type { StaticVerdict } from './verdict-cache.js';

/** What the memoryless layers (1, 3 and 4) concluded about one call. */
export interface CallVerdictFacts {
  readonly facts: ToolCallFacts;
  /** The arguments after the argument filter: what would run. */
  readonly args: unknown;
  /** Layers 3 (permission, with the command's assessment) — the part the verdict cache keeps. */
  readonly st: StaticVerdict;
  /** Layer 4, when it ran for this call (a cached verdict had nothing for it to find). */
  readonly sb: SandboxVerdict | undefined;
  readonly warnings: string[] | undefined;
  /** A human's direct dispatch: CONFIRM and APPROVE are waived (audited), DENY stays. */
  readonly direct: boolean;
}

/** What the stateful layers found in their memory for this call. */
export interface CallMemory {
  readonly found: readonly LayerFinding[];
  readonly meta: LayerFinding | null;
}

const RANK: Readonly<Record<Level, number>> = Object.freeze(
  Object.fromEntries(LEVEL_ORDER.map((l, i) => [l, i])) as Record<Level, number>,
);

/** The rank of a reason line's level (`"CONFIRM: …"`), -1 when it names none. */
function reasonRank(line: string): number {
  const colon = line.indexOf(':');
  const r = colon > 0 ? RANK[line.slice(0, colon) as Level] : undefined;
  return r ?? -1;
}

/** Stricter reasons first. */
function byLevelDesc(a: string, b: string): number {
  return reasonRank(b) - reasonRank(a);
}

/**
 * The Evaluation of one call (without its preview, which needs the file system): behaviour
 * findings, the permission verdict, the path sandbox and the metacognitive finding each
 * contribute a level; the strictest decides `level` and `layer`, ties going to the first layer
 * that is not `default`. A direct human dispatch turns CONFIRM and APPROVE into AUTO (`waived`).
 */
export function decide(call: CallVerdictFacts, memory: CallMemory, decision_id: string): EngineEvaluation {
  let level: Level = 'AUTO';
  let layer: Layer = 'default';
  let best = -1;
  const matched: MatchedRule[] = [];
  const reasons: string[] = [];
  const contribute = (l: Level, from: Layer): void => {
    const r = RANK[l];
    if (r > best || (r === best && layer === 'default' && from !== 'default')) {
      best = r;
      level = l;
      layer = from;
    }
  };
  for (const b of memory.found) {
    contribute(b.level, 'behaviour');
    matched.push({ source: 'builtin', id: b.id, level: b.level, reason: b.reason });
    reasons.push(`${b.level}: ${b.reason}`);
  }
  const perm = call.st.perm;
  contribute(perm.level, perm.layer);
  for (const m of perm.matched_rules) matched.push(m);
  for (const r of perm.reasons) reasons.push(r);
  const sb = call.sb;
  if (sb !== undefined && sb.matched_rules.length > 0) {
    contribute(sb.level, 'path_sandbox');
    for (const m of sb.matched_rules) matched.push(m);
    for (const r of sb.reasons) reasons.push(r);
  }
  const meta = memory.meta;
  if (meta !== null) {
    contribute(meta.level, 'metacognitive');
    matched.push({ source: 'builtin', id: meta.id, level: meta.level, reason: meta.reason });
    reasons.push(`${meta.level}: ${meta.reason}`);
  }

  const decided = level as Level;
  // the reason a person reads first is one that decided the level (stable: the layers' order stays within a level)
  if (reasons.length > 1 && !reasons[0]!.startsWith(`${decided}:`)) reasons.sort(byLevelDesc);
  const ev = new EngineEvaluation(decision_id, decided, actionOf(decided), layer, matched, reasons, call.args);
  if (call.direct && (decided === 'CONFIRM' || decided === 'APPROVE')) {
    ev.waived = decided;
    ev.level = 'AUTO';
    ev.action = 'allow';
    reasons.push(`AUTO: direct dispatch by human "${call.facts.principal.id}": ${decided} waived (audited)`);
  }
  if (call.warnings !== undefined) ev.warnings = call.warnings;
  if (perm.human_only) ev.human_only = true;
  if (perm.sandbox_profile !== undefined) ev.sandbox_profile = perm.sandbox_profile;
  if (perm.undo_snapshot !== undefined) ev.undo_snapshot = perm.undo_snapshot;
  if (perm.sandbox_network !== undefined) ev.sandbox_network = perm.sandbox_network;
  return ev;
}
