// Answering one held call at the terminal: the keys of `approvals --watch` and `myfinger run`'s
// prompt, editing the arguments in $EDITOR, and the terminal prompter both use.

import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline/promises';

import { type AnswerResultView, type ApprovalView, describeAnswer, formatApproval } from '../approval-views.js';
import { type DaemonClient, type Env, seg } from '../client.js';
import { ApiError } from '../errors.js';
import type { Output } from '../output.js';

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
export function terminalPrompter(signal: AbortSignal): Prompter {
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
