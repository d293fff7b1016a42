import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { AuditLog } from '@finger/firewall';
import { ToolGrantProfile } from '@finger/firewall';
import { MessageHub, silentLogger } from '@finger/hub';

import { wireAgents } from '../src/agents-wiring.js';
import { DEFAULT_CONFIG } from '../src/config.js';

const audit = { append: () => Promise.resolve({}) } as unknown as AuditLog;

describe('wireAgents', () => {
  let hub: MessageHub;
  beforeEach(() => {
    hub = new MessageHub();
  });
  afterEach(() => hub.close(0));

  const wire = (llm: Partial<(typeof DEFAULT_CONFIG)['llm']>) =>
    wireAgents({
      hub,
      config: { llm: { ...DEFAULT_CONFIG.llm, ...llm }, router: DEFAULT_CONFIG.router },
      grants: new ToolGrantProfile(),
      audit,
      logger: silentLogger,
    });

  it('offline by default: the supervisor is a kind-agent target whose handle lease covers one routing', async () => {
    const w = await wire({});
    expect(w.model).toMatchObject({ provider: 'offline', model: 'offline-router' });
    expect(w.supervisorTarget).toBe('supervisor');
    expect(w.routeTimeoutMs).toBe(30_000);
    expect(hub.registry.get('supervisor')).toMatchObject({
      kind: 'agent',
      grants: [],
      tools: [{ name: 'handle', risk_level: 'low', side_effects: false, timeout_ms: 30_000 }],
    });
  });

  it('a model provider: each ask may take llm.timeout_ms, re-asks included', async () => {
    const w = await wire({ provider: 'openai', base_url: 'http://127.0.0.1:9/v1', model: 'm', timeout_ms: 10_000 });
    expect(w.model).toMatchObject({ provider: 'openai', model: 'm' });
    expect(w.routeTimeoutMs).toBe(10_000 * 3 + 30_000);
  });

  it('a provider without what it needs refuses the start with E_INVALID_ARGS naming the key', async () => {
    await expect(wire({ provider: 'anthropic', model: 'claude' })).rejects.toMatchObject({
      code: 'E_INVALID_ARGS',
      details: { key: 'llm.api_key' },
    });
    await expect(wire({ provider: 'openai' })).rejects.toMatchObject({
      code: 'E_INVALID_ARGS',
      details: { key: 'llm.model' },
    });
    expect(hub.registry.get('supervisor')).toBeUndefined();
  });
});
