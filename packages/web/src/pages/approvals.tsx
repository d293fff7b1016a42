// /ui/approvals and /ui/approvals/<id>: the held calls, live, newest first; the selected one in
// full beside the list (below it on a phone). Keyboard: j/k move, a approves (APPROVE level asks
// first), r goes to the rejection reason. Opt-in browser notification for new holds.

import { useEffect, useRef, useState } from 'preact/hooks';

import { ApprovalDetail, type KeyCommand } from '../components/approval-detail.tsx';
import { useApp, useConsole, useNow } from '../context.ts';
import { duration, summary } from '../format.ts';
import { linkClick, navigate } from '../router.ts';

const NOTIFY_KEY = 'finger.notify';

function typing(target: EventTarget | null): boolean {
  const el = target as HTMLElement | null;
  return !!el && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName));
}

export function ApprovalsPage({ id }: { id: string | undefined }) {
  const { store } = useApp();
  const { approvals, loaded } = useConsole();
  const now = useNow();
  const [command, setCommand] = useState<KeyCommand>();
  const [notifyOn, setNotifyOn] = useState(
    () =>
      typeof Notification !== 'undefined' &&
      Notification.permission === 'granted' &&
      !!localStorage.getItem(NOTIFY_KEY),
  );
  const selected = approvals.find((a) => a.id === id) ?? (id === undefined ? approvals[0] : undefined);

  useEffect(() => {
    store.onNewHold = notifyOn
      ? (a) => {
          const n = new Notification(`finger: ${a.level} ${a.tool_id}`, {
            body: a.evaluation.reasons[0] ?? '',
            tag: a.id,
          });
          n.onclick = () => {
            focus();
            navigate(`/ui/approvals/${a.id}`);
          };
        }
      : undefined;
    return () => (store.onNewHold = undefined);
  }, [notifyOn, store]);

  // the key handler reads what the last render showed (set during render, not in an effect, so a
  // key pressed right after a change acts on the call now on screen)
  const shown = useRef({ approvals, selected });
  shown.current = { approvals, selected };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (typing(e.target) || e.metaKey || e.ctrlKey || e.altKey || document.querySelector('dialog[open]')) return;
      const { approvals, selected } = shown.current;
      const i = selected ? approvals.indexOf(selected) : -1;
      if (e.key === 'j' || e.key === 'k') {
        const next = approvals[Math.min(approvals.length - 1, Math.max(0, i + (e.key === 'j' ? 1 : -1)))];
        if (next) navigate(`/ui/approvals/${next.id}`, true);
      } else if (e.key === 'r' && selected) {
        // focus at once (not after a render), so the next keys typed are the reason, not shortcuts
        e.preventDefault();
        document.getElementById('reject-reason')?.focus();
      } else if (e.key === 'a' && selected) {
        e.preventDefault();
        setCommand((c) => ({ kind: 'approve', n: (c?.n ?? 0) + 1, id: selected.id }));
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, []);

  const toggleNotify = async () => {
    if (notifyOn) {
      localStorage.removeItem(NOTIFY_KEY);
      setNotifyOn(false);
      return;
    }
    if (typeof Notification === 'undefined') return;
    if ((await Notification.requestPermission()) === 'granted') {
      localStorage.setItem(NOTIFY_KEY, '1');
      setNotifyOn(true);
    }
  };

  return (
    <div class="approvals">
      <section class="list" aria-label="Pending approvals">
        <header class="row">
          <h1>
            Approvals <span class="count">{approvals.length}</span>
          </h1>
          <label class="notify">
            <input type="checkbox" checked={notifyOn} onChange={() => void toggleNotify()} /> Notify me of new holds
          </label>
        </header>
        {loaded && approvals.length === 0 && <p class="empty">Nothing is waiting for you.</p>}
        <ul role="list">
          {approvals.map((a) => (
            <li key={a.id} class={a === selected ? 'selected' : ''}>
              <a
                href={`/ui/approvals/${a.id}`}
                onClick={linkClick}
                aria-current={a === selected ? 'true' : undefined}
                aria-label={`${a.level} ${a.tool_id} from ${a.facts.principal.id}`}
              >
                <span class={`badge lv-${a.level}`}>{a.level}</span>
                <span class="tool">{a.tool_id}</span>
                <span class="agent">{a.facts.principal.id}</span>
                <span class="waited">{duration(now - Date.parse(a.created_at))}</span>
                <span class="summary">{summary(a.evaluation.preview?.text, a.args)}</span>
              </a>
            </li>
          ))}
        </ul>
        <p class="hint">Keys: j/k move · a approve · r reject</p>
      </section>
      {selected ? (
        <ApprovalDetail approval={selected} command={command} />
      ) : (
        id !== undefined && (
          <article class="detail">
            <h2>Approval {id}</h2>
            <p>This call is no longer waiting: it was answered, timed out or withdrawn.</p>
          </article>
        )
      )}
    </div>
  );
}
