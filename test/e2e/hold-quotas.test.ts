// Issue 28 item 3, through a real daemon: one agent's held calls fill its own quota
// (approvals.max_pending_per_principal), not the approval queue — another agent's calls are still
// held — and the over-quota call is refused at once with E_OVERLOADED naming it; agents together
// leave approvals.human_reserve places for people (a person's direct calls are never held at all).
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { startTestDaemon, tempDir, waitFor } from '@finger/testkit';

describe('hold quotas (real daemon)', () => {
  it('an agent over its quota gets 429 E_OVERLOADED naming it; another agent is still held; agents leave the human reserve', async () => {
    await using outside = await tempDir('finger-e2e-quota-');
    const d = await startTestDaemon({
      config: { approvals: { max_pending: 5, max_pending_per_principal: 3, human_reserve: 1 } },
    });
    try {
      const bot = await d.token('agent:executor', 'bot');
      const other = await d.token('agent:executor', 'other');
      const write = (token: string, name: string) =>
        d.http('POST', '/v1/tools/fs.write/run', { args: { path: join(outside.path, name), content: 'x' } }, token);
      const pending = async (n: number) =>
        waitFor(`${n} pending approvals`, async () => {
          const list = (await d.http('GET', '/v1/approvals')).body.approvals as unknown[];
          return list.length === n ? list : undefined;
        });

      const held = [write(bot, 'a'), write(bot, 'b'), write(bot, 'c')];
      await pending(3);
      const over = await write(bot, 'd');
      expect(over.status).toBe(429);
      expect(over.body.error).toMatchObject({
        code: 'E_OVERLOADED',
        message: expect.stringContaining(
          'agent:bot has 3 calls held for a person, its quota (approvals.max_pending_per_principal = 3)',
        ),
      });
      held.push(write(other, 'e'));
      await pending(4);
      // agents together stop at max_pending - human_reserve (4): the last place is a person's
      const third = await d.token('agent:executor', 'third');
      const reserved = await write(third, 'g');
      expect(reserved.status).toBe(429);
      expect(reserved.body.error).toMatchObject({
        code: 'E_OVERLOADED',
        message:
          "too many pending approvals of agents (4; approvals.max_pending 5 less approvals.human_reserve 1 kept for people's own calls): answer or reject some before agent:third can hold more",
      });
      expect(await pending(4)).toHaveLength(4);
      // the held calls end with the daemon (E_PROVIDER_CLOSED)
      for (const p of held) p.catch(() => undefined);
    } finally {
      await d.close();
    }
  });
});
