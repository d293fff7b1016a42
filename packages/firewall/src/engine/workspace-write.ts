// Whether a `moderate` shell command may run unseen in the workspace-write sandbox (§3.8, the
// engine's `workspace_sandbox` option): the facts the permission layer turns into NOTIFY instead
// of CONFIRM, or the holds that say why not. Kept apart from the FirewallEngine's layers because
// it is one question with its own rules — confinement, network needs, credentials, writes outside
// the workspace, and the undo snapshot a deleting command needs.

import type { Confinement, RiskAssessment } from '@finger/shell-risk';
import { networkNeeds } from '@finger/shell-risk';
import { planLinkSnapshot } from '@finger/workspace';

import type { EffectivePolicy, WorkspaceSandboxFacts } from '../policy/evaluate-policy.js';
import type { PathSandbox } from '../sandbox/path-sandbox.js';
import type { ToolCallFacts } from './evaluation.js';

/** What the judge needs of the engine. */
export interface WorkspaceWriteOptions {
  /** The assessor's confinement of an assessment (judged with its own homes). */
  confinement(assessment: RiskAssessment): Confinement;
  sandbox: PathSandbox;
  /** The profile lets the package registries through its filtering proxy. */
  registries: boolean;
  /** The undo store a deleting command's hard-link snapshot goes to; absent: such deletes are held. */
  undo: { store: string; max_entries?: number } | undefined;
}

/** Judges eligibility for the workspace-write sandbox. */
export class WorkspaceWriteJudge {
  readonly #o: WorkspaceWriteOptions;

  constructor(options: WorkspaceWriteOptions) {
    this.#o = options;
  }

  /** The workspace-write facts of a `moderate` shell command: eligible (perhaps with an undo snapshot), or its holds. */
  judge(
    assessment: RiskAssessment,
    cwd: string | null | undefined,
    policy: EffectivePolicy,
    principal: ToolCallFacts['principal'],
  ): WorkspaceSandboxFacts {
    return this.#undoable(this.#workspaceSandbox(assessment, cwd, policy, principal), assessment, cwd, principal);
  }

  /**
   * Whether a `moderate` shell command may run in the workspace-write sandbox at NOTIFY, and if
   * not why: it must start in a workspace root, reach nothing of finger's, need no network, name
   * no credential, and write only words that resolve inside the caller's workspace roots (real
   * paths) and writable_paths. Reads outside the read roots are the PathSandbox's own holds.
   */
  #workspaceSandbox(
    assessment: RiskAssessment,
    cwd: string | null | undefined,
    policy: EffectivePolicy,
    principal: ToolCallFacts['principal'],
  ): WorkspaceSandboxFacts {
    const holds: { id: string; reason: string }[] = [];
    if (assessment.unparseable === true || (assessment.forbidden?.length ?? 0) > 0) return { eligible: false, holds };
    if (typeof cwd !== 'string') return { eligible: false, holds };
    const c = this.#o.confinement(assessment);
    // with the registry proxy on, installs from the lock file or manifest are no hold: they get the proxy
    const net = this.#o.registries ? networkNeeds(assessment.model, true) : { held: c.needs, registries: false };
    for (const need of net.held) holds.push({ id: 'sandbox.needs_network', reason: need });
    if (c.credential !== undefined)
      holds.push({
        id: 'sandbox.credential',
        reason: `names the credential ${JSON.stringify(c.credential)}: not run unseen, sandbox or not`,
      });
    if (c.unknown !== undefined)
      holds.push({ id: 'sandbox.unknown_write', reason: `not confined to the workspace: ${c.unknown}` });
    for (const gone of c.destroys)
      holds.push({ id: 'sandbox.not_undoable', reason: `${gone}, so not run unseen, sandbox or not` });
    const outside = this.#o.sandbox.writesOutside(c.writes, cwd, policy, principal);
    if (outside.length > 0)
      holds.push({ id: 'sandbox.outside_workspace', reason: `writes outside the workspace: ${outside.join(', ')}` });
    if (holds.length > 0) return { eligible: false, holds };
    return net.registries ? { eligible: true, network: 'registries' } : { eligible: true };
  }

  /**
   * An eligible call that deletes trees (confinement's `undoable`) stays eligible only when their
   * hard-link snapshot can be planned (link-snapshot.ts of @finger/workspace: inside the workspace, on
   * the undo store's file system, within the bounds); it then carries the paths as `undo_snapshot`.
   * Otherwise it is held, `sandbox.not_undoable`, saying why.
   */
  #undoable(
    ws: WorkspaceSandboxFacts,
    assessment: RiskAssessment,
    cwd: string | null | undefined,
    principal: ToolCallFacts['principal'],
  ): WorkspaceSandboxFacts {
    const deletes = this.#o.confinement(assessment).undoable;
    if (deletes.length === 0) return ws;
    const hold = (why: string): WorkspaceSandboxFacts => ({
      eligible: false,
      holds: [
        ...(ws.eligible ? [] : ws.holds),
        ...deletes.map((d) => ({
          id: 'sandbox.not_undoable',
          reason: `${d.gone}: not undoable (${why}), so not run unseen, sandbox or not`,
        })),
      ],
    });
    const undo = this.#o.undo;
    if (undo === undefined) return hold('no undo store for its snapshot');
    if (!ws.eligible || typeof cwd !== 'string') return ws;
    const sandbox = this.#o.sandbox;
    const own = sandbox.workspaceOf(principal);
    const roots = own === undefined ? sandbox.defaultRoots : [own, ...sandbox.defaultRoots];
    const plan = planLinkSnapshot(
      deletes.flatMap((d) => d.words),
      cwd,
      roots,
      undo,
    );
    if ('reason' in plan) return hold(plan.reason);
    return plan.paths.length > 0 ? { ...ws, undo_snapshot: Object.freeze(plan.paths) } : ws;
  }
}
