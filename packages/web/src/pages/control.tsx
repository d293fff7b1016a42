// /ui/control: the kill switch (admin, confirmed), lockout and unlock, and the policy view — the
// admin layer read-only, user rules and grants (admin may remove them), standing approvals
// (operators and admins revoke them).

import { useEffect, useState } from 'preact/hooks';

import { api, errorText } from '../api.ts';
import { Confirm } from '../components/confirm.tsx';
import { canAnswer, isAdmin, useApp, useConsole } from '../context.ts';
import { clock, json } from '../format.ts';
import type { Level } from '../types.ts';

interface PolicyRule {
  id?: string;
  tool: string;
  level: Level;
  match?: unknown;
  reason?: string;
}
interface PolicyDoc {
  version: 1;
  rules: PolicyRule[];
  [key: string]: unknown;
}
interface PolicyView {
  admin: PolicyDoc;
  user: PolicyDoc;
  warnings: string[];
}

export function ControlPage() {
  const { session, notify, store } = useApp();
  const s = useConsole();
  const admin = isAdmin(session);
  const [halting, setHalting] = useState(false);
  const [haltReason, setHaltReason] = useState('');
  const [policy, setPolicy] = useState<PolicyView>();
  const [grants, setGrants] = useState<Record<string, string[]>>({});
  const [error, setError] = useState('');

  const load = async () => {
    try {
      const [p, g] = await Promise.all([
        api<PolicyView>('GET', '/v1/policy'),
        api<{ grants: Record<string, string[]> }>('GET', '/v1/grants'),
      ]);
      setPolicy(p);
      setGrants(g.grants);
    } catch (e) {
      setError(errorText(e));
    }
  };
  useEffect(() => {
    void load();
  }, []);

  const act = async (what: () => Promise<unknown>, done: string) => {
    setError('');
    try {
      await what();
      notify(done);
      await Promise.all([load(), store.refresh()]);
    } catch (e) {
      setError(errorText(e));
    }
  };
  const halt = () => {
    setHalting(false);
    void act(() => api('POST', '/v1/halt', haltReason.trim() ? { reason: haltReason.trim() } : {}), 'Halted');
  };
  const removeRule = (rule: PolicyRule) => {
    if (!policy) return;
    const user = { ...policy.user, rules: policy.user.rules.filter((r) => r !== rule) };
    void act(() => api('PUT', '/v1/policy', user), `Removed rule ${rule.id ?? rule.tool}`);
  };

  const safety = s.safety;
  const locked = safety.locked === true;
  return (
    <div class="control">
      <h1>Control</h1>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <section aria-label="Kill switch">
        <h2>Kill switch</h2>
        <p role="status" aria-label="Safety state" class={locked ? 'bad' : 'ok'}>
          State: {safety.state ?? 'unknown'}
          {locked && safety.state !== 'locked' ? ' — locked' : ''}
          {safety.lockout?.reason ? ` (${safety.lockout.reason})` : ''}
        </p>
        {admin && (
          <div class="row">
            <input
              aria-label="Reason for halting"
              placeholder="Reason (recorded)"
              value={haltReason}
              onInput={(e) => setHaltReason(e.currentTarget.value)}
            />
            <button type="button" class="danger big" onClick={() => setHalting(true)}>
              Halt everything
            </button>
            {locked && (
              <button type="button" onClick={() => void act(() => api('POST', '/v1/unlock', {}), 'Unlocked')}>
                Unlock
              </button>
            )}
          </div>
        )}
      </section>
      {(safety.agents ?? []).length > 0 && (
        <section aria-label="Locked agents">
          <h2>Locked agents</h2>
          <ul>
            {(safety.agents ?? []).map((l) => (
              <li key={l.agent_id}>
                <code>{l.agent_id}</code> {l.breaker ? `(${l.breaker}) ` : ''}
                {l.reason} — by {l.by} at {clock(l.at)}{' '}
                {admin && l.agent_id !== undefined && (
                  <button
                    type="button"
                    aria-label={`Unlock agent ${l.agent_id}`}
                    onClick={() =>
                      void act(() => api('POST', '/v1/unlock', { agent_id: l.agent_id }), `Unlocked ${l.agent_id}`)
                    }
                  >
                    Unlock
                  </button>
                )}
              </li>
            ))}
          </ul>
        </section>
      )}
      <section aria-label="Standing approvals">
        <h2>Standing approvals</h2>
        {s.standing.length === 0 ? (
          <p class="empty">None.</p>
        ) : (
          <ul>
            {s.standing.map((a) => (
              <li key={a.id}>
                <code>{a.description ?? a.tool_id}</code> for {a.principal} ({a.scope}
                {a.expires_at ? `, until ${clock(a.expires_at)}` : ''}) by {a.by}{' '}
                {canAnswer(session) && (
                  <button
                    type="button"
                    aria-label={`Revoke standing approval ${a.description ?? a.id}`}
                    onClick={() =>
                      void act(
                        () => api('DELETE', `/v1/standing-approvals/${encodeURIComponent(a.id)}`),
                        'Standing approval revoked',
                      )
                    }
                  >
                    Revoke
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </section>
      {policy && (
        <section aria-label="Policy">
          <h2>Policy</h2>
          {policy.warnings.length > 0 && (
            <ul class="warnings">
              {policy.warnings.map((w, i) => (
                <li key={i}>{w}</li>
              ))}
            </ul>
          )}
          <h3>User rules</h3>
          {policy.user.rules.length === 0 ? (
            <p class="empty">No user rules.</p>
          ) : (
            <ul>
              {policy.user.rules.map((r, i) => (
                <li key={r.id ?? i}>
                  <span class={`badge lv-${r.level}`}>{r.level}</span> <code>{r.id ?? `#${i}`}</code> {r.tool}{' '}
                  {r.match !== undefined ? <code>{JSON.stringify(r.match)}</code> : null} {r.reason}{' '}
                  {admin && (
                    <button type="button" aria-label={`Remove rule ${r.id ?? i}`} onClick={() => removeRule(r)}>
                      Remove
                    </button>
                  )}
                </li>
              ))}
            </ul>
          )}
          <h3>Grants</h3>
          <ul>
            {Object.entries(grants).flatMap(([role, tools]) =>
              tools.map((tool) => (
                <li key={`${role}:${tool}`}>
                  <code>agent:{role}</code> → <code>{tool}</code>{' '}
                  {admin && (
                    <button
                      type="button"
                      aria-label={`Revoke grant ${tool} from ${role}`}
                      onClick={() => void act(() => api('DELETE', '/v1/grants', { role, tool }), 'Grant revoked')}
                    >
                      Revoke
                    </button>
                  )}
                </li>
              )),
            )}
          </ul>
          <details>
            <summary>Admin policy (read-only)</summary>
            <pre class="code">{json(policy.admin)}</pre>
          </details>
        </section>
      )}
      {halting && (
        <Confirm
          title="Halt every agent and call now?"
          confirmLabel="Confirm halt"
          onConfirm={halt}
          onCancel={() => setHalting(false)}
        >
          <p>Everything running stops; the system stays locked until an admin unlocks it.</p>
        </Confirm>
      )}
    </div>
  );
}
