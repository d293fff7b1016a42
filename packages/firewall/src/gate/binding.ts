// Approvals bind to exactly what was shown (§3.8): the canonical digest of the arguments and,
// for writes, the hash of the file content the diff was made against.
//
// How the firewall interceptor uses it (engine/firewall-interceptor.ts, `approvalHolds`): after
// `gate.hold()` approves, and right before the tool runs, it recomputes the file hash of the
// target (for writes: the same way the preview did, `null` when the file does not exist) and calls
//   `bindingHolds(decision, argsAboutToRun, fileShaNow)` — the only binding check production runs.
// false → the arguments or the file changed after the person looked: hold the call again
// (a new approval with a fresh preview). Never run on a failed binding.

import { digestOf } from '../audit/canonical-json.js';
import type { Preview } from '../engine/evaluation.js';
import type { ApprovalBinding, GateDecision } from './gate-types.js';

/** Result of {@link verifyBinding}. */
export type BindingCheck = { ok: true } | { ok: false; field: 'args' | 'file_sha256'; reason: string };

const UNSERIALIZABLE = 'unserializable';

/** The digest an approval stores for `args` (canonical JSON, sha256); a non-JSON value gets a digest no args match. */
export function argsDigest(args: unknown): string {
  try {
    return digestOf(args === undefined ? null : args);
  } catch {
    return UNSERIALIZABLE;
  }
}

/** What an approval of `args` with `preview` covers. */
export function bindingOf(args: unknown, preview?: Preview): ApprovalBinding {
  const binding: ApprovalBinding = { args_digest: argsDigest(args) };
  if (preview && preview.file_sha256 !== undefined) binding.file_sha256 = preview.file_sha256;
  return binding;
}

/**
 * Checks that what is about to run is what was approved: the same arguments (by canonical
 * digest: key order does not matter, any value change does) and, when the approval bound a
 * file, the same file content hash. A bound file whose current hash is not given
 * (`currentFileSha === undefined`) fails: it was not rechecked.
 */
export function verifyBinding(
  approval: ApprovalBinding | { binding: ApprovalBinding },
  currentArgs: unknown,
  currentFileSha?: string | null,
): BindingCheck {
  const binding = 'binding' in approval ? approval.binding : approval;
  const digest = argsDigest(currentArgs);
  // arguments with no canonical form match nothing, not even other such arguments
  if (digest === UNSERIALIZABLE || digest !== binding.args_digest) {
    return { ok: false, field: 'args', reason: 'the arguments changed after they were approved' };
  }
  if (binding.file_sha256 !== undefined) {
    if (currentFileSha === undefined) {
      return { ok: false, field: 'file_sha256', reason: 'the approved file content was not rechecked before running' };
    }
    if (currentFileSha !== binding.file_sha256) {
      return {
        ok: false,
        field: 'file_sha256',
        reason:
          binding.file_sha256 === null
            ? 'the file was created after the approval'
            : currentFileSha === null
              ? 'the file was removed after the approval'
              : 'the file changed after its diff was approved',
      };
    }
  }
  return { ok: true };
}

/**
 * The interceptor's last check before execution: true only when `decision` approved and its
 * binding still holds for the arguments and file hash about to be used. Anything else → hold again.
 */
export function bindingHolds(
  decision: Pick<GateDecision, 'approved' | 'binding'> & Partial<GateDecision>,
  currentArgs: unknown,
  currentFileSha?: string | null,
): boolean {
  if (!decision.approved || decision.binding === undefined) return false;
  return verifyBinding(decision.binding, currentArgs, currentFileSha).ok;
}
