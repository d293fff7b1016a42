import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { FingerError, type Principal, rfc3339 } from '@finger/protocol';

/** Every role a token may carry (§3.11). */
export const ROLES = [
  'admin',
  'operator',
  'viewer',
  'agent:supervisor',
  'agent:executor',
  'agent:reviewer',
  'agent:delegated',
] as const;
export type Role = (typeof ROLES)[number];

/** What `list()` and `GET /v1/tokens` show of a token: never the token or its hash. */
export interface TokenInfo {
  name: string;
  role: Role;
  created_at: string;
  last_used_at?: string;
}

/** A freshly minted token: `token` is the plaintext, shown once. */
export interface CreatedToken {
  name: string;
  role: Role;
  token: string;
}

interface StoredToken extends TokenInfo {
  /** sha256 of the plaintext, hex. */
  hash: string;
}

interface TokensFile {
  version: 1;
  tokens: StoredToken[];
}

/** Name of the admin token (the one in the admin token file, by default `FINGER_HOME/token`). */
export const ADMIN_TOKEN_NAME = 'admin';
const NAME_RE = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
const TOKEN_PREFIX = 'fgr_';
const USAGE_FLUSH_MS = 5000;

/** sha256 of a token's UTF-8 bytes (one-shot: no Hash object per request). */
function sha256(token: string): Buffer {
  return hash('sha256', token, 'buffer');
}

function newToken(): string {
  return TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/**
 * Writes `data` to `path` atomically (tmp + rename) with mode 0600; missing directories are
 * created with mode 0700 (existing ones are left as they are).
 */
export function writeFileAtomic(path: string, data: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, data, { mode: 0o600 });
    chmodSync(tmp, 0o600);
    renameSync(tmp, path);
  } catch (e) {
    // a full disk: no half-written temp file is left beside the original (which is untouched)
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * Tightens a secret file that is group- or world-accessible to 0600. Returns the mode it had
 * when it was changed, undefined when it was fine or does not exist.
 */
export function tightenSecretFile(path: string): number | undefined {
  let mode: number;
  try {
    mode = statSync(path).mode & 0o777;
  } catch {
    return undefined;
  }
  if ((mode & 0o077) === 0) return undefined;
  chmodSync(path, 0o600);
  return mode;
}

/** True when `role` is one of {@link ROLES}. */
export function isRole(role: unknown): role is Role {
  return typeof role === 'string' && (ROLES as readonly string[]).includes(role);
}

/** The principal a role maps to: admin/operator/viewer are humans, `agent:*` are agents. */
export function principalFor(name: string, role: Role): Principal {
  return { kind: role.startsWith('agent:') ? 'agent' : 'human', id: name, roles: [role] };
}

/** Options of {@link TokenStore}. */
export interface TokenStoreOptions {
  now?: () => number;
  /** The admin token file (absolute; see `resolveTokenFile`); default `<home>/token`. */
  tokenFile?: string;
  /** Told when start-up tightened a group/world-readable secret file to 0600. */
  warn?: (message: string, details: { path: string; mode: string }) => void;
}

/**
 * Bearer tokens of one FINGER_HOME. The admin token lives in plaintext in the admin token file
 * (`FINGER_HOME/token` unless config `token_file` / FINGER_TOKEN_FILE moves it; 0600, created on
 * first start) so the CLI can read it; every token, the admin one included, is kept in
 * `tokens.json` only as a sha256 hash (0600). Authentication compares hashes in constant time.
 * Opening the store tightens either file to 0600 when it is group- or world-accessible (and
 * tells `warn`).
 */
export class TokenStore {
  readonly home: string;
  /** The admin token file, absolute. */
  readonly tokenFile: string;
  private tokens: StoredToken[] = [];
  private hashes: Buffer[] = [];
  private usageDirty = false;
  private usageTimer: NodeJS.Timeout | undefined;
  private readonly now: () => number;
  private readonly revokedListeners = new Set<(name: string) => void>();

  /** Opens (and on first start creates) the token files of `home`. */
  constructor(home: string, options: TokenStoreOptions = {}) {
    this.home = home;
    this.tokenFile = options.tokenFile ?? join(home, 'token');
    this.now = options.now ?? Date.now;
    for (const path of [this.tokensPath, this.tokenFile]) {
      const was = tightenSecretFile(path);
      if (was !== undefined)
        options.warn?.(
          `${path} was readable by others (mode ${was.toString(8).padStart(4, '0')}): tightened to 0600 — rotate the tokens if others may have read it`,
          { path, mode: was.toString(8).padStart(4, '0') },
        );
    }
    this.load();
    this.ensureAdmin();
  }

  /** Path of the plaintext admin token file. */
  get adminTokenPath(): string {
    return this.tokenFile;
  }

  /** Path of the hashes file. */
  get tokensPath(): string {
    return join(this.home, 'tokens.json');
  }

  /** Reads the admin token (for in-process callers such as tests and the testkit). */
  readAdminToken(): string {
    return readFileSync(this.adminTokenPath, 'utf8').trim();
  }

  /**
   * Mints a token for `name` with `role` and returns its plaintext (the only time it is visible).
   * Throws E_INVALID_ARGS on a bad name or role, E_CONFLICT when the name exists.
   */
  create(name: string, role: string): CreatedToken {
    if (!NAME_RE.test(name)) {
      throw new FingerError(
        'E_INVALID_ARGS',
        `bad token name ${JSON.stringify(name)}: use 1-64 of a-z 0-9 _ . - starting with a letter or digit`,
        {
          issues: [{ path: '$.name', message: `must match ${NAME_RE.source}` }],
        },
      );
    }
    if (!isRole(role)) {
      throw new FingerError('E_INVALID_ARGS', `bad role ${JSON.stringify(role)}: one of ${ROLES.join(', ')}`, {
        issues: [{ path: '$.role', message: `must be one of ${ROLES.join(', ')}` }],
      });
    }
    if (this.tokens.some((t) => t.name === name))
      throw new FingerError('E_CONFLICT', `a token named "${name}" already exists`, { name });
    const token = newToken();
    this.tokens.push({ name, role, created_at: rfc3339(this.now()), hash: sha256(token).toString('hex') });
    this.reindex();
    this.save();
    return { name, role, token };
  }

  /** Revokes a token by name. E_NOT_FOUND when unknown; E_FORBIDDEN for the admin token. */
  revoke(name: string): void {
    if (name === ADMIN_TOKEN_NAME) {
      throw new FingerError(
        'E_FORBIDDEN',
        `the admin token cannot be revoked (delete ${this.tokenFile} and restart to rotate it)`,
      );
    }
    const i = this.tokens.findIndex((t) => t.name === name);
    if (i < 0) throw new FingerError('E_NOT_FOUND', `no token named "${name}"`, { name });
    this.tokens.splice(i, 1);
    this.reindex();
    this.save();
    for (const listener of [...this.revokedListeners]) listener(name);
  }

  /**
   * Calls `listener` with the name of every token revoked from now on, right after it stopped
   * authenticating: whatever holds a session opened with that token (the event gateway's
   * WebSockets) ends it. Returns the unsubscribe function.
   */
  onRevoked(listener: (name: string) => void): () => void {
    this.revokedListeners.add(listener);
    return () => void this.revokedListeners.delete(listener);
  }

  /** Every token's name, role and times (never hashes), in creation order. */
  list(): TokenInfo[] {
    return this.tokens.map(({ name, role, created_at, last_used_at }) =>
      last_used_at ? { name, role, created_at, last_used_at } : { name, role, created_at },
    );
  }

  /** The principal of a presented token, or undefined when it matches none. */
  authenticate(token: string | undefined): Principal | undefined {
    if (typeof token !== 'string' || token.length === 0 || token.length > 512) return undefined;
    const presented = sha256(token);
    let found = -1;
    // Compare against every hash so the time taken does not depend on which one matches.
    for (let i = 0; i < this.hashes.length; i++) {
      if (timingSafeEqual(presented, this.hashes[i]!) && found < 0) found = i;
    }
    if (found < 0) return undefined;
    const entry = this.tokens[found]!;
    entry.last_used_at = rfc3339(this.now());
    this.markUsed();
    return principalFor(entry.name, entry.role);
  }

  /** Writes pending `last_used_at` updates; called on close. */
  flush(): void {
    if (this.usageTimer) clearTimeout(this.usageTimer);
    this.usageTimer = undefined;
    if (this.usageDirty) this.save();
  }

  private markUsed(): void {
    this.usageDirty = true;
    if (this.usageTimer) return;
    this.usageTimer = setTimeout(() => {
      this.usageTimer = undefined;
      try {
        if (this.usageDirty) this.save();
      } catch {
        // best effort: usage times are informational
      }
    }, USAGE_FLUSH_MS);
    this.usageTimer.unref();
  }

  private load(): void {
    let text: string;
    try {
      text = readFileSync(this.tokensPath, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw new FingerError('E_STORE_UNAVAILABLE', `cannot read ${this.tokensPath}: ${(e as Error).message}`);
    }
    let parsed: TokensFile;
    try {
      parsed = JSON.parse(text) as TokensFile;
    } catch (e) {
      throw new FingerError('E_STORE_UNAVAILABLE', `${this.tokensPath} is not valid JSON: ${(e as Error).message}`);
    }
    const list = Array.isArray(parsed?.tokens) ? parsed.tokens : [];
    this.tokens = list.filter(
      (t) =>
        typeof t?.name === 'string' && isRole(t.role) && typeof t.hash === 'string' && /^[0-9a-f]{64}$/.test(t.hash),
    );
    this.reindex();
  }

  private ensureAdmin(): void {
    let plaintext: string | undefined;
    try {
      plaintext = readFileSync(this.adminTokenPath, 'utf8').trim() || undefined;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    if (!plaintext) {
      plaintext = newToken();
      writeFileAtomic(this.adminTokenPath, `${plaintext}\n`);
    }
    const hash = sha256(plaintext).toString('hex');
    const existing = this.tokens.find((t) => t.name === ADMIN_TOKEN_NAME);
    if (existing && existing.hash === hash && existing.role === 'admin') return;
    this.tokens = this.tokens.filter((t) => t.name !== ADMIN_TOKEN_NAME);
    this.tokens.unshift({ name: ADMIN_TOKEN_NAME, role: 'admin', created_at: rfc3339(this.now()), hash });
    this.reindex();
    this.save();
  }

  private reindex(): void {
    this.hashes = this.tokens.map((t) => Buffer.from(t.hash, 'hex'));
  }

  private save(): void {
    this.usageDirty = false;
    const file: TokensFile = { version: 1, tokens: this.tokens };
    writeFileAtomic(this.tokensPath, `${JSON.stringify(file, null, 2)}\n`);
  }
}
