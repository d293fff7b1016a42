import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { tempDir } from '@finger/testkit';

import { doctorCheck } from './helpers.js';

// Issue 23 item 2: the denial breaker's thresholds and the behaviour layer's rate limits are set
// in config.json and shown by `myfinger doctor`; so are the hold quotas (issue 28 item 3).

const limits = (home: string) => doctorCheck(home, 'limits');

describe('doctor limits check', () => {
  it('shows the defaults', async () => {
    await using home = await tempDir('finger-doctor-');
    expect(await limits(home.path)).toEqual({
      status: 'ok',
      detail:
        "denial breaker: 3 in a row or 10 of the last 50 decisions lock an agent (a rejection marked not the agent's fault does not count); " +
        'behaviour: the same call more than 5 times (3 at low confidence) in 60 s → APPROVE, the same call shape (tool, or shell program) more than 20 times → CONFIRM ' +
        '(counted for agent, module callers; firewall.behaviour.volume_kinds); ' +
        "holds: 1000 calls held for a person at most, 100 per token, 100 of them kept for people's own calls (approvals.max_pending, max_pending_per_principal, human_reserve)",
    });
  });

  it('shows what config.json sets', async () => {
    await using home = await tempDir('finger-doctor-');
    await mkdir(join(home.path, 'config'), { recursive: true });
    const config = {
      safety: { denial_consecutive: 6, denial_threshold: 20, denial_window: 100 },
      firewall: { behaviour: { max_tool_calls: 200, window_ms: 30_000, volume_kinds: ['agent', 'human'] } },
      approvals: { max_pending: 500, max_pending_per_principal: 20 },
    };
    await writeFile(join(home.path, 'config', 'config.json'), JSON.stringify(config));
    expect((await limits(home.path))?.detail).toBe(
      "denial breaker: 6 in a row or 20 of the last 100 decisions lock an agent (a rejection marked not the agent's fault does not count); " +
        'behaviour: the same call more than 5 times (3 at low confidence) in 30 s → APPROVE, the same call shape (tool, or shell program) more than 200 times → CONFIRM ' +
        '(counted for agent, human callers; firewall.behaviour.volume_kinds); ' +
        "holds: 500 calls held for a person at most, 20 per token, 50 of them kept for people's own calls (approvals.max_pending, max_pending_per_principal, human_reserve)",
    );
  });
});
