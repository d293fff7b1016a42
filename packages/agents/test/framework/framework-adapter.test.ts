import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { MessageHub } from '@finger/hub';
import type { Principal } from '@finger/protocol';

import { FrameworkAdapter, registerAgent } from '../../src/index.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/framework-agent.mjs', import.meta.url));
const ADMIN: Principal = { kind: 'human', id: 'admin', roles: ['admin'] };

describe('FrameworkAdapter', () => {
  let hub: MessageHub;
  let adapter: FrameworkAdapter;

  beforeEach(async () => {
    hub = new MessageHub();
    adapter = new FrameworkAdapter({
      id: 'sample',
      role: 'reviewer',
      command: [process.execPath, FIXTURE],
      baseEnv: { PATH: process.env.PATH },
    });
    await registerAgent(hub, adapter);
  });
  afterEach(() => hub.close(0));

  it('is a hub target of kind agent like any other; handle calls reach the child and its result comes back', async () => {
    expect(hub.registry.get('sample')).toMatchObject({
      kind: 'agent',
      runtime: 'stdio',
      tools: [{ name: 'handle' }],
    });
    const out = await hub.request({ target: 'sample', payload: { text: 'hi' }, source: ADMIN, session_id: 's1' });
    expect(out).toEqual({ framework: 'sample', answer: 'sample agent heard: hi', session_id: 's1' });
    expect(await adapter.health()).toEqual({ ok: true });
  });

  it("the child's error code reaches the caller", async () => {
    await expect(
      hub.request({ target: 'sample.handle', payload: { text: 'fail' }, source: ADMIN }),
    ).rejects.toMatchObject({ code: 'E_ROUTE_FAILED', message: 'the framework gave up' });
  });

  it('a call the child never answers ends at its deadline with E_TIMEOUT, and progress reaches the caller', async () => {
    const progress: string[] = [];
    await expect(
      hub.request({
        target: 'sample',
        payload: { text: 'slow' },
        source: ADMIN,
        timeout_ms: 300,
        onProgress: (m) => progress.push(m),
      }),
    ).rejects.toMatchObject({ code: 'E_TIMEOUT' });
    expect(progress).toEqual(['thinking']);
    // the child still answers the next call
    await expect(hub.request({ target: 'sample', payload: { text: 'again' }, source: ADMIN })).resolves.toMatchObject({
      answer: 'sample agent heard: again',
    });
  });

  it('after shutdown, handle rejects with E_PROVIDER_CLOSED', async () => {
    await adapter.shutdown();
    await expect(hub.request({ target: 'sample', payload: {}, source: ADMIN })).rejects.toMatchObject({
      code: 'E_PROVIDER_CLOSED',
    });
  });
});
