// Issue 28 item 4: a daemon that refuses to start because a state or policy file is corrupt makes
// `myfinger daemon start` print the daemon's own code, the file and the position — it printed
// "E_INTERNAL: the daemon stopped before answering" (the real code was only in the log, on a line
// the CLI could not read back because V8's JSON message spans several lines).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { runCli, tempDir } from '@finger/testkit';

/** Valid until line 3, column 8 (the `x`). */
const CORRUPT = '{\n  "a": 1,\n  "b": x\n}\n';

const CASES: Array<{ file: string; code: string; tail: string; prefix?: string }> = [
  {
    file: 'state/safety.json',
    code: 'E_STORE_UNAVAILABLE',
    tail: '(not valid JSON; fix the file, or remove it to clear lockouts, counters and breakers)',
  },
  {
    file: 'state/grants.json',
    code: 'E_STORE_UNAVAILABLE',
    tail: '(not valid JSON) — the file is corrupt; refusing to run with unknown tool grants — fix the file, or remove it to reset grants to the defaults and config',
  },
  {
    file: 'config/admin-policy.json',
    code: 'E_INVALID_ARGS',
    prefix: 'the policy refuses to load, so the daemon does not start: ',
    tail: '(not valid JSON): invalid admin policy',
  },
  {
    file: 'state/user-policy.json',
    code: 'E_INVALID_ARGS',
    prefix: 'the policy refuses to load, so the daemon does not start: ',
    tail: '(not valid JSON): invalid user policy',
  },
];

describe('myfinger daemon start with a corrupt file names the code, the file and the position', () => {
  for (const c of CASES) {
    it(`${c.file} → ${c.code}: <file>: line 3 column 8, not E_INTERNAL`, async () => {
      await using home = await tempDir('finger-e2e-start-error-');
      await mkdir(join(home.path, 'state'), { recursive: true });
      await mkdir(join(home.path, 'config'), { recursive: true });
      const file = join(home.path, c.file);
      await writeFile(file, CORRUPT);
      const r = await runCli(['daemon', 'start'], { FINGER_HOME: home.path, FINGER_PORT: '0' }, 30_000);
      expect(r.stdout).toBe('');
      expect(r.stderr.split('\n')[0]).toBe(
        `error ${c.code}: ${c.prefix ?? ''}${file}: line 3 column 8: Unexpected token 'x' ${c.tail}`,
      );
      expect(r.stderr).not.toContain('E_INTERNAL');
      expect(r.code).toBe(c.code === 'E_INVALID_ARGS' ? 2 : 1);
    });
  }
});
