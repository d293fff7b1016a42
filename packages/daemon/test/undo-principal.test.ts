import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startDaemon, type TestDaemon } from './helpers.js';

// The whole path: a token → the principal the hub puts in the envelope's `source` → the fs module
// records it on each backup and checks it on fs.undo. Two agents, one operator (the built-in fs).

let d: TestDaemon;
let ws: string;
beforeAll(async () => {
  d = await startDaemon({ modules: { builtin: true } });
  ws = d.workspace;
}, 20_000);
afterAll(async () => {
  await d?.close();
});

const run = (token: string, tool: string, args: Record<string, unknown>) =>
  d.call('POST', `/v1/tools/${tool}/run`, { token, body: { args } });

describe('fs.undo over HTTP: an agent restores only its own backups', () => {
  it("agent B's fs.undo cannot restore agent A's backup; the operator's POST /v1/undo can (regression: fs.undo restored any caller's newest backup)", async () => {
    const a = await d.token('agent:executor', 'agent-a');
    const b = await d.token('agent:executor', 'agent-b');
    await writeFile(join(ws, 'shared.txt'), 'orig');

    const wa = await run(a, 'fs.write', { path: 'shared.txt', content: 'by A' });
    expect(wa.status).toBe(200);
    const backupA = wa.json.result.backup_id as string;

    const none = await run(b, 'fs.undo', {});
    expect(none.status).toBe(404);
    expect(none.json.error).toMatchObject({
      code: 'E_NOT_FOUND',
      message: 'nothing to undo: agent:agent-b has no change left to undo',
    });
    const byId = await run(b, 'fs.undo', { id: backupA });
    expect(byId.status).toBe(403);
    expect(byId.json.error).toMatchObject({
      code: 'E_FORBIDDEN',
      details: { id: backupA, principal: 'agent:agent-b' },
    });
    expect(await readFile(join(ws, 'shared.txt'), 'utf8')).toBe('by A');

    const list = await d.call('GET', '/v1/backups');
    expect(list.json.backups[0]).toMatchObject({ id: backupA, principal: 'agent:agent-a' });

    // the operator (here the admin token) restores anyone's newest
    const undo = await d.call('POST', '/v1/undo', { body: {} });
    expect(undo.status).toBe(200);
    expect(undo.json.restored.id).toBe(backupA);
    expect(await readFile(join(ws, 'shared.txt'), 'utf8')).toBe('orig');
  }, 20_000);
});
