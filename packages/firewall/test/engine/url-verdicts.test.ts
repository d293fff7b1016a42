// The firewall judges URLs (issue 23 item 5): `web.fetch`, and any tool's URL argument, to a
// loopback, link-local, private, unspecified or metadata address — after the interceptor resolved
// the host — is APPROVE with a reason naming the address. The resolver is a stub (a table).

import { mkdirSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import type { RiskAssessor } from '@finger/shell-risk';

import type { Evaluation, ToolCallFacts } from '../../src/engine/evaluation.js';
import { FirewallEngine } from '../../src/engine/firewall-engine.js';
import {
  createFirewallInterceptor,
  type FirewallCall,
  type FirewallGate,
} from '../../src/engine/firewall-interceptor.js';
import type { HostResolution } from '../../src/net/url-args.js';
import { compilePolicy } from '../../src/policy/compile-policy.js';
import { PathSandbox } from '../../src/sandbox/path-sandbox.js';
import { cleanupsAfterEach, facts, sharedAssessor, tempDir } from './helpers.js';
import { call, rejection } from './interceptor-fixtures.js';

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await sharedAssessor();
});
const cleanups = cleanupsAfterEach();

/** An MCP tool with a URL argument by name and one declared `format: "uri"`; low risk (AUTO by default). */
const CRAWLER: ToolCallFacts['tool'] = {
  risk_level: 'low',
  capability_level: 'L1',
  side_effects: false,
  input_schema: {
    type: 'object',
    properties: { endpoint: { type: 'string' }, page: { type: 'string', format: 'uri' } },
  },
};

function setup() {
  const { dir, cleanup } = tempDir('urls');
  cleanups.push(cleanup);
  const ws = path.join(dir, 'ws');
  mkdirSync(ws);
  const admin = compilePolicy({ version: 1, rules: [] }, { layer: 'admin', homeDir: dir, assessor }).policy;
  const user = compilePolicy({ version: 1, rules: [] }, { layer: 'user', homeDir: dir, assessor, admin }).policy;
  const dns = new Map<string, HostResolution>([
    ['db.internal', { addresses: ['10.0.0.1'] }],
    ['example.com', { addresses: ['93.184.216.34'] }],
  ]);
  const asked: string[][] = [];
  const engine = new FirewallEngine({
    policy: { current: () => ({ admin, user }) },
    risk: assessor,
    sandbox: new PathSandbox({ workspaceRoots: [ws], homeDir: dir }),
    hosts: {
      resolveAll: (names) => {
        asked.push([...names]);
        return Promise.resolve(new Map(names.map((n) => [n, dns.get(n) ?? { error: 'ENOTFOUND' }])));
      },
    },
  });
  /** The engine's verdict after the hosts were resolved, as the interceptor asks it. */
  const judge = async (tool_id: string, args: unknown, tool?: ToolCallFacts['tool']): Promise<Evaluation> => {
    const f = facts(tool_id, args, tool !== undefined ? { tool } : {});
    return engine.evaluate((await engine.withResolvedHosts(f)) ?? f, { record: false });
  };
  return { engine, dns, asked, judge };
}

const view = (ev: Evaluation) => ({ level: ev.level, layer: ev.layer, reasons: ev.reasons });
const NOTIFY_DEFAULT = 'NOTIFY: tool default for risk_level medium';

describe('the engine judges URL arguments after resolution', () => {
  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'reaches a cloud metadata address 169.254.169.254'],
    ['http://127.0.0.1:6379', 'reaches loopback 127.0.0.1:6379'],
    ['http://10.0.0.1/', 'reaches a private address 10.0.0.1'],
    ['http://[::1]:8080/', 'reaches loopback [::1]:8080'],
    ['http://localhost:7999/', 'reaches loopback localhost:7999'],
    ['http://db.internal/', 'reaches a private address 10.0.0.1 (db.internal)'],
    ['http://2130706433/', 'reaches loopback 127.0.0.1'],
    ['http://good.com@127.0.0.1/', 'reaches loopback 127.0.0.1'],
  ])('web.fetch %s is APPROVE: %s', async (url, reason) => {
    const { judge } = setup();
    expect(view(await judge('web.fetch', { url }))).toEqual({
      level: 'APPROVE',
      layer: 'permission',
      reasons: [`APPROVE: ${reason}`, NOTIFY_DEFAULT],
    });
  });

  it('a public URL stays as it was (NOTIFY by the tool default); an unresolvable one is CONFIRM', async () => {
    const { judge } = setup();
    expect(view(await judge('web.fetch', { url: 'https://example.com/' }))).toEqual({
      level: 'NOTIFY',
      layer: 'default',
      reasons: [NOTIFY_DEFAULT],
    });
    expect(view(await judge('web.fetch', { url: 'http://93.184.216.34/' }))).toEqual({
      level: 'NOTIFY',
      layer: 'default',
      reasons: [NOTIFY_DEFAULT],
    });
    expect(view(await judge('web.fetch', { url: 'https://nowhere.invalid/' }))).toEqual({
      level: 'CONFIRM',
      layer: 'permission',
      reasons: ['CONFIRM: cannot resolve nowhere.invalid (ENOTFOUND)', NOTIFY_DEFAULT],
    });
  });

  it("an MCP tool's URL arguments (by name, by declared format) are judged the same", async () => {
    const { judge } = setup();
    expect(view(await judge('mcp.crawler.get', { endpoint: 'http://db.internal:5432/x' }, CRAWLER))).toEqual({
      level: 'APPROVE',
      layer: 'permission',
      reasons: [
        'APPROVE: argument endpoint: reaches a private address 10.0.0.1:5432 (db.internal)',
        'AUTO: tool default for risk_level low',
      ],
    });
    expect(view(await judge('mcp.crawler.get', { page: 'http://0xa9fea9fe/' }, CRAWLER))).toEqual({
      level: 'APPROVE',
      layer: 'permission',
      reasons: [
        'APPROVE: argument page: reaches a cloud metadata address 169.254.169.254',
        'AUTO: tool default for risk_level low',
      ],
    });
    expect(view(await judge('mcp.crawler.get', { endpoint: 'https://example.com/' }, CRAWLER)).level).toBe('AUTO');
  });

  it('a host name not resolved before judging (an engine asked directly) is CONFIRM, never AUTO', () => {
    const { engine } = setup();
    const ev = engine.evaluate(facts('mcp.crawler.get', { endpoint: 'https://example.com/' }, { tool: CRAWLER }));
    expect(view(ev)).toEqual({
      level: 'CONFIRM',
      layer: 'permission',
      reasons: [
        'CONFIRM: argument endpoint: cannot resolve example.com (not resolved before judging)',
        'AUTO: tool default for risk_level low',
      ],
    });
  });

  it('nothing is resolved for a call without URL host names', () => {
    const { engine } = setup();
    expect(engine.withResolvedHosts(facts('web.fetch', { url: 'http://10.0.0.1/' }))).toBeUndefined();
    expect(engine.withResolvedHosts(facts('shell.exec', { command: 'ls' }))).toBeUndefined();
  });
});

describe('the interceptor resolves, then judges', () => {
  function intercepting(s: ReturnType<typeof setup>) {
    const held: { level: string; reasons: string[] }[] = [];
    const gate: FirewallGate = {
      hold: (ev) => {
        held.push({ level: ev.level, reasons: ev.reasons });
        return Promise.resolve({ approved: false, reason: 'no' });
      },
    };
    const ran: unknown[] = [];
    const intercept = createFirewallInterceptor({ engine: s.engine, gate });
    const run = (c: FirewallCall) =>
      intercept(c, () => {
        ran.push(c.envelope.payload);
        return Promise.resolve('ran');
      });
    return { held, ran, run, intercept };
  }

  it('web.fetch of a host that resolves to a private address is held at APPROVE; nothing runs', async () => {
    const s = setup();
    const i = intercepting(s);
    const err = await rejection(i.run(call('web.fetch', { url: 'http://db.internal/' })));
    expect(err.code).toBe('E_REJECTED_BY_HUMAN');
    expect(i.held).toEqual([
      { level: 'APPROVE', reasons: ['APPROVE: reaches a private address 10.0.0.1 (db.internal)', NOTIFY_DEFAULT] },
    ]);
    expect(i.ran).toEqual([]);
    expect(s.asked).toEqual([['db.internal']]);
  });

  it('a verdict on a resolved host is never cached: a new answer is judged at once', async () => {
    const s = setup();
    const i = intercepting(s);
    const c = () => {
      const x = call('web.fetch', { endpoint: 'https://example.com/' });
      return { ...x, resolved: { tool_id: 'mcp.crawler.get', tool: CRAWLER } };
    };
    expect(await i.run(c())).toBe('ran');
    expect(i.intercept.pass?.(c()) ?? false).toBe(false);
    s.dns.set('example.com', { addresses: ['127.0.0.1'] });
    await rejection(i.run(c()));
    expect(i.held).toEqual([
      {
        level: 'APPROVE',
        reasons: [
          'APPROVE: argument endpoint: reaches loopback 127.0.0.1 (example.com)',
          'AUTO: tool default for risk_level low',
        ],
      },
    ]);
    expect(i.ran).toEqual([{ endpoint: 'https://example.com/' }]);
  });
});
