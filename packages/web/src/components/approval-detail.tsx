// One held call in full (agent, tool, preview, level, reasons, every matched rule, task and step,
// waiting time and deadline) and, for operators and admins, its answers: approve, reject with a
// reason, approve edited arguments after seeing their new verdict, and the scoped standing answer.

import { useEffect, useRef, useState } from 'preact/hooks';

import { api, errorText } from '../api.ts';
import { canAnswer, useApp, useConsole, useNow } from '../context.ts';
import { clock, duration, json, taskOf } from '../format.ts';
import type { Evaluation, PendingApproval } from '../types.ts';
import { CodeView } from './code-view.tsx';
import { Confirm } from './confirm.tsx';

/** A key press to act on: `n` counts presses, `id` is the call selected when it was pressed. */
export interface KeyCommand {
  kind: 'approve' | 'reject';
  n: number;
  id: string;
}

export interface DetailProps {
  approval: PendingApproval;
  /** Bumped by the keyboard (a / r) to start an answer. */
  command: KeyCommand | undefined;
}

export function ApprovalDetail({ approval: a, command }: DetailProps) {
  const { session, notify } = useApp();
  const { tasks } = useConsole();
  const now = useNow();
  const answerer = canAnswer(session);
  const [confirming, setConfirming] = useState<{ args?: unknown } | undefined>();
  const [reason, setReason] = useState('');
  const [argsText, setArgsText] = useState(() => json(a.args));
  const [checked, setChecked] = useState<Evaluation | undefined>();
  const [shapeText, setShapeText] = useState(() => (a.standing.offered ? json(a.standing.shape) : ''));
  const [scope, setScope] = useState('session');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState('');

  useEffect(() => {
    setReason('');
    setArgsText(json(a.args));
    setChecked(undefined);
    setShapeText(a.standing.offered ? json(a.standing.shape) : '');
    setError('');
    setConfirming(undefined);
  }, [a.id]);

  // a key press acts once, on the call it was pressed for: never again when this view mounts anew
  const handled = useRef(command?.n);
  useEffect(() => {
    if (!command || command.n === handled.current || command.id !== a.id || !answerer) return;
    handled.current = command.n;
    if (command.kind === 'approve') approve();
    else document.getElementById('reject-reason')?.focus();
  }, [command?.n]);

  const send = async (body: Record<string, unknown>, done: string) => {
    setBusy(true);
    setError('');
    try {
      await api('POST', `/v1/approvals/${encodeURIComponent(a.id)}`, body);
      notify(done);
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
      setConfirming(undefined);
    }
  };
  const approve = (args?: unknown) => {
    // edited arguments ask first when their own verdict is APPROVE, even on a CONFIRM hold
    if (a.level === 'APPROVE' || (args !== undefined && checked?.level === 'APPROVE')) setConfirming({ args });
    else
      void send(args === undefined ? { decision: 'approve' } : { decision: 'approve', args }, `Approved ${a.tool_id}`);
  };
  const parsedArgs = (): unknown => {
    try {
      return JSON.parse(argsText);
    } catch (e) {
      setError(`the arguments are not JSON: ${(e as Error).message}`);
      return undefined;
    }
  };
  const check = async () => {
    const args = parsedArgs();
    if (args === undefined) return;
    setError('');
    try {
      const ev = await api<Evaluation>('POST', '/v1/policy/check', {
        tool: a.tool_id,
        args,
        principal_kind: a.facts.principal.kind,
      });
      setChecked(ev);
    } catch (e) {
      setError(errorText(e));
    }
  };
  const always = () => {
    let shape: unknown;
    if (a.standing.offered) {
      try {
        shape = JSON.parse(shapeText);
      } catch (e) {
        setError(`the shape is not JSON: ${(e as Error).message}`);
        return;
      }
    }
    void send({ decision: 'always', ...(shape !== undefined ? { shape, scope } : {}) }, `Always allowed ${a.tool_id}`);
  };

  const ev = a.evaluation;
  const task = taskOf(a.facts.principal.id);
  const taskInfo = task !== undefined ? tasks.find((t) => t.id === task) : undefined;
  const waited = now - Date.parse(a.created_at);
  const left = Date.parse(a.expires_at) - now;
  const preview = ev.preview ?? { kind: 'args' as const, text: json(a.args) };
  return (
    <article class="detail" aria-label={`Held call ${a.tool_id}`}>
      <h2>
        <span class={`badge lv-${a.level}`}>{a.level}</span> {a.tool_id}
      </h2>
      <dl class="facts">
        <dt>Agent</dt>
        <dd>
          {a.facts.principal.kind}:{a.facts.principal.id}
        </dd>
        {task !== undefined && (
          <>
            <dt>Task</dt>
            <dd>
              {task}
              {taskInfo?.step !== undefined ? ` — step ${taskInfo.step}` : ''}
              {taskInfo?.text ? ` — ${taskInfo.text}` : ''}
            </dd>
          </>
        )}
        <dt>Session</dt>
        <dd>{a.facts.session_id || '—'}</dd>
        <dt>Waiting</dt>
        <dd>{duration(waited)}</dd>
        <dt>Deadline</dt>
        <dd>
          {clock(a.expires_at)} ({left > 0 ? `${duration(left)} left` : 'expired'})
        </dd>
        <dt>Status</dt>
        <dd>{a.status}</dd>
      </dl>
      <p class="reason">
        <strong>Why held:</strong> {ev.reasons[0] ?? a.level}
      </p>
      <CodeView preview={preview} label={preview.kind === 'diff' ? 'Unified diff' : 'Command'} />
      <h3>Matched rules</h3>
      <ul class="rules" aria-label="Matched rules">
        {ev.matched_rules.map((r) => (
          <li key={`${r.source}:${r.id}`}>
            <span class={`badge lv-${r.level}`}>{r.level}</span> <code>{`${r.source}:${r.id}`}</code> {r.reason}
          </li>
        ))}
      </ul>
      {ev.reasons.length > 1 && (
        <details>
          <summary>All reasons ({ev.reasons.length})</summary>
          <ul>
            {ev.reasons.map((r, i) => (
              <li key={i}>{r}</li>
            ))}
          </ul>
        </details>
      )}
      <p class="risk">{a.risk}</p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {answerer && (
        <section class="answers" aria-label="Answer">
          <div class="row">
            <button type="button" class="approve" disabled={busy} onClick={() => approve()}>
              Approve
            </button>
            <input
              id="reject-reason"
              aria-label="Reason for rejecting"
              placeholder="Reason (sent to the agent)"
              value={reason}
              onInput={(e) => setReason(e.currentTarget.value)}
              onKeyDown={(e) => {
                // the field's own value: state set by the last keystroke may not be rendered yet
                if (e.key === 'Enter')
                  void send({ decision: 'reject', reason: e.currentTarget.value }, `Rejected ${a.tool_id}`);
              }}
            />
            <button
              type="button"
              class="danger"
              disabled={busy}
              onClick={() => void send({ decision: 'reject', reason }, `Rejected ${a.tool_id}`)}
            >
              Reject
            </button>
          </div>
          <details>
            <summary>Edit arguments</summary>
            <textarea
              aria-label="Arguments (JSON)"
              rows={6}
              value={argsText}
              onInput={(e) => {
                setArgsText(e.currentTarget.value);
                setChecked(undefined);
              }}
            />
            <div class="row">
              <button type="button" onClick={() => void check()}>
                Check edited arguments
              </button>
              {checked && (
                <span role="status" aria-label="New verdict">
                  New verdict: <span class={`badge lv-${checked.level}`}>{checked.level}</span>{' '}
                  {checked.error?.message ?? checked.reasons[0] ?? ''}
                </span>
              )}
              <button
                type="button"
                disabled={busy || !checked}
                onClick={() => {
                  const args = parsedArgs();
                  if (args !== undefined) approve(args);
                }}
              >
                Approve edited arguments
              </button>
            </div>
          </details>
          <details>
            <summary>Always allow…</summary>
            {a.standing.offered ? (
              <>
                <p>
                  From now on, without asking: <code>{a.standing.description}</code>. Narrow the shape below (it must
                  still cover this call).
                </p>
                <textarea
                  aria-label="Standing shape (JSON)"
                  rows={5}
                  value={shapeText}
                  onInput={(e) => setShapeText(e.currentTarget.value)}
                />
                <label>
                  Scope{' '}
                  <select aria-label="Scope" value={scope} onChange={(e) => setScope(e.currentTarget.value)}>
                    <option value="session">this session</option>
                    <option value="workspace">this workspace</option>
                    <option value="persistent">persistent (30 days)</option>
                  </select>
                </label>
              </>
            ) : (
              <p>No standing approval for this call ({a.standing.reason}): it approves this call only.</p>
            )}
            <button type="button" disabled={busy} onClick={always}>
              Always allow
            </button>
          </details>
        </section>
      )}
      {confirming && (
        <Confirm
          title="Approve an APPROVE-level call?"
          confirmLabel="Confirm approval"
          onCancel={() => setConfirming(undefined)}
          onConfirm={() =>
            void send(
              confirming.args === undefined ? { decision: 'approve' } : { decision: 'approve', args: confirming.args },
              `Approved ${a.tool_id}`,
            )
          }
        >
          <p>
            {a.tool_id}: {ev.reasons[0]}
          </p>
        </Confirm>
      )}
    </article>
  );
}
