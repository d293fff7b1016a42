// PolicyStore: the two policy layers of §3.8. AdminPolicy is read once from
// `FINGER_HOME/config/admin-policy.json` and never changes at run time; UserPolicy lives in
// `FINGER_HOME/state/user-policy.json`, changes only through this store, and every change is
// appended to the audit log before it takes effect. A policy that does not validate refuses to
// start (E_INVALID_ARGS listing every problem) — finger never runs open on a broken policy.

import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

import { describeJsonSyntax, FingerError, jsonSyntaxProblem } from '@finger/protocol';
import { atomicWriteFile } from '@finger/workspace';

import type { AuditActor, AuditRecord } from '../audit/audit-entry.js';
import { type CompileContext, compilePolicy } from './compile-policy.js';
import type { CompiledPolicy } from './compiled-policy.js';
import type { EffectivePolicy } from './evaluate-policy.js';
import {
  emptyPolicyDocument,
  type KnownTool,
  type PolicyDocument,
  type PolicyRule,
  type PolicyWarning,
} from './policy-types.js';
import { policyWarnings } from './policy-warnings.js';

/** Where `policy.changed` entries go (AuditLog satisfies it). */
export interface PolicyAudit {
  append(record: AuditRecord): Promise<unknown>;
}

/** How a store is opened (the daemon: `home` = FINGER_HOME, `audit` = the AuditLog). */
export interface PolicyStoreOptions {
  /** FINGER_HOME; gives the default paths of both files. */
  home?: string;
  /** Admin policy file; when given explicitly it must exist. Default `<home>/config/admin-policy.json` (missing: no rules). */
  adminPath?: string;
  /** User policy file. Default `<home>/state/user-policy.json`. Without either, user changes live in memory. */
  userPath?: string;
  /** Parses commands in rule examples (the RiskAssessor). */
  assessor: CompileContext['assessor'];
  /** The user's home directory, for `~`. */
  homeDir: string;
  /** Known tools, for the never-matches warnings. */
  tools?: readonly KnownTool[];
  /** Required for any UserPolicy change: changes are refused (E_STORE_UNAVAILABLE) without it. */
  audit?: PolicyAudit;
}

/**
 * Storage seam of distributed mode: where UserPolicy changes go instead of the user policy file
 * (the daemon's Redis store). `save` must be durable before it resolves and refuse a change made
 * over a stale policy (`previous_digest` is not the shared one) with E_CONFLICT; any rejection
 * leaves the policy unchanged.
 */
export interface UserPolicyPersistence {
  save(document: PolicyDocument, previous_digest: string, next_digest: string): Promise<void>;
}

/** Who changes the UserPolicy, and why (recorded in the audit entry). */
export interface PolicyChange {
  actor: AuditActor;
  reason?: string;
  request_id?: string;
}

/** The prefix of rules the adaptation adds (`adaptation:<tool>`). */
export const ADAPTATION_RULE_PREFIX = 'adaptation:';

function invalid(
  message: string,
  layer: string,
  source: string,
  issues: { path: string; message: string }[],
): FingerError {
  return new FingerError('E_INVALID_ARGS', message, { layer, source, issues });
}

function parseJson(text: string, layer: string, source: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const at = jsonSyntaxProblem(text, e);
    const msg = `${describeJsonSyntax(text, e)} (not valid JSON)`;
    throw new FingerError('E_INVALID_ARGS', `${source}: ${msg}: invalid ${layer} policy`, {
      layer,
      source,
      issues: [{ path: '$', message: msg }],
      ...at,
    });
  }
}

function readPolicyFile(file: string, layer: 'admin' | 'user', mustExist: boolean): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !mustExist) return emptyPolicyDocument();
    if (code === 'ENOENT')
      throw invalid(`the ${layer} policy file ${file} does not exist`, layer, file, [
        { path: '$', message: 'file not found' },
      ]);
    throw new FingerError('E_STORE_UNAVAILABLE', `cannot read the ${layer} policy ${file}: ${(e as Error).message}`, {
      file,
    });
  }
  return parseJson(text, layer, file);
}

/** The admin and user policy layers; the FirewallEngine reads {@link current} on every call. */
export class PolicyStore {
  readonly adminPath: string | undefined;
  readonly userPath: string | undefined;
  #admin: CompiledPolicy;
  #user: CompiledPolicy;
  #effective: EffectivePolicy;
  #warnings: PolicyWarning[];
  #tools: readonly KnownTool[] | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  #persistence: UserPolicyPersistence | undefined;
  readonly #o: PolicyStoreOptions;

  private constructor(
    o: PolicyStoreOptions,
    admin: { policy: CompiledPolicy; warnings: PolicyWarning[] },
    user: { policy: CompiledPolicy; warnings: PolicyWarning[] },
  ) {
    this.#o = o;
    this.adminPath =
      o.adminPath ?? (o.home !== undefined ? path.join(o.home, 'config', 'admin-policy.json') : undefined);
    this.userPath = o.userPath ?? (o.home !== undefined ? path.join(o.home, 'state', 'user-policy.json') : undefined);
    this.#admin = admin.policy;
    this.#user = user.policy;
    this.#effective = Object.freeze({ admin: admin.policy, user: user.policy });
    this.#warnings = [...admin.warnings, ...user.warnings];
    this.#tools = o.tools;
  }

  /**
   * Reads and compiles both layers (synchronously: it runs once at start). Throws E_INVALID_ARGS
   * (details `{layer, source, issues}`) for a policy that does not validate or whose rule
   * examples fail, or for an explicit `adminPath` that does not exist; E_STORE_UNAVAILABLE when
   * a file cannot be read.
   */
  static load(options: PolicyStoreOptions): PolicyStore {
    const adminPath =
      options.adminPath ??
      (options.home !== undefined ? path.join(options.home, 'config', 'admin-policy.json') : undefined);
    const userPath =
      options.userPath ??
      (options.home !== undefined ? path.join(options.home, 'state', 'user-policy.json') : undefined);
    const base = {
      homeDir: options.homeDir,
      assessor: options.assessor,
      ...(options.tools !== undefined ? { tools: options.tools } : {}),
    };
    const adminDoc =
      adminPath === undefined
        ? emptyPolicyDocument()
        : readPolicyFile(adminPath, 'admin', options.adminPath !== undefined);
    const admin = compilePolicy(adminDoc, {
      ...base,
      layer: 'admin',
      ...(adminPath !== undefined ? { source: adminPath } : {}),
    });
    const userDoc = userPath === undefined ? emptyPolicyDocument() : readPolicyFile(userPath, 'user', false);
    const user = compilePolicy(userDoc, {
      ...base,
      layer: 'user',
      admin: admin.policy,
      ...(userPath !== undefined ? { source: userPath } : {}),
    });
    return new PolicyStore(options, admin, user);
  }

  /** Both compiled layers (one frozen object per policy version). */
  current(): EffectivePolicy {
    return this.#effective;
  }

  /** The documents as loaded, and the loader warnings (`myfinger policy show`, `GET /v1/policy`). */
  show(): { admin: PolicyDocument; user: PolicyDocument; warnings: PolicyWarning[] } {
    return { admin: this.#admin.document, user: this.#user.document, warnings: [...this.#warnings] };
  }

  /** Loader warnings of both layers (rules that can never match or never change a verdict). */
  warnings(): PolicyWarning[] {
    return [...this.#warnings];
  }

  /** Recomputes the warnings against a new tool list (the registry changed). */
  setTools(tools: readonly KnownTool[]): PolicyWarning[] {
    this.#tools = tools;
    const ctx = (layer: 'admin' | 'user'): CompileContext => ({
      layer,
      homeDir: this.#o.homeDir,
      assessor: this.#o.assessor,
      tools,
      admin: this.#admin,
    });
    this.#warnings = [...policyWarnings(this.#admin, ctx('admin')), ...policyWarnings(this.#user, ctx('user'))];
    return this.warnings();
  }

  /**
   * Replaces the whole UserPolicy (`PUT /v1/policy`, `myfinger policy set`). Validated and
   * compiled first (E_INVALID_ARGS: nothing changes), audited (E_STORE_UNAVAILABLE when the
   * entry cannot be written: nothing changes), persisted atomically, then in force. Returns the
   * new warnings.
   */
  set(doc: unknown, change: PolicyChange): Promise<PolicyWarning[]> {
    return this.#serial(() => this.#apply(doc, change, 'set', {}));
  }

  /** Adds a user rule, or replaces the user rule with the same `id`. Audited like {@link set}. */
  addRule(rule: PolicyRule, change: PolicyChange): Promise<PolicyWarning[]> {
    return this.#serial(() => {
      const doc = structuredClone(this.#user.document) as PolicyDocument;
      const at = rule.id === undefined ? -1 : doc.rules.findIndex((r) => r.id === rule.id);
      if (at >= 0) doc.rules[at] = rule;
      else doc.rules.push(rule);
      return this.#apply(doc, change, at >= 0 ? 'replace_rule' : 'add_rule', { rule });
    });
  }

  /** Removes the user rule `id`; false when there is none (nothing is audited then). */
  removeRule(id: string, change: PolicyChange): Promise<boolean> {
    return this.#serial(async () => {
      const doc = structuredClone(this.#user.document) as PolicyDocument;
      const at = doc.rules.findIndex((r) => r.id === id);
      if (at < 0) return false;
      doc.rules.splice(at, 1);
      await this.#apply(doc, change, 'remove_rule', { rule_id: id });
      return true;
    });
  }

  /** Reverts the UserPolicy to empty (`myfinger policy reset`); audited. */
  reset(change: PolicyChange): Promise<void> {
    return this.#serial(async () => {
      await this.#apply(emptyPolicyDocument(), change, 'reset', {});
    });
  }

  /** Digest of the UserPolicy in force. */
  userDigest(): string {
    return this.#user.digest;
  }

  /** Sends later UserPolicy changes to `p` instead of the user policy file (distributed mode). */
  setUserPersistence(p: UserPolicyPersistence | undefined): void {
    this.#persistence = p;
  }

  /**
   * Puts in force a UserPolicy changed on another daemon (validated and audited there; not
   * audited again). Compiled here first: E_INVALID_ARGS leaves the current policy. Returns the
   * new warnings.
   */
  applyShared(doc: unknown): Promise<PolicyWarning[]> {
    return this.#serial(async () => {
      const compiled = compilePolicy(doc, {
        layer: 'user',
        homeDir: this.#o.homeDir,
        assessor: this.#o.assessor,
        admin: this.#admin,
        ...(this.#tools !== undefined ? { tools: this.#tools } : {}),
        source: 'shared',
      });
      this.#install(compiled);
      return compiled.warnings;
    });
  }

  /** Tools the adaptation escalated and has not reverted (rules `adaptation:<tool>`). */
  escalatedTools(): string[] {
    return this.#user.document.rules
      .filter((r) => r.id?.startsWith(ADAPTATION_RULE_PREFIX) === true)
      .map((r) => r.id!.slice(ADAPTATION_RULE_PREFIX.length));
  }

  /** The adaptation's one-way tightening: rule `adaptation:<tool>` at `level` for `tool`. */
  escalate(tool: string, level: 'CONFIRM' | 'APPROVE' | 'DENY', change: PolicyChange): Promise<PolicyWarning[]> {
    const reason = change.reason ?? `escalated by adaptation after repeated rejections`;
    return this.addRule({ id: `${ADAPTATION_RULE_PREFIX}${tool}`, tool, level, reason }, change);
  }

  /** Removes the adaptation's escalation of `tool`; false when there is none. */
  revertEscalation(tool: string, change: PolicyChange): Promise<boolean> {
    return this.removeRule(`${ADAPTATION_RULE_PREFIX}${tool}`, change);
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #apply(
    doc: unknown,
    change: PolicyChange,
    kind: string,
    extra: Record<string, unknown>,
  ): Promise<PolicyWarning[]> {
    const audit = this.#o.audit;
    if (audit === undefined)
      throw new FingerError('E_STORE_UNAVAILABLE', 'user policy changes need an audit log, and none is configured', {
        change: kind,
      });
    const compiled = compilePolicy(doc, {
      layer: 'user',
      homeDir: this.#o.homeDir,
      assessor: this.#o.assessor,
      admin: this.#admin,
      ...(this.#tools !== undefined ? { tools: this.#tools } : {}),
      ...(this.userPath !== undefined ? { source: this.userPath } : {}),
    });
    const details: Record<string, unknown> = {
      layer: 'user',
      change: kind,
      before: this.#user.digest,
      after: compiled.policy.digest,
      rules: compiled.policy.document.rules.length,
      ...extra,
    };
    if (change.reason !== undefined) details.reason = change.reason;
    const record: AuditRecord = { type: 'policy.changed', actor: change.actor, details };
    if (change.request_id !== undefined) record.request_id = change.request_id;
    await audit.append(record);
    if (this.#persistence !== undefined) {
      try {
        await this.#persistence.save(compiled.policy.document, this.#user.digest, compiled.policy.digest);
      } catch (e) {
        await audit
          .append({ ...record, details: { ...details, failed: true, error: (e as Error).message } })
          .catch(() => undefined);
        throw e;
      }
    } else if (this.userPath !== undefined) {
      try {
        await mkdir(path.dirname(this.userPath), { recursive: true, mode: 0o700 });
        await atomicWriteFile(this.userPath, Buffer.from(`${JSON.stringify(compiled.policy.document, null, 2)}\n`), {
          mode: 0o600,
        });
      } catch (e) {
        await audit
          .append({ ...record, details: { ...details, failed: true, error: (e as Error).message } })
          .catch(() => undefined);
        throw new FingerError(
          'E_STORE_UNAVAILABLE',
          `cannot write the user policy ${this.userPath}: ${(e as Error).message}`,
          { file: this.userPath },
        );
      }
    }
    this.#install(compiled);
    return compiled.warnings;
  }

  #install(compiled: { policy: CompiledPolicy; warnings: PolicyWarning[] }): void {
    this.#user = compiled.policy;
    this.#effective = Object.freeze({ admin: this.#admin, user: compiled.policy });
    this.#warnings = [...this.#warnings.filter((w) => w.layer === 'admin'), ...compiled.warnings];
  }
}
