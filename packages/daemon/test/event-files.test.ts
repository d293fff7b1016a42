// The daemon's event files keep what a reader of the history needs and not a held call's
// arguments or an input's text (event-stored-form.ts): live subscribers get the events whole,
// the files and replay the stored form; closed segments are gzip'd (FileEventStore).

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { FingerApp } from '@finger/daemon';
import { type Evaluation, HumanGate, type ToolCallFacts } from '@finger/firewall';
import type { FingerEvent } from '@finger/protocol';

import { startDaemon, type TestDaemon } from './helpers.js';

const MARKER = 'marker-7f3a9c-not-for-files';

function evaluation(): Evaluation {
  return {
    decision_id: 'dec-ev',
    level: 'CONFIRM',
    action: 'hold',
    layer: 'path_sandbox',
    matched_rules: [],
    reasons: ['fs.write outside writable_paths'],
    args: { path: '/etc/motd', content: MARKER },
    preview: { kind: 'diff', text: `+${MARKER}`, file_sha256: 'e'.repeat(64), path: '/etc/motd' },
  };
}

function facts(): ToolCallFacts {
  return {
    tool_id: 'fs.write',
    args: { path: '/etc/motd', content: MARKER },
    principal: { kind: 'agent', id: 'exec', roles: ['agent:executor'] },
    session_id: 'sess-ev',
    request_id: 'req-ev',
    correlation_id: 'corr-ev',
    direct: false,
    tool: { risk_level: 'medium', capability_level: 'L1', side_effects: true },
  };
}

let d: TestDaemon;
let gate: HumanGate;
let app: FingerApp | undefined;
const live: FingerEvent[] = [];

beforeAll(async () => {
  gate = new HumanGate({ events: { emit: (type, correlation, data) => app?.events.emit(type, correlation, data) } });
  d = await startDaemon({}, { gate });
  app = d.app;
  app.events.subscribe({}, (e) => live.push(e));
});
afterAll(async () => {
  await gate.close();
  await d.close();
});

async function eventFilesText(): Promise<string> {
  const dir = join(d.home, 'events');
  let text = '';
  for (const f of (await readdir(dir)).sort()) {
    const bytes = await readFile(join(dir, f));
    text += f.endsWith('.gz') ? gunzipSync(bytes).toString('utf8') : bytes.toString('utf8');
  }
  return text;
}

describe('event files', () => {
  it("a held call's APPROVAL_REQUESTED: live with its arguments and preview, stored and replayed without them", async () => {
    const decision = gate.hold(evaluation(), facts());
    const id = gate.list()[0]!.id;
    const got = live.find((e) => e.type === 'APPROVAL_REQUESTED' && e.data.id === id)!;
    const approval = got.data.approval as { args: unknown; evaluation: { preview: unknown; args: unknown } };
    expect(approval.args).toEqual({ path: '/etc/motd', content: MARKER });
    expect(approval.evaluation.preview).toMatchObject({ text: `+${MARKER}` });
    // the person can still read them while the call is held
    const viewer = await d.token('viewer');
    expect((await d.call('GET', `/v1/approvals/${id}`, { token: viewer })).json).toMatchObject({
      id,
      args: { content: MARKER },
    });
    // no agent reads a held call back while it waits, the one it belongs to (a delegated hook's token) included
    for (const role of ['agent:executor', 'agent:delegated']) {
      const agent = await d.call('GET', `/v1/approvals/${id}`, { token: await d.token(role) });
      expect([role, agent.status, agent.json.error.code]).toEqual([role, 403, 'E_FORBIDDEN']);
    }

    await app!.events.flush();
    const text = await eventFilesText();
    expect(text).toContain(`"id":"${id}"`);
    expect(text).not.toContain(MARKER);

    const replay = await d.call('GET', '/v1/requests/req-ev/events');
    expect(replay.status).toBe(200);
    const stored = (replay.json.events as FingerEvent[]).find((e) => e.type === 'APPROVAL_REQUESTED')!;
    expect(stored.data).toMatchObject({ id, tool_id: 'fs.write', level: 'CONFIRM', status: 'waiting' });
    const kept = stored.data.approval as Record<string, any>;
    expect(kept).not.toHaveProperty('args');
    expect(kept.binding.args_digest).toMatch(/^[0-9a-f]{64}$|^sha256:/);
    expect(kept.evaluation.reasons).toEqual(['fs.write outside writable_paths']);
    expect(kept.evaluation.preview).toEqual({ stored: false });
    expect(kept.evaluation).not.toHaveProperty('args');
    expect(kept.facts).toMatchObject({ request_id: 'req-ev', principal: { id: 'exec' } });

    await gate.answer(id, { decision: 'reject', by: { id: 't', roles: ['admin'] } });
    await decision;
    const gone = await d.call('GET', `/v1/approvals/${id}`);
    expect([gone.status, gone.json.error.code]).toEqual([404, 'E_NOT_FOUND']);
  });

  it('INPUT_RECEIVED: live with the text, stored with its length and SHA-256', async () => {
    const text = `/hub target=echo.echo {"text":"${MARKER}-input"}`;
    const res = await d.call('POST', '/v1/input', { body: { text } });
    expect(res.status).toBe(200);
    const request_id = res.json.request_id as string;
    const got = live.find((e) => e.type === 'INPUT_RECEIVED' && e.request_id === request_id)!;
    expect(got.data).toEqual({ text });

    await app!.events.flush();
    expect(await eventFilesText()).not.toContain(`${MARKER}-input`);
    const replay = await d.call('GET', `/v1/requests/${request_id}/events`);
    const types = (replay.json.events as FingerEvent[]).map((e) => e.type);
    expect(types.slice(0, 2)).toEqual(['INPUT_RECEIVED', 'MODE_PARSED']);
    const { createHash } = await import('node:crypto');
    expect((replay.json.events as FingerEvent[])[0]!.data).toEqual({
      chars: text.length,
      sha256: createHash('sha256').update(text).digest('hex'),
    });
  });
});
