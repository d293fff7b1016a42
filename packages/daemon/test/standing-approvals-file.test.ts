import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { type StandingApproval, StandingApprovals } from '@finger/firewall';

import { persistStandingApprovals, standingApprovalsPath } from '../src/standing-approvals-file.js';
import { tempDir } from './helpers.js';

const NOW = Date.parse('2025-01-01T00:00:00.000Z');
const base: StandingApproval = {
  id: 'P1',
  tool_id: 'shell.exec',
  shape: { kind: 'shell', tool: 'shell.exec', commands: [{ program: 'npm', subcommand: ['test'] }] },
  level: 'CONFIRM',
  principal: 'agent:a1',
  scope: 'persistent',
  expires_at: '2025-02-01T00:00:00.000Z',
  by: 'alice',
  created_at: '2024-12-31T00:00:00.000Z',
  approval_id: 'A1',
};
const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function home(): Promise<string> {
  const h = await tempDir();
  dirs.push(h);
  await mkdir(join(h, 'state'), { recursive: true });
  return h;
}

const o = { now: () => NOW, warn: () => undefined };

describe('persistent standing approvals survive a restart (state/standing-approvals.json, 0600)', () => {
  it('writes persistent ones only, mode 0600, and a new store loads them (expired ones dropped)', async () => {
    const h = await home();
    const file = standingApprovalsPath(h);
    const a = new StandingApprovals();
    persistStandingApprovals(a, file, o);
    a.add(base);
    a.add({ ...base, id: 'S1', scope: 'session', session_id: 's1' });
    a.add({ ...base, id: 'OLD', expires_at: '2024-12-31T12:00:00.000Z' });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const doc = JSON.parse(await readFile(file, 'utf8'));
    expect(doc.approvals.map((x: StandingApproval) => x.id)).toEqual(['P1']);

    const b = new StandingApprovals();
    persistStandingApprovals(b, file, o);
    expect(b.list({ now: NOW })).toEqual([base]);
    b.revoke('P1');
    expect(JSON.parse(await readFile(file, 'utf8')).approvals).toEqual([]);
  });

  it('a damaged file refuses the start with E_STORE_UNAVAILABLE', async () => {
    const h = await home();
    await writeFile(standingApprovalsPath(h), '{"version":1,"approvals":');
    expect(() => persistStandingApprovals(new StandingApprovals(), standingApprovalsPath(h), o)).toThrow(
      expect.objectContaining({ code: 'E_STORE_UNAVAILABLE' }),
    );
  });
});
