import { spawn } from 'node:child_process';

import { describe, expect, it } from 'vitest';

import { pidsWith } from '@finger/testkit';

import { killProcessGroup } from '../../src/runtime/process-tree.js';

async function until(cond: () => boolean, ms = 5000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}

describe('killProcessGroup', () => {
  it('signals the whole group (-pid), so a grandchild in the group dies too, not only the leader', async () => {
    const marker = `300.${process.pid}${Date.now() % 100000}1`;
    // the leader starts a grandchild in its own group and waits for it
    const child = spawn('sh', ['-c', `sleep ${marker} & wait`], { detached: true, stdio: 'ignore' });
    await new Promise((r) => child.once('spawn', r));
    expect(await until(() => pidsWith(marker).length === 1)).toBe(true);
    expect(killProcessGroup(child.pid!, 'SIGKILL')).toBe(true);
    const gone = await until(() => pidsWith(marker).length === 0);
    if (!gone) for (const p of pidsWith(marker)) process.kill(p, 'SIGKILL'); // leave nothing behind
    expect(gone).toBe(true);
  });

  it('refuses pids 0, 1 and negatives (kill(-0) would hit our own group)', () => {
    expect([killProcessGroup(0, 'SIGTERM'), killProcessGroup(1, 'SIGTERM'), killProcessGroup(-5, 'SIGTERM')]).toEqual([
      false,
      false,
      false,
    ]);
  });
});
