import { spawn } from 'node:child_process';

import { describe, expect, it } from 'vitest';

import { pidsWith, waitUntil } from '@finger/testkit';

import { killProcessGroup } from '../../src/runtime/process-tree.js';

describe('killProcessGroup', () => {
  it('signals the whole group (-pid), so a grandchild in the group dies too, not only the leader', async () => {
    const marker = `300.${process.pid}${Date.now() % 100000}1`;
    // the leader starts a grandchild in its own group and waits for it
    const child = spawn('sh', ['-c', `sleep ${marker} & wait`], { detached: true, stdio: 'ignore' });
    await new Promise((r) => child.once('spawn', r));
    await waitUntil('the grandchild sleep in the group', () => pidsWith(marker).length === 1, 5000);
    expect(killProcessGroup(child.pid!, 'SIGKILL')).toBe(true);
    const gone = await waitUntil('the group gone', () => pidsWith(marker).length === 0, 5000).then(
      () => true,
      () => false,
    );
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
