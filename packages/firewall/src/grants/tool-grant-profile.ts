import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

import {
  describeJsonSyntax,
  FingerError,
  type JsonSyntaxProblem,
  jsonSyntaxProblem,
  type ValidationIssue,
} from '@finger/protocol';

import { checkGrantGlob, compileGrantGlob, grantRole } from './grant-glob.js';

/**
 * The built-in role grants (globs over tool ids). `supervisor` routes and reads status, so it
 * gets read-only tools; `executor` does the work; `reviewer` reads and audits; `delegated` (the
 * hook tokens of agents that run their calls themselves, which cannot dispatch through the hub)
 * is granted the whole delegated vocabulary — the firewall still judges each call — and an admin
 * narrows it (`myfinger tool grant --revoke --role delegated --tool 'shell.*'`).
 */
export const DEFAULT_ROLE_GRANTS: Readonly<Record<string, readonly string[]>> = Object.freeze({
  supervisor: Object.freeze(['echo.*', 'fs.read', 'fs.list', 'fs.stat', 'scratchpad.read', 'web.search']),
  executor: Object.freeze(['fs.*', 'shell.*', 'web.*', 'scratchpad.*', 'echo.*']),
  reviewer: Object.freeze(['fs.read', 'fs.list', 'fs.stat', 'scratchpad.read', 'audit.*']),
  delegated: Object.freeze(['shell.*', 'fs.*', 'web.*', 'mcp.**', 'agent.*']),
});

/** How a profile is built (the daemon: `file` = `<home>/state/grants.json`, `extra` = config `grants`). */
export interface ToolGrantProfileOptions {
  /** Where admin grant changes persist (JSON, mode 0600). Without it changes live in memory only. */
  file?: string;
  /** Extra grants from configuration, per role, added to the defaults. */
  extra?: Record<string, readonly string[]>;
  /** Replaces {@link DEFAULT_ROLE_GRANTS}. */
  defaults?: Record<string, readonly string[]>;
}

/** Where a grant comes from. */
export interface GrantEntry {
  role: string;
  glob: string;
  source: 'default' | 'config' | 'admin';
}

/** Admin changes as stored in grants.json: added globs, and revoked default/config globs. */
interface StoredGrants {
  version: 1;
  granted: Record<string, string[]>;
  revoked: Record<string, string[]>;
}

type Sourced = Map<string, Map<string, GrantEntry['source']>>;

/**
 * Which agent roles may call which tools: the default role globs, plus config extras, plus admin
 * changes persisted atomically in `grants.json`, plus — per call — the roles a module's manifest
 * lists in `grants`. Constructing reads the file synchronously; a corrupt file throws
 * E_STORE_UNAVAILABLE (the daemon refuses to start rather than run with unknown grants).
 */
export class ToolGrantProfile {
  private readonly file: string | undefined;
  private readonly base: Sourced = new Map();
  private stored: StoredGrants;
  private effective = new Map<string, string[]>();
  private matchers = new Map<string, ((tool_id: string) => boolean)[]>();
  private readonly decided = new Map<string, Map<string, boolean>>();
  private readonly globCache = new Map<string, (tool_id: string) => boolean>();

  constructor(options: ToolGrantProfileOptions = {}) {
    this.file = options.file;
    this.addBase(options.defaults ?? DEFAULT_ROLE_GRANTS, 'default', 'defaults');
    if (options.extra !== undefined) this.addBase(options.extra, 'config', 'grants');
    this.stored = this.file === undefined ? emptyStored() : readStored(this.file);
    this.rebuild();
  }

  /**
   * True when `role` (`executor` or `agent:executor`) may call `tool_id`: a glob of the role
   * matches it, or `module_grants` (the manifest `grants` of the tool's module) lists the role.
   */
  isGranted(role: string, tool_id: string, module_grants?: readonly string[]): boolean {
    const r = role.startsWith('agent:') ? role.slice(6) : role;
    if (module_grants !== undefined && module_grants.length > 0) {
      for (const g of module_grants) if (g === r || g === `agent:${r}`) return true;
    }
    let byTool = this.decided.get(r);
    if (byTool === undefined) {
      byTool = new Map();
      this.decided.set(r, byTool);
    }
    let hit = byTool.get(tool_id);
    if (hit === undefined) {
      hit = (this.matchers.get(r) ?? []).some((m) => m(tool_id));
      byTool.set(tool_id, hit);
    }
    return hit;
  }

  /** The tools of `tools` that `role` may call (module grants included when a tool carries `grants`). */
  granted<T extends { id: string; grants?: readonly string[] }>(role: string, tools: readonly T[]): T[] {
    return tools.filter((t) => this.isGranted(role, t.id, t.grants));
  }

  /** The effective globs of every role, roles sorted. */
  list(): Record<string, string[]> {
    const out: Record<string, string[]> = {};
    for (const role of [...this.effective.keys()].sort()) out[role] = [...this.effective.get(role)!];
    return out;
  }

  /** Every effective grant with where it comes from. */
  entries(): GrantEntry[] {
    const out: GrantEntry[] = [];
    for (const role of [...this.effective.keys()].sort()) {
      for (const glob of this.effective.get(role)!) {
        out.push({ role, glob, source: this.base.get(role)?.get(glob) ?? 'admin' });
      }
    }
    return out;
  }

  /**
   * Grants `role` the tools matching `glob` and persists the change (re-granting a revoked
   * default restores it). Returns false when the role already had exactly this glob.
   * Throws E_INVALID_ARGS for a bad role or glob, E_STORE_UNAVAILABLE when the file cannot be written.
   */
  grant(role: string, glob: string): boolean {
    const r = grantRole(role);
    checkGrantGlob(glob);
    const next = cloneStored(this.stored);
    if (next.revoked[r]?.includes(glob)) next.revoked[r] = next.revoked[r]!.filter((g) => g !== glob);
    else if (this.effective.get(r)?.includes(glob)) return false;
    else (next.granted[r] ??= []).push(glob);
    this.commit(next);
    return true;
  }

  /**
   * Takes `glob` away from `role` (an admin grant is removed; a default or config grant is
   * recorded as revoked) and persists the change. Throws E_NOT_FOUND when the role has no such
   * grant, E_INVALID_ARGS for a bad role or glob, E_STORE_UNAVAILABLE when the file cannot be written.
   */
  revoke(role: string, glob: string): boolean {
    const r = grantRole(role);
    checkGrantGlob(glob);
    if (!this.effective.get(r)?.includes(glob))
      throw new FingerError('E_NOT_FOUND', `role "${r}" has no grant "${glob}"`, {
        role: r,
        tool: glob,
        grants: [...(this.effective.get(r) ?? [])],
      });
    const next = cloneStored(this.stored);
    if (next.granted[r]?.includes(glob)) next.granted[r] = next.granted[r]!.filter((g) => g !== glob);
    if (this.base.get(r)?.has(glob)) (next.revoked[r] ??= []).push(glob);
    this.commit(next);
    return true;
  }

  private addBase(table: Record<string, readonly string[]>, source: GrantEntry['source'], where: string): void {
    const issues: ValidationIssue[] = [];
    for (const [role, globs] of Object.entries(table)) {
      let r: string;
      try {
        r = grantRole(role);
      } catch {
        issues.push({ path: `$.${where}[${JSON.stringify(role)}]`, message: 'is not a role name' });
        continue;
      }
      if (!Array.isArray(globs)) {
        issues.push({ path: `$.${where}.${r}`, message: 'must be an array of tool globs' });
        continue;
      }
      const mine = this.base.get(r) ?? new Map<string, GrantEntry['source']>();
      globs.forEach((glob, i) => {
        try {
          checkGrantGlob(glob);
          if (!mine.has(glob)) mine.set(glob, source);
        } catch {
          issues.push({ path: `$.${where}.${r}[${i}]`, message: `${JSON.stringify(glob)} is not a tool glob` });
        }
      });
      this.base.set(r, mine);
    }
    if (issues.length > 0)
      throw new FingerError(
        'E_INVALID_ARGS',
        `invalid ${where}: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`,
        { issues },
      );
  }

  private commit(next: StoredGrants): void {
    if (this.file !== undefined) writeStored(this.file, next);
    this.stored = next;
    this.rebuild();
  }

  private rebuild(): void {
    const effective = new Map<string, string[]>();
    const roles = new Set([...this.base.keys(), ...Object.keys(this.stored.granted)]);
    for (const role of roles) {
      const revoked = new Set(this.stored.revoked[role] ?? []);
      const globs = [...(this.base.get(role)?.keys() ?? [])].filter((g) => !revoked.has(g));
      for (const g of this.stored.granted[role] ?? []) if (!globs.includes(g)) globs.push(g);
      effective.set(role, globs);
    }
    const matchers = new Map<string, ((tool_id: string) => boolean)[]>();
    for (const [role, globs] of effective)
      matchers.set(
        role,
        globs.map((g) => this.matcher(g)),
      );
    this.effective = effective;
    this.matchers = matchers;
    this.decided.clear();
  }

  private matcher(glob: string): (tool_id: string) => boolean {
    let m = this.globCache.get(glob);
    if (m === undefined) {
      m = compileGrantGlob(glob);
      this.globCache.set(glob, m);
    }
    return m;
  }
}

function emptyStored(): StoredGrants {
  return { version: 1, granted: {}, revoked: {} };
}

function cloneStored(s: StoredGrants): StoredGrants {
  const copy = (t: Record<string, string[]>) => Object.fromEntries(Object.entries(t).map(([k, v]) => [k, [...v]]));
  return { version: 1, granted: copy(s.granted), revoked: copy(s.revoked) };
}

function corrupt(file: string, why: string, where?: JsonSyntaxProblem): FingerError {
  return new FingerError(
    'E_STORE_UNAVAILABLE',
    `${file}: ${why} — the file is corrupt; refusing to run with unknown tool grants — fix the file, or remove it to reset grants to the defaults and config`,
    { file, ...where },
  );
}

/** Reads grants.json: a missing file is no admin changes; anything unreadable or malformed throws. */
function readStored(file: string): StoredGrants {
  let raw: string;
  try {
    raw = readFileSync(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return emptyStored();
    throw new FingerError('E_STORE_UNAVAILABLE', `cannot read ${file}: ${(e as Error).message}`, { file });
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (e) {
    throw corrupt(file, `${describeJsonSyntax(raw, e)} (not valid JSON)`, jsonSyntaxProblem(raw, e));
  }
  const o = json as Partial<StoredGrants> | null;
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw corrupt(file, 'not a JSON object');
  if (o.version !== 1) throw corrupt(file, `unknown version ${JSON.stringify(o.version)}`);
  const out = emptyStored();
  for (const key of ['granted', 'revoked'] as const) {
    const table = o[key] ?? {};
    if (typeof table !== 'object' || table === null || Array.isArray(table))
      throw corrupt(file, `"${key}" is not an object`);
    for (const [role, globs] of Object.entries(table)) {
      try {
        if (grantRole(role) !== role) throw new Error('not normalised');
        if (!Array.isArray(globs)) throw new Error('not an array');
        out[key][role] = globs.map((g: unknown) => checkGrantGlob(g as string));
      } catch {
        throw corrupt(file, `"${key}.${role}" is not a role with a list of tool globs`);
      }
    }
  }
  return out;
}

/** Writes grants.json atomically: a fresh 0600 temp file, fsync, rename over the old one. */
function writeStored(file: string, s: StoredGrants): void {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, `${JSON.stringify(s, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw new FingerError('E_STORE_UNAVAILABLE', `cannot write ${file}: ${(e as Error).message}`, { file });
  }
}
