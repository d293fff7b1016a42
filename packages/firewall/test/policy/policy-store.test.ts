import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { FingerError } from '@finger/protocol';
import type { RiskAssessor } from '@finger/shell-risk';

import type { AuditRecord } from '../../src/audit/audit-entry.js';
import { AuditLog } from '../../src/audit/audit-log.js';
import { evaluatePolicy } from '../../src/policy/evaluate-policy.js';
import { PolicyStore } from '../../src/policy/policy-store.js';
import { cleanupsAfterEach, sharedAssessor, tempDir, tool } from '../engine/helpers.js';

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await sharedAssessor();
});

const cleanups = cleanupsAfterEach();

const ACTOR = { kind: 'human', id: 'alice' };
const NO_RM_RF = { id: 'no-rm-rf', tool: 'shell.exec', match: { command: 'rm -rf *' }, level: 'DENY' };

function home(admin?: unknown): string {
  const { dir, cleanup } = tempDir('policy-store');
  cleanups.push(cleanup);
  if (admin !== undefined) {
    mkdirSync(path.join(dir, 'config'), { recursive: true });
    writeFileSync(path.join(dir, 'config', 'admin-policy.json'), JSON.stringify(admin));
  }
  return dir;
}

/** An audit sink that records what the store's policy looked like while the entry was written. */
function recordingAudit(store: () => PolicyStore | undefined) {
  const seen: { record: AuditRecord; userRulesAtAppend: number }[] = [];
  return {
    seen,
    append(record: AuditRecord) {
      seen.push({ record, userRulesAtAppend: store()?.current().user.rules.length ?? -1 });
      return Promise.resolve();
    },
  };
}

function shellLevel(store: PolicyStore, command: string) {
  return evaluatePolicy(
    store.current(),
    { tool_id: 'shell.exec', args: { command }, tool: tool('shell.exec') },
    assessor.assess(command),
  ).level;
}

describe('PolicyStore: loading', () => {
  it('reads the admin policy from <home>/config and starts with an empty user policy', () => {
    const store = PolicyStore.load({ home: home({ version: 1, rules: [NO_RM_RF] }), homeDir: '/home/alice', assessor });
    expect(store.current().admin.rules.map((r) => r.id)).toEqual(['no-rm-rf']);
    expect(store.show().user).toEqual({ version: 1, rules: [] });
    expect(shellLevel(store, 'rm -fr /')).toBe('DENY');
  });

  it('refuses to start on an invalid admin policy (E_INVALID_ARGS with every issue) instead of running open', () => {
    const h = home({
      version: 1,
      rules: [
        { tool: 'shell.exec', level: 'NEVER' },
        {
          tool: 'x',
          level: 'DENY',
          examples: { match: [{ tool: 'x', args: {} }], not_match: [{ tool: 'x', args: {} }] },
        },
      ],
    });
    let err: { code?: string; details?: unknown } = {};
    try {
      PolicyStore.load({ home: h, homeDir: '/home/alice', assessor });
    } catch (e) {
      err = e as typeof err;
    }
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.details).toEqual({
      layer: 'admin',
      source: path.join(h, 'config', 'admin-policy.json'),
      issues: [{ path: '$.rules[0].level', message: 'must be one of "AUTO", "NOTIFY", "CONFIRM", "APPROVE", "DENY"' }],
    });
  });

  it('refuses malformed JSON and an explicit admin path that does not exist', () => {
    const h = home();
    mkdirSync(path.join(h, 'config'));
    writeFileSync(path.join(h, 'config', 'admin-policy.json'), '{"version": 1,\n "rules": [,]}');
    expect(() => PolicyStore.load({ home: h, homeDir: '/h', assessor })).toThrow(
      expect.objectContaining({
        code: 'E_INVALID_ARGS',
        message: `${path.join(h, 'config', 'admin-policy.json')}: line 2 column 12: Unexpected token ',' (not valid JSON): invalid admin policy`,
      }),
    );
    expect(() => PolicyStore.load({ adminPath: path.join(h, 'nope.json'), homeDir: '/h', assessor })).toThrow(
      expect.objectContaining({
        code: 'E_INVALID_ARGS',
        message: `the admin policy file ${path.join(h, 'nope.json')} does not exist`,
      }),
    );
  });

  it('returns loader warnings against the known tools', () => {
    const store = PolicyStore.load({
      home: home({ version: 1, rules: [{ id: 'typo', tool: 'shel.exec', level: 'DENY' }] }),
      homeDir: '/h',
      assessor,
      tools: [{ id: 'shell.exec' }],
    });
    expect(store.warnings()).toEqual([
      { layer: 'admin', rule: 'typo', message: 'tool glob "shel.exec" matches no known tool' },
    ]);
    expect(store.setTools([{ id: 'shel.exec' }])).toEqual([]);
  });
});

describe('PolicyStore: user policy changes', () => {
  it('audits a change BEFORE it takes effect, persists it atomically, and reloads it', async () => {
    const h = home({ version: 1, rules: [] });
    const ref: { store?: PolicyStore } = {};
    const audit = recordingAudit(() => ref.store);
    const store = PolicyStore.load({ home: h, homeDir: '/h', assessor, audit });
    ref.store = store;
    const rule = { id: 'careful-ls', tool: 'shell.exec', match: { command: 'ls *' }, level: 'CONFIRM' as const };
    await store.addRule(rule, { actor: ACTOR, reason: 'testing', request_id: 'req-1' });
    expect(audit.seen).toHaveLength(1);
    expect(audit.seen[0]!.userRulesAtAppend).toBe(0);
    expect(audit.seen[0]!.record).toEqual({
      type: 'policy.changed',
      actor: ACTOR,
      request_id: 'req-1',
      details: {
        layer: 'user',
        change: 'add_rule',
        before: expect.stringMatching(/^[0-9a-f]{64}$/),
        after: store.current().user.digest,
        rules: 1,
        rule,
        reason: 'testing',
      },
    });
    expect(shellLevel(store, 'ls -la')).toBe('CONFIRM');
    const file = path.join(h, 'state', 'user-policy.json');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ version: 1, rules: [rule] });
    const reloaded = PolicyStore.load({ home: h, homeDir: '/h', assessor });
    expect(shellLevel(reloaded, 'ls -la')).toBe('CONFIRM');
  });

  it('a user AUTO rule for `rm -rf *` cannot loosen the admin DENY', async () => {
    const store = PolicyStore.load({
      home: home({ version: 1, rules: [NO_RM_RF] }),
      homeDir: '/h',
      assessor,
      audit: recordingAudit(() => undefined),
    });
    await store.set(
      { version: 1, rules: [{ id: 'let-me', tool: 'shell.exec', match: { command: 'rm -rf *' }, level: 'AUTO' }] },
      { actor: ACTOR },
    );
    expect(shellLevel(store, 'rm -rf *')).toBe('DENY');
    expect(shellLevel(store, 'rm -rf build')).toBe('DENY');
  });

  it('changes nothing when the audit entry cannot be written (E_STORE_UNAVAILABLE)', async () => {
    const h = home({ version: 1, rules: [] });
    const failing = {
      append: () => Promise.reject(Object.assign(new Error('disk full'), { code: 'E_STORE_UNAVAILABLE' })),
    };
    const store = PolicyStore.load({ home: h, homeDir: '/h', assessor, audit: failing });
    await expect(store.addRule({ id: 'x', tool: 'fs.*', level: 'DENY' }, { actor: ACTOR })).rejects.toMatchObject({
      code: 'E_STORE_UNAVAILABLE',
    });
    expect(store.current().user.rules).toEqual([]);
    expect(() => readFileSync(path.join(h, 'state', 'user-policy.json'))).toThrow();
  });

  it('refuses any change without an audit log, and an invalid user policy without auditing it', async () => {
    const h = home();
    const bare = PolicyStore.load({ home: h, homeDir: '/h', assessor });
    await expect(bare.reset({ actor: ACTOR })).rejects.toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
    const audit = recordingAudit(() => undefined);
    const store = PolicyStore.load({ home: h, homeDir: '/h', assessor, audit });
    await expect(
      store.set({ version: 1, rules: [{ tool: 'fs.*', level: 'SOMETIMES' }] }, { actor: ACTOR }),
    ).rejects.toMatchObject({
      code: 'E_INVALID_ARGS',
      details: {
        layer: 'user',
        issues: [
          { path: '$.rules[0].level', message: 'must be one of "AUTO", "NOTIFY", "CONFIRM", "APPROVE", "DENY"' },
        ],
      },
    });
    expect(audit.seen).toEqual([]);
  });

  it('reset reverts to empty; escalate/revert manage adaptation rules; all in a real hash-chained audit log', async () => {
    const h = home();
    const log = await AuditLog.open({ dir: path.join(h, 'audit') });
    try {
      const store = PolicyStore.load({ home: h, homeDir: '/h', assessor, audit: log });
      await store.escalate('fs.write', 'APPROVE', {
        actor: { kind: 'system', id: 'adaptation' },
        reason: '3 rejections in a row',
      });
      expect(store.escalatedTools()).toEqual(['fs.write']);
      expect(
        evaluatePolicy(store.current(), {
          tool_id: 'fs.write',
          args: { path: 'a', content: '' },
          tool: tool('fs.write'),
        }).level,
      ).toBe('APPROVE');
      expect(await store.revertEscalation('fs.write', { actor: { kind: 'system', id: 'adaptation' } })).toBe(true);
      expect(await store.revertEscalation('fs.write', { actor: { kind: 'system', id: 'adaptation' } })).toBe(false);
      await store.addRule({ id: 'u1', tool: 'web.*', level: 'CONFIRM' }, { actor: ACTOR });
      await store.reset({ actor: ACTOR });
      expect(store.show().user).toEqual({ version: 1, rules: [] });
      const entries = await log.read({ type: 'policy.changed' });
      expect(entries.map((e) => [e.actor?.id, e.details?.change, e.details?.rules])).toEqual([
        ['adaptation', 'add_rule', 1],
        ['adaptation', 'remove_rule', 0],
        ['alice', 'add_rule', 1],
        ['alice', 'reset', 0],
      ]);
      expect(await log.verify()).toMatchObject({ ok: true, entries: 4 });
    } finally {
      await log.close();
    }
  });
});

describe('PolicyStore: the storage seam of distributed mode', () => {
  it('sends changes to the persistence instead of the file, with the digests before and after', async () => {
    const h = home();
    const audit = recordingAudit(() => undefined);
    const store = PolicyStore.load({ home: h, homeDir: '/home/alice', assessor, audit });
    const saved: { rules: number; prev: string; next: string }[] = [];
    store.setUserPersistence({
      save: async (doc, prev, next) => void saved.push({ rules: doc.rules.length, prev, next }),
    });
    const before = store.userDigest();
    await store.addRule({ ...NO_RM_RF, level: 'DENY' }, { actor: ACTOR });
    expect(saved).toEqual([{ rules: 1, prev: before, next: store.userDigest() }]);
    expect(() => readFileSync(path.join(h, 'state', 'user-policy.json'))).toThrow();
  });

  it('leaves the policy unchanged and audits the failure when the persistence refuses', async () => {
    const audit = recordingAudit(() => undefined);
    const store = PolicyStore.load({ home: home(), homeDir: '/home/alice', assessor, audit });
    store.setUserPersistence({
      save: () => Promise.reject(new FingerError('E_CONFLICT', 'stale')),
    });
    await expect(store.addRule({ ...NO_RM_RF, level: 'DENY' }, { actor: ACTOR })).rejects.toMatchObject({
      code: 'E_CONFLICT',
    });
    expect(store.show().user.rules).toEqual([]);
    expect(audit.seen.map((s) => s.record.details?.failed)).toEqual([undefined, true]);
  });

  it('applies a shared UserPolicy without auditing it again; refuses one that does not compile', async () => {
    const audit = recordingAudit(() => undefined);
    const store = PolicyStore.load({ home: home(), homeDir: '/home/alice', assessor, audit });
    await store.applyShared({ version: 1, rules: [NO_RM_RF] });
    expect(shellLevel(store, 'rm -rf /tmp/x')).toBe('DENY');
    expect(audit.seen).toEqual([]);
    await expect(store.applyShared({ version: 1, rules: [{ tool: 'x', level: 'NOPE' }] })).rejects.toMatchObject({
      code: 'E_INVALID_ARGS',
    });
    expect(store.show().user.rules).toEqual([NO_RM_RF]);
  });
});
