import { spawn } from 'node:child_process';

import { describe, expect, it } from 'vitest';

import { MYFINGER_BIN } from '@finger/testkit';

// `myfinger … | head -1`: the reader closes the pipe early; the CLI must end quietly with its
// own exit code instead of crashing with an unhandled EPIPE.
describe('myfinger writing into a closed pipe', () => {
  it('exits 0 without a stack trace when the reader goes away (EPIPE)', async () => {
    const child = spawn(process.execPath, [MYFINGER_BIN, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // close our end as soon as the first bytes arrive, as `head -c 1` would
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  });
});
