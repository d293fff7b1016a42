// /ui/audit: the hash chain's state at the top (the daemon verifies it; a broken chain names its
// first bad entry), then the entries, searchable by type, request id and text, a page at a time.

import { useEffect, useState } from 'preact/hooks';

import { api, errorText } from '../api.ts';
import { useConsole } from '../context.ts';
import { clock } from '../format.ts';
import type { AuditEntry, AuditState } from '../types.ts';

const TYPES = [
  'tool.call',
  'tool.result',
  'approval.requested',
  'approval.resolved',
  'policy.changed',
  'grant.changed',
  'breaker.tripped',
  'halt',
  'unlock',
  'undo',
  'module.changed',
  'token.changed',
  'route.decision',
  'task.step',
  'task.state',
  'audit.acknowledged',
];
const PAGE = 50;

interface Verify {
  ok: boolean;
  entries: number;
  first_bad: number | null;
  reason: string | null;
}

export function ChainState({ audit }: { audit: AuditState }) {
  if (audit.state === 'intact')
    return (
      <p class="chain ok" role="status" aria-label="Audit chain">
        Audit chain intact — {audit.entries} entries verified
        {audit.checked_at ? ` at ${clock(audit.checked_at)}` : ''}
      </p>
    );
  if (audit.state === 'broken')
    return (
      <p class="chain bad" role="alert" aria-label="Audit chain">
        Audit chain broken — first bad entry #{audit.first_bad?.seq}: {audit.first_bad?.reason}
      </p>
    );
  return (
    <p class="chain" role="status" aria-label="Audit chain">
      Audit chain not verified yet
    </p>
  );
}

export function AuditPage() {
  const snap = useConsole();
  const [audit, setAudit] = useState<AuditState>(snap.audit);
  const [type, setType] = useState('');
  const [requestId, setRequestId] = useState('');
  const [text, setText] = useState('');
  const [pages, setPages] = useState<number[]>([0]);
  const [entries, setEntries] = useState<AuditEntry[]>([]);
  const [error, setError] = useState('');

  const verify = async () => {
    try {
      const v = await api<Verify>('GET', '/v1/audit/verify');
      setAudit({
        state: v.ok ? 'intact' : 'broken',
        entries: v.entries,
        first_bad: v.first_bad !== null ? { seq: v.first_bad, reason: v.reason ?? '' } : null,
        checked_at: new Date().toISOString(),
      });
    } catch (e) {
      setError(errorText(e));
    }
  };
  useEffect(() => {
    void verify();
  }, []);

  const since = pages[pages.length - 1] ?? 0;
  useEffect(() => {
    const q = new URLSearchParams({ since_seq: String(since), limit: String(PAGE) });
    if (type) q.set('type', type);
    if (requestId.trim()) q.set('request_id', requestId.trim());
    api<{ entries: AuditEntry[] }>('GET', `/v1/audit?${q}`).then(
      (r) => {
        setEntries(r.entries);
        setError('');
      },
      (e: unknown) => setError(errorText(e)),
    );
  }, [since, type, requestId]);

  const needle = text.trim().toLowerCase();
  const shown = needle ? entries.filter((e) => JSON.stringify(e).toLowerCase().includes(needle)) : entries;
  const last = entries[entries.length - 1];
  return (
    <div class="audit">
      <h1>Audit</h1>
      <div class="row">
        <ChainState audit={audit} />
        <button type="button" onClick={() => void verify()}>
          Verify again
        </button>
      </div>
      <div class="row filters">
        <label>
          Type{' '}
          <select
            aria-label="Entry type"
            value={type}
            onChange={(e) => {
              setType(e.currentTarget.value);
              setPages([0]);
            }}
          >
            <option value="">all</option>
            {TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          Request{' '}
          <input
            aria-label="Request id"
            value={requestId}
            onChange={(e) => {
              setRequestId(e.currentTarget.value);
              setPages([0]);
            }}
          />
        </label>
        <label>
          Search <input aria-label="Search entries" value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </label>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <table class="entries">
        <thead>
          <tr>
            <th>#</th>
            <th>time</th>
            <th>type</th>
            <th>actor</th>
            <th>tool</th>
            <th>decision</th>
            <th>level</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((e) => (
            <tr key={e.seq} class={audit.first_bad?.seq === e.seq ? 'bad' : ''}>
              <td>{e.seq}</td>
              <td>{clock(e.ts)}</td>
              <td>{e.type}</td>
              <td>{e.actor ? `${e.actor.kind}:${e.actor.id}` : ''}</td>
              <td>{e.tool ?? ''}</td>
              <td>{e.decision ?? ''}</td>
              <td>{e.verdict?.level ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="row">
        <button type="button" disabled={pages.length < 2} onClick={() => setPages((p) => p.slice(0, -1))}>
          Previous page
        </button>
        <button
          type="button"
          disabled={entries.length < PAGE || !last}
          onClick={() => last && setPages((p) => [...p, last.seq])}
        >
          Next page
        </button>
      </div>
    </div>
  );
}
