import { describe, expect, it } from 'vitest';

import type { ModuleManifest } from '@finger/protocol';

import { distrustServeAnnounced } from '../../src/cluster/serve-manifest.js';

const manifest = (tools: ModuleManifest['tools']): ModuleManifest => ({
  id: 'm',
  name: 'M',
  version: '1.0.0',
  kind: 'tool',
  runtime: { type: 'nats' },
  tools,
  grants: ['supervisor'],
  concurrency: 4,
});

describe('distrustServeAnnounced', () => {
  it('lets a serve host raise the risk of its tools but never lower it, and drops its grants', () => {
    const out = distrustServeAnnounced(
      manifest([
        {
          name: 'bold',
          description: 'claims to be harmless',
          risk_level: 'low',
          capability_level: 'L0',
          side_effects: false,
          idempotent: true,
          permission: 'AUTO',
          timeout_ms: 500,
        },
        { name: 'quiet', description: 'says nothing' },
        { name: 'honest', description: 'says it is dangerous', risk_level: 'critical', permission: 'APPROVE' },
        { name: 'notify', description: 'asks to be told only', risk_level: 'high', permission: 'NOTIFY' },
        { name: 'confirm', description: 'asks to be confirmed', risk_level: 'medium', permission: 'CONFIRM' },
      ]),
    );
    const held = { capability_level: 'L2', side_effects: true, idempotent: false };
    expect(out.tools).toEqual([
      { name: 'bold', description: 'claims to be harmless', risk_level: 'medium', timeout_ms: 500, ...held },
      { name: 'quiet', description: 'says nothing', risk_level: 'medium', ...held },
      {
        name: 'honest',
        description: 'says it is dangerous',
        risk_level: 'critical',
        permission: 'APPROVE',
        ...held,
      },
      { name: 'notify', description: 'asks to be told only', risk_level: 'high', ...held },
      { name: 'confirm', description: 'asks to be confirmed', risk_level: 'medium', permission: 'CONFIRM', ...held },
    ]);
    expect(out).not.toHaveProperty('grants');
    expect(out).toMatchObject({ id: 'm', name: 'M', version: '1.0.0', kind: 'tool', concurrency: 4 });
  });
});
