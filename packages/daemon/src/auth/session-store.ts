import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

import { FingerError, type Principal, rfc3339 } from '@finger/protocol';

import type { TokenStore } from './token-store.js';

/** Name of the browser session cookie. */
export const SESSION_COOKIE = 'finger_session';

/** Limits and lifetimes of browser sessions (config `ui`). */
export interface SessionLimits {
  /** A session unused this long ends (default 8 h). */
  idle_ms: number;
  /** A session ends this long after sign-in, used or not (default 24 h). */
  absolute_ms: number;
  /** Most sessions held at once; past it the least recently used one ends (default 256). */
  max_sessions: number;
  /** How long a one-time sign-in code stays valid (default 120 s). */
  code_ttl_ms: number;
  /** Most unused one-time codes held at once; past it the oldest is dropped (default 32). */
  max_codes: number;
}

export const SESSION_DEFAULTS: SessionLimits = {
  idle_ms: 8 * 3600_000,
  absolute_ms: 24 * 3600_000,
  max_sessions: 256,
  code_ttl_ms: 120_000,
  max_codes: 32,
};

/** What the browser is told about its session (never the cookie value). */
export interface SessionView {
  principal: { kind: Principal['kind']; id: string };
  roles: string[];
  csrf_token: string;
  expires_at: string;
}

interface Session {
  /** Name of the bearer token the session was opened with (the principal's id). */
  token: string;
  principal: Principal;
  /** sha256 of the CSRF token. */
  csrfHash: Buffer;
  /** The CSRF token itself: shown only by sign-in and by GET /v1/session with it presented. */
  csrf: string;
  created: number;
  lastUsed: number;
}

interface PendingCode {
  token: string;
  principal: Principal;
  expires: number;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

function key(value: string): string {
  return digest(value).toString('hex');
}

function secret(): string {
  return randomBytes(32).toString('base64url');
}

/** A presented secret is 43 base64url characters (32 random bytes); anything else matches nothing. */
const SECRET_RE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Browser sessions opened with a bearer token (`POST /v1/session`), kept in memory only (a restart
 * signs every browser out). The cookie value and the one-time codes are 32 random bytes; the store
 * keeps only their sha256 (a lookup by hash reveals nothing of the value), and each session's CSRF
 * token is compared by hash in constant time. A session carries the principal and roles of its
 * token; revoking the token ends its sessions and codes at once. Sessions end after
 * `idle_ms` unused or `absolute_ms` after sign-in; both tables are bounded.
 */
export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  private readonly codes = new Map<string, PendingCode>();
  private readonly endedListeners = new Set<(sessionKey: string) => void>();
  private readonly stopRevoked: () => void;

  constructor(
    private readonly tokens: TokenStore,
    private readonly limits: SessionLimits = SESSION_DEFAULTS,
    private readonly now: () => number = Date.now,
  ) {
    this.stopRevoked = tokens.onRevoked((name) => this.endToken(name));
  }

  /**
   * Opens a session for a bearer token or a one-time code: returns the cookie value (to set) and
   * the view. E_UNAUTHENTICATED for a bad token or a bad, used or expired code; E_FORBIDDEN for an
   * agent's token (a governed agent never gets a console).
   */
  signIn(credentials: { token?: string; code?: string }): { cookie: string; key: string; view: SessionView } {
    let principal: Principal | undefined;
    if (credentials.code !== undefined) {
      principal = this.redeem(credentials.code);
      if (!principal) throw new FingerError('E_UNAUTHENTICATED', 'the sign-in code is invalid, used or expired');
    } else {
      principal = this.tokens.authenticate(credentials.token);
      if (!principal) throw new FingerError('E_UNAUTHENTICATED', 'invalid token');
    }
    if (principal.kind !== 'human')
      throw new FingerError('E_FORBIDDEN', `role ${principal.roles.join(',')} may not open a browser session`, {
        reason: 'agent_token',
      });
    this.sweep();
    while (this.sessions.size >= this.limits.max_sessions) this.evictLeastRecent();
    const cookie = secret();
    const csrf = secret();
    const t = this.now();
    const session: Session = {
      token: principal.id,
      principal,
      csrf,
      csrfHash: digest(csrf),
      created: t,
      lastUsed: t,
    };
    const k = key(cookie);
    this.sessions.set(k, session);
    return { cookie, key: k, view: this.view(session) };
  }

  /**
   * The session of a cookie value (refreshing its idle time), or undefined when it is unknown or
   * has expired (an expired one is removed).
   */
  authenticate(cookie: string | undefined): { key: string; principal: Principal } | undefined {
    if (typeof cookie !== 'string' || !SECRET_RE.test(cookie)) return undefined;
    const k = key(cookie);
    const s = this.sessions.get(k);
    if (!s) return undefined;
    const t = this.now();
    if (this.expired(s, t)) {
      this.end(k);
      return undefined;
    }
    s.lastUsed = t;
    return { key: k, principal: s.principal };
  }

  /** True when `presented` is the CSRF token of the session `sessionKey` (constant-time compare). */
  checkCsrf(sessionKey: string, presented: string | undefined): boolean {
    const s = this.sessions.get(sessionKey);
    if (!s || typeof presented !== 'string' || presented.length > 256) return false;
    return timingSafeEqual(digest(presented), s.csrfHash);
  }

  /** The view of a live session (for GET /v1/session). */
  viewOf(sessionKey: string): SessionView | undefined {
    const s = this.sessions.get(sessionKey);
    return s ? this.view(s) : undefined;
  }

  /** Ends one session (sign-out). */
  end(sessionKey: string): void {
    if (!this.sessions.delete(sessionKey)) return;
    for (const l of [...this.endedListeners]) l(sessionKey);
  }

  /**
   * A one-time sign-in code for `principal` (a human token's): single use, valid `code_ttl_ms`.
   * E_FORBIDDEN for an agent.
   */
  issueCode(principal: Principal): { code: string; expires_at: string } {
    if (principal.kind !== 'human')
      throw new FingerError('E_FORBIDDEN', `role ${principal.roles.join(',')} may not open a browser session`, {
        reason: 'agent_token',
      });
    const t = this.now();
    for (const [k, c] of this.codes) if (c.expires <= t) this.codes.delete(k);
    while (this.codes.size >= this.limits.max_codes) {
      const oldest = this.codes.keys().next().value as string;
      this.codes.delete(oldest);
    }
    const code = secret();
    const expires = t + this.limits.code_ttl_ms;
    this.codes.set(key(code), { token: principal.id, principal, expires });
    return { code, expires_at: rfc3339(expires) };
  }

  /** Calls `listener` with the key of every session that ends (sign-out, expiry, eviction, revocation). */
  onEnded(listener: (sessionKey: string) => void): () => void {
    this.endedListeners.add(listener);
    return () => void this.endedListeners.delete(listener);
  }

  /**
   * True while the session exists and has not expired; with `touch`, counts as a use (an open
   * console's WebSocket keeps its session from idling out, not past `absolute_ms`).
   */
  isLive(sessionKey: string, touch = false): boolean {
    const s = this.sessions.get(sessionKey);
    if (!s) return false;
    const t = this.now();
    if (this.expired(s, t)) {
      this.end(sessionKey);
      return false;
    }
    if (touch) s.lastUsed = t;
    return true;
  }

  /** How many sessions and codes are held (for tests and metrics). */
  size(): { sessions: number; codes: number } {
    return { sessions: this.sessions.size, codes: this.codes.size };
  }

  /** Stops listening to token revocations and forgets every session. */
  close(): void {
    this.stopRevoked();
    for (const k of [...this.sessions.keys()]) this.end(k);
    this.codes.clear();
  }

  private redeem(code: string): Principal | undefined {
    if (typeof code !== 'string' || !SECRET_RE.test(code)) return undefined;
    const k = key(code);
    const c = this.codes.get(k);
    if (!c) return undefined;
    this.codes.delete(k); // single use, even when it turns out expired
    if (c.expires <= this.now()) return undefined;
    // the token may have been revoked since (endToken drops its codes); re-check it exists
    if (!this.tokens.list().some((t) => t.name === c.token)) return undefined;
    return c.principal;
  }

  private view(s: Session): SessionView {
    return {
      principal: { kind: s.principal.kind, id: s.principal.id },
      roles: [...s.principal.roles],
      csrf_token: s.csrf,
      expires_at: rfc3339(Math.min(s.created + this.limits.absolute_ms, s.lastUsed + this.limits.idle_ms)),
    };
  }

  private expired(s: Session, t: number): boolean {
    return t - s.lastUsed >= this.limits.idle_ms || t - s.created >= this.limits.absolute_ms;
  }

  private sweep(): void {
    const t = this.now();
    for (const [k, s] of this.sessions) if (this.expired(s, t)) this.end(k);
  }

  private evictLeastRecent(): void {
    let oldest: string | undefined;
    let at = Infinity;
    for (const [k, s] of this.sessions) {
      if (s.lastUsed < at) {
        at = s.lastUsed;
        oldest = k;
      }
    }
    if (oldest !== undefined) this.end(oldest);
  }

  private endToken(name: string): void {
    for (const [k, s] of this.sessions) if (s.token === name) this.end(k);
    for (const [k, c] of this.codes) if (c.token === name) this.codes.delete(k);
  }
}
