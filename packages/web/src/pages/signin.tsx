// /ui/signin: a one-time link (`#code=…`, printed by `myfinger ui`) signs in by itself; otherwise
// the person pastes a token once. The daemon answers with an HttpOnly session cookie; the token
// never stays in the page.

import { useEffect, useState } from 'preact/hooks';

import { api, errorText, type Session } from '../api.ts';

export function SignInPage({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const signIn = async (body: { token: string } | { code: string }) => {
    setBusy(true);
    setError('');
    try {
      onSignedIn(await api<Session>('POST', '/v1/session', body));
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  };

  useEffect(() => {
    const code = new URLSearchParams(location.hash.slice(1)).get('code');
    if (code) {
      // the code is single use: take it out of the address bar and history at once
      history.replaceState(null, '', location.pathname);
      void signIn({ code });
    }
  }, []);

  return (
    <main class="signin">
      <h1>finger console</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const t = token.trim();
          setToken('');
          if (t) void signIn({ token: t });
        }}
      >
        <label for="token">API token</label>
        <input
          id="token"
          type="password"
          autocomplete="off"
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p class="hint">
        Or run <code>myfinger ui</code> for a one-time sign-in link.
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </main>
  );
}
