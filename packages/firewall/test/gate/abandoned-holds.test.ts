import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { ABANDONED_REASON, ArgumentFilter, AuditLog, settleAbandonedHolds } from '../../src/index.js';
import { EventRecorder } from './gate-fixtures.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function openLog(): Promise<{ audit: AuditLog; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'finger-abandoned-'));
  dirs.push(dir);
  return { audit: await AuditLog.open({ dir: join(dir, 'audit') }), dir };
}

const requested = (id: string) => ({
  type: 'approval.requested' as const,
  actor: { kind: 'agent', id: 'bot' },
  request_id: `req-${id}`,
  tool: 'fs.write',
  details: { approval_id: id, session_id: 's1', level: 'APPROVE' },
});
const resolved = (id: string) => ({
  type: 'approval.resolved' as const,
  decision: 'reject',
  details: { approval_id: id },
});

describe('settleAbandonedHolds (issue 28: holds pending at a kill -9 had no resolution)', () => {
  it('records each unanswered hold as abandoned (audit entry + event), once, and remembers where it stopped', async () => {
    const { audit, dir } = await openLog();
    for (const r of [requested('a'), requested('b'), resolved('a'), requested('c')]) await audit.append(r);
    const events = new EventRecorder();
    const markerFile = join(dir, 'state', 'approvals-settled.json');
    expect(await settleAbandonedHolds({ audit, markerFile, events })).toBe(2);
    const settled = (await audit.read({ type: 'approval.resolved' })).filter((e) => e.decision === 'abandoned');
    expect(settled.map((e) => [e.details?.approval_id, e.request_id, e.tool, e.actor])).toEqual([
      ['b', 'req-b', 'fs.write', { kind: 'system', id: 'human-gate' }],
      ['c', 'req-c', 'fs.write', { kind: 'system', id: 'human-gate' }],
    ]);
    expect(settled[0]!.details).toMatchObject({ decided_by: 'gate', reason: ABANDONED_REASON, requested_seq: 2 });
    expect(events.all.map((e) => [e.type, e.correlation, e.data.id, e.data.decision])).toEqual([
      ['APPROVAL_RESOLVED', { request_id: 'req-b', session_id: 's1', target: 'fs.write' }, 'b', 'abandoned'],
      ['APPROVAL_RESOLVED', { request_id: 'req-c', session_id: 's1', target: 'fs.write' }, 'c', 'abandoned'],
    ]);
    expect(JSON.parse(await readFile(markerFile, 'utf8'))).toEqual({ seq: audit.head().seq });

    await audit.append(requested('d'));
    expect(await settleAbandonedHolds({ audit, markerFile })).toBe(1);
    expect(await settleAbandonedHolds({ audit, markerFile })).toBe(0);
    await audit.close();
  });
});

describe('ArgumentFilter: a path argument with a NUL byte is refused (before any hold)', () => {
  const schema = {
    type: 'object',
    properties: { path: { type: 'string' }, out: { type: 'string', format: 'path' }, text: { type: 'string' } },
  };
  it.each([
    [{ path: 'a\u0000b' }, '$.path'],
    [{ out: '/x/\u0000' }, '$.out'],
  ])('%j → %s', (args, path) => {
    expect(new ArgumentFilter().filter(schema, args)).toEqual({
      ok: false,
      args,
      stripped: [],
      issues: [{ path, message: 'must not contain a NUL byte' }],
    });
  });
  it('also without a schema, and for an item of a path list', () => {
    expect(new ArgumentFilter().filter(undefined, { paths: ['/ok', '/n\u0000o'] })).toMatchObject({
      ok: false,
      issues: [{ path: '$.paths[1]', message: 'must not contain a NUL byte' }],
    });
  });
  it('leaves NUL bytes in other arguments alone', () => {
    expect(new ArgumentFilter().filter(schema, { text: 'a\u0000b' })).toMatchObject({ ok: true });
  });
});
