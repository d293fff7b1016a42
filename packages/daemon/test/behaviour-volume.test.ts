import { Agent, request } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type Clock, systemClock } from '@finger/hub';
import { waitFor } from '@finger/testkit';

import { startDaemon, type TestDaemon } from './helpers.js';

// Issue 27, "volume is not a loop": the behaviour layer's volume limit counts agents' calls per
// call shape; a person's (or a service's) token sending distinct calls is not rate-held, while an
// agent repeating one call still trips the loop detector. Real fastify on loopback.

/** Time that stands still (every call falls in one behaviour window); timers run for real. */
const frozen: Clock = { ...systemClock, now: () => Date.UTC(2026, 0, 2, 3, 4, 5) };

let d: TestDaemon;
let url: string;
const agent = new Agent({ keepAlive: true, maxSockets: 16 });

beforeAll(async () => {
  d = await startDaemon({}, { clock: frozen });
  url = (await d.app.listen()).url;
});
afterAll(async () => {
  agent.destroy();
  await d.close();
});

async function post(token: string, body: unknown): Promise<{ status: number; json: any }> {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}/v1/messages`,
      {
        method: 'POST',
        agent,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

describe('behaviour layer: volume is not a loop', () => {
  it('10,000 /v1/messages calls with distinct payloads from an operator token in one window complete without a hold', async () => {
    const operator = await d.token('operator', 'volume-operator');
    const N = 10_000;
    let next = 0;
    const failures: string[] = [];
    const worker = async (): Promise<void> => {
      while (next < N) {
        const i = next++;
        const r = await post(operator, { target: 'echo', payload: { text: `call ${i}` }, session_id: 'load' });
        if (r.status !== 200 || r.json.status !== 'succeeded' || r.json.result?.text !== `call ${i}`)
          failures.push(`${i}: ${r.status} ${JSON.stringify(r.json)}`);
        if (failures.length > 5) return;
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    expect(failures).toEqual([]);
    const pending = await d.call('GET', '/v1/approvals');
    expect(pending.json.approvals).toEqual([]);
  }, 120_000);

  it('an agent repeating the same call still trips the loop detector (APPROVE hold)', async () => {
    const agent = await d.token('agent:executor', 'volume-agent');
    const body = { target: 'echo', payload: { text: 'again' }, session_id: 'looping', blocking: false };
    for (let i = 0; i < 5; i++) expect((await post(agent, { ...body, blocking: true })).json.status).toBe('succeeded');
    const sixth = await post(agent, body);
    expect(sixth.status).toBe(202);
    const pending = await waitFor('the held call', async () => {
      const r = await d.call('GET', '/v1/approvals');
      return r.json.approvals.length > 0 ? r : undefined;
    });
    expect(pending.json.approvals).toHaveLength(1);
    expect(pending.json.approvals[0]).toMatchObject({
      tool_id: 'echo.echo',
      level: 'APPROVE',
      facts: { principal: { kind: 'agent', id: 'volume-agent' }, session_id: 'looping' },
    });
    expect(pending.json.approvals[0].evaluation.reasons[0]).toBe(
      'APPROVE: the same call (echo.echo, same arguments) 6 times within 60 s (limit 5)',
    );
    const id = pending.json.approvals[0].id as string;
    expect((await d.call('POST', `/v1/approvals/${id}`, { body: { decision: 'reject' } })).status).toBe(200);
  });
});
