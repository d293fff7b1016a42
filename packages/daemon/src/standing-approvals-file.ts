// Persistent standing approvals survive a restart: FINGER_HOME/state/standing-approvals.json
// (mode 0600, written atomically on every change of a persistent one). Session- and
// workspace-scoped ones live in memory (and Redis) only: a restart asks again.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { writeFileAtomicSync } from '@finger/agents';
import type { StandingApproval, StandingApprovals } from '@finger/firewall';
import { FingerError } from '@finger/protocol';

/** The state file of persistent standing approvals. */
export function standingApprovalsPath(home: string): string {
  return join(home, 'state', 'standing-approvals.json');
}

/**
 * Loads the persistent standing approvals of `file` into `store` (expired ones dropped) and keeps
 * the file in step with every later change of a persistent one (chaining any `onChange` already
 * set). A damaged file refuses the start (E_STORE_UNAVAILABLE): finger never guesses what a
 * person approved. Returns a function that stops following.
 */
export function persistStandingApprovals(
  store: StandingApprovals,
  file: string,
  o: { now(): number; warn(obj: object, msg: string): void },
): () => void {
  let text: string | undefined;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (text !== undefined) {
    let list: StandingApproval[];
    try {
      const doc = JSON.parse(text) as { version?: number; approvals?: StandingApproval[] };
      if (doc.version !== 1 || !Array.isArray(doc.approvals)) throw new Error('not a version 1 document');
      list = doc.approvals;
    } catch (e) {
      throw new FingerError('E_STORE_UNAVAILABLE', `${file} is damaged: ${(e as Error).message}`, { file });
    }
    for (const a of list) store.restore(a.id, a);
    store.sweep(o.now());
  }
  const save = (): void => {
    const approvals = store.list({ now: o.now() }).filter((a) => a.scope === 'persistent');
    try {
      writeFileAtomicSync(file, `${JSON.stringify({ version: 1, approvals }, null, 2)}\n`);
    } catch (e) {
      o.warn({ err: e, file }, 'persistent standing approvals could not be written');
    }
  };
  const before = store.onChange;
  let on = true;
  store.onChange = (id, a) => {
    before?.(id, a);
    if (on && (a === undefined || a.scope === 'persistent')) save();
  };
  return () => {
    on = false;
  };
}
