import fs from 'node:fs/promises';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import type { Principal } from '@finger/protocol';

import { loadShell, makeCtx, rejectionOf, tempWorkspace } from './helpers.js';

// A supervised task's own root (the daemon's `workspace_for`, by the principal object the hub
// hands the module as `source`): the task's default cwd, and a cwd anyone else may not use.

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await fs.rm(d, { recursive: true, force: true });
});

async function setup() {
  const { dir, ws } = await tempWorkspace();
  dirs.push(dir);
  const proj = path.join(dir, 'proj');
  await fs.mkdir(path.join(proj, 'sub'), { recursive: true });
  await fs.symlink(dir, path.join(proj, 'up'));
  const task: Principal = Object.freeze({ kind: 'agent', id: 'executor-t1', roles: ['agent:executor'] });
  const bound = new Map<Principal, string>([[task, proj]]);
  const rt = await loadShell({ workspace_roots: [ws], workspace_for: (p: Principal) => bound.get(p) });
  const as = (source: Principal) => ({ ...makeCtx(), source });
  return { dir, ws, proj, task, rt, as };
}

describe('shell.exec with a task root', () => {
  it('the task runs in its root by default and in a subdirectory of it', async () => {
    const { proj, task, rt, as } = await setup();
    const a = (await rt.invoke('exec', { argv: ['pwd'] }, as(task))) as { stdout: string; exit_code: number };
    expect(a).toMatchObject({ exit_code: 0, stdout: `${proj}\n` });
    const b = (await rt.invoke('exec', { argv: ['pwd'], cwd: 'sub' }, as(task))) as { stdout: string };
    expect(b.stdout).toBe(`${path.join(proj, 'sub')}\n`);
    await rt.close();
  });

  it('a cwd leading out through a symlink is E_FORBIDDEN for the task; the root is E_FORBIDDEN for anyone else', async () => {
    const { ws, proj, task, rt, as } = await setup();
    expect((await rejectionOf(rt.invoke('exec', { argv: ['pwd'], cwd: 'up' }, as(task)))).code).toBe('E_FORBIDDEN');
    for (const other of [{ ...task }, { kind: 'agent', id: 'x', roles: [] } as Principal]) {
      const e = await rejectionOf(rt.invoke('exec', { argv: ['pwd'], cwd: proj }, as(other)));
      expect(e.code).toBe('E_FORBIDDEN');
      // without a cwd, others run in the first configured root
      const r = (await rt.invoke('exec', { argv: ['pwd'] }, as(other))) as { stdout: string };
      expect(r.stdout).toBe(`${ws}\n`);
    }
    await rt.close();
  });
});
