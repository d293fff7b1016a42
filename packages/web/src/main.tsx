// The console's shell: checks the session, routes /ui/* to the pages, shows who is signed in,
// the connection state and a live status line; starts the live store once signed in.

import './styles.css';

import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';

import { api, ApiError, onSessionLost, type Session, setCsrfToken } from './api.ts';
import { Ctx, useConsole } from './context.ts';
import { ActivityPage } from './pages/activity.tsx';
import { ApprovalsPage } from './pages/approvals.tsx';
import { AuditPage } from './pages/audit.tsx';
import { ControlPage } from './pages/control.tsx';
import { SignInPage } from './pages/signin.tsx';
import { linkClick, navigate, usePath } from './router.ts';
import { ConsoleStore } from './store.ts';

const NAV = [
  ['/ui/approvals', 'Approvals'],
  ['/ui/activity', 'Activity'],
  ['/ui/audit', 'Audit'],
  ['/ui/control', 'Control'],
] as const;

function Page({ path }: { path: string }) {
  const m = /^\/ui\/approvals\/([^/]+)$/.exec(path);
  if (m) return <ApprovalsPage id={decodeURIComponent(m[1]!)} />;
  if (path.startsWith('/ui/activity')) return <ActivityPage />;
  if (path.startsWith('/ui/audit')) return <AuditPage />;
  if (path.startsWith('/ui/control') || path.startsWith('/ui/policy')) return <ControlPage />;
  return <ApprovalsPage id={undefined} />;
}

function Shell({
  session,
  path,
  status,
  onSignOut,
}: {
  session: Session;
  path: string;
  status: string;
  onSignOut: () => void;
}) {
  const { connection, approvals, error } = useConsole();
  return (
    <>
      <header class="top">
        <nav aria-label="Main">
          {NAV.map(([href, label]) => (
            <a key={href} href={href} onClick={linkClick} aria-current={path.startsWith(href) ? 'page' : undefined}>
              {label}
              {href === '/ui/approvals' && approvals.length > 0 ? ` (${approvals.length})` : ''}
            </a>
          ))}
        </nav>
        <span class={`conn ${connection}`} role="status" aria-label="Connection">
          {connection === 'live' ? 'live' : connection === 'connecting' ? 'connecting…' : 'offline, retrying'}
        </span>
        <span class="who">
          {session.principal.id} ({session.roles.join(', ')})
        </span>
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </header>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <main>
        <Page path={path} />
      </main>
      <p class="status" role="status" aria-live="polite" aria-label="Last action">
        {status}
      </p>
    </>
  );
}

function App() {
  const path = usePath();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [status, setStatus] = useState('');
  const store = useMemo(() => new ConsoleStore(), []);

  const signedIn = (s: Session) => {
    setCsrfToken(s.csrf_token);
    setSession(s);
  };
  useEffect(() => {
    onSessionLost(() => {
      store.stop();
      setCsrfToken('');
      setSession(null);
    });
    if (location.pathname === '/ui/signin' && location.hash.includes('code=')) {
      setSession(null);
      return;
    }
    api<Session>('GET', '/v1/session').then(signedIn, (e: unknown) => {
      // 401: no session; 403: a session this tab holds no CSRF token for (opened elsewhere)
      if (!(e instanceof ApiError) || (e.status !== 401 && e.status !== 403)) setStatus(String(e));
      setCsrfToken('');
      setSession(null);
    });
  }, []);
  useEffect(() => {
    if (!session) return;
    store.start();
    if (path === '/ui' || path === '/ui/' || path === '/ui/signin') navigate('/ui/approvals', true);
    return () => store.stop();
  }, [session]);

  if (session === undefined) return <p class="loading">Loading…</p>;
  if (session === null) return <SignInPage onSignedIn={signedIn} />;
  const signOut = () => {
    void api('DELETE', '/v1/session').finally(() => {
      store.stop();
      setCsrfToken('');
      setSession(null);
      navigate('/ui/signin', true);
    });
  };
  return (
    <Ctx.Provider value={{ session, store, notify: setStatus }}>
      <Shell session={session} path={path} status={status} onSignOut={signOut} />
    </Ctx.Provider>
  );
}

render(<App />, document.getElementById('app')!);
