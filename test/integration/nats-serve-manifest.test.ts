import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { serveKeyOf } from '@finger/hub/nats';
import {
  type CliChild,
  natsUrlForTests,
  startCli,
  startTestDaemon,
  type TempDir,
  tempDir,
  testClusterName,
  type TestDaemon,
} from '@finger/testkit';

import { callProbe, untilListed, untilServing } from './remote-probe-helpers.js';

// What a `module serve` host announces of its tools cannot make the daemon's firewall hold them
// less: a host claiming its tool is harmless is imported at the firewall's defaults.
const url = await natsUrlForTests();
const KEY = 'serve-manifest-test-key-0123456789';
const ENTRY = fileURLToPath(new URL('../fixtures/modules/remote-probe/index.mjs', import.meta.url));

interface Tool {
  id: string;
  risk_level: string;
  capability_level: string;
  side_effects: boolean;
  idempotent: boolean;
  permission?: string;
}

describe.skipIf(!url)('tools announced by a serve host', () => {
  const cluster = testClusterName('smf');
  let dir: TempDir;
  let daemon: TestDaemon;
  let host: CliChild;

  beforeAll(async () => {
    dir = await tempDir('finger-serve-manifest-');
    const manifest = join(dir.path, 'module.json');
    writeFileSync(
      manifest,
      JSON.stringify({
        id: 'remote-probe',
        name: 'Boastful probe',
        version: '1.0.0',
        kind: 'tool',
        runtime: { type: 'inprocess', entry: ENTRY },
        tools: [
          {
            name: 'where',
            description: 'claims to be harmless',
            risk_level: 'low',
            capability_level: 'L0',
            side_effects: false,
            idempotent: true,
            permission: 'AUTO',
          },
          { name: 'runs', description: 'says it needs approval', risk_level: 'critical', permission: 'APPROVE' },
        ],
        grants: ['supervisor'],
      }),
    );
    daemon = await startTestDaemon({
      config: {
        nats: { url: url!, cluster_key: KEY, heartbeat_ms: 200, unhealthy_after_ms: 800 },
        cluster,
        modules: { builtin: false, paths: [] },
      },
    });
    host = startCli(
      ['module', 'serve', manifest, '--nats', url!, '--cluster', cluster, '--heartbeat-ms', '200'],
      { FINGER_SERVE_KEY: serveKeyOf(KEY, 'remote-probe') },
      { timeout_ms: 60_000 },
    );
    await untilServing(host);
    await untilListed(daemon);
  });

  afterAll(async () => {
    host?.kill('SIGKILL');
    await daemon?.close();
    await dir?.[Symbol.asyncDispose]();
  });

  it('are imported no less held than the defaults: the claims of harmlessness are dropped, stricter ones kept', async () => {
    const tools = (await daemon.http<{ tools: Tool[] }>('GET', '/v1/tools')).body.tools;
    const pick = (id: string) => {
      const t = tools.find((x) => x.id === id)!;
      return {
        risk_level: t.risk_level,
        capability_level: t.capability_level,
        side_effects: t.side_effects,
        idempotent: t.idempotent,
        permission: t.permission,
      };
    };
    expect(pick('remote-probe.where')).toEqual({
      risk_level: 'medium',
      capability_level: 'L2',
      side_effects: true,
      idempotent: false,
      permission: undefined,
    });
    expect(pick('remote-probe.runs')).toMatchObject({ risk_level: 'critical', permission: 'APPROVE' });
    // the module still answers
    expect(await callProbe(daemon, 1)).toMatchObject({
      status: 'succeeded',
      result: { echo: { n: 1 }, pid: host.pid },
    });
  });
});
