import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startTestDaemon, type TestDaemon } from '@finger/testkit';

// Regression: the policy's "matches no known tool" warnings were computed once at start, so a
// module registered later kept its rules flagged as dead.
describe('policy loader warnings follow module registration', () => {
  let d: TestDaemon;
  let lateDir: string;
  beforeAll(async () => {
    d = await startTestDaemon({
      prepareHome: async (home) => {
        await mkdir(join(home, 'config'), { recursive: true });
        await writeFile(
          join(home, 'config', 'admin-policy.json'),
          JSON.stringify({ version: 1, rules: [{ id: 'late-confirm', tool: 'late.*', level: 'CONFIRM' }] }),
        );
        lateDir = join(home, 'late-module');
        await mkdir(lateDir);
        await writeFile(join(lateDir, 'index.mjs'), 'export default { tools: { t: (a) => a } };\n');
      },
    });
  });
  afterAll(async () => {
    await d?.close();
  });

  const lateWarnings = async () =>
    ((await d.http('GET', '/v1/policy')).body.warnings as { rule?: string; message: string }[]).filter(
      (w) => w.rule === 'late-confirm',
    );

  it('drops the warning once a module the rule matches is registered', async () => {
    expect((await lateWarnings()).map((w) => w.message)).toEqual(['tool glob "late.*" matches no known tool']);
    const manifest = {
      id: 'late',
      name: 'late',
      version: '1.0.0',
      kind: 'tool',
      runtime: { type: 'inprocess', entry: './index.mjs' },
      tools: [{ name: 't', description: 't' }],
    };
    expect((await d.http('POST', '/v1/modules', { manifest, base_dir: lateDir })).status).toBe(201);
    expect(await lateWarnings()).toEqual([]);
  });
});
