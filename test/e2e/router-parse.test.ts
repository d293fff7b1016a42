import { spawn } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { MYFINGER_BIN, runCli, startTestDaemon, type TempDir, tempDir, type TestDaemon } from '@finger/testkit';

/** Runs the built CLI with `input` on stdin (runCli ignores stdin). */
function runWithStdin(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MYFINGER_BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += String(d)));
    child.stderr.on('data', (d) => (stderr += String(d)));
    const t = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(t);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}

describe('myfinger router parse (built CLI)', () => {
  let dir: TempDir;
  let registry: string;
  let answer: (name: string, text: string) => Promise<string>;

  beforeAll(async () => {
    dir = await tempDir('router-parse-');
    registry = join(dir.path, 'registry.json');
    await writeFile(
      registry,
      JSON.stringify({ agents: ['planner'], modules: ['echo', 'fs', 'fs.delete'], high_risk: ['fs', 'fs.delete'] }),
    );
    answer = async (name, text) => {
      const f = join(dir.path, name);
      await writeFile(f, text);
      return f;
    };
  });
  afterAll(async () => {
    await dir?.remove();
  });

  it('reads stdin, repairs a fenced broken answer and exits 0', async () => {
    const text =
      'Sure!\n```json\n{"decision": "Dispatch-Module", "target": "ECHO", "confidence": "85%", "payload": {"text": "hi"},}\n```';
    const r = await runWithStdin(['router', 'parse', '--registry', registry], text);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      outcome: 'ok',
      decision: {
        decision: 'dispatch_module',
        target: 'echo',
        confidence: 0.85,
        reason: '',
        payload: { text: 'hi' },
        requires_human: true,
      },
      repairs: [
        { kind: 'fence', detail: '1 fenced block(s)' },
        {
          kind: 'syntax',
          before: '{"decision": "Dispatch-Module", "target": "ECHO", "confidence": "85%", "payload": {"text": "hi"},}',
          after: '{"decision": "Dispatch-Module", "target": "ECHO", "confidence": "85%", "payload": {"text": "hi"}}',
        },
        { kind: 'coerce_decision', before: '"Dispatch-Module"', after: '"dispatch_module"' },
        { kind: 'coerce_confidence', before: '"85%"', after: '0.85' },
        { kind: 'default_requires_human', after: 'true' },
        { kind: 'default_reason' },
        { kind: 'target_case', before: '"ECHO"', after: '"echo"' },
      ],
    });
  });

  it('forces requires_human for a high-risk target', async () => {
    const f = await answer(
      'high.txt',
      '{"decision":"dispatch_module","target":"fs.delete","confidence":0.9,"requires_human":false}',
    );
    const r = await runCli(['router', 'parse', '--registry', registry, '--file', f, '--json'], {});
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      outcome: 'ok',
      decision: { target: 'fs.delete', requires_human: true },
    });
  });

  it('exits 1 with ask_human for a truncated answer', async () => {
    const r = await runWithStdin(
      ['router', 'parse', '--registry', registry],
      '{"decision":"dispatch_module","target":"echo","confidence":0.9',
    );
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toEqual({
      outcome: 'ask_human',
      reason_code: 'truncated',
      retryable: false,
      // a cut dispatch_module needs its payload whole: it is the tool's arguments
      errors: ['$.confidence was cut off', '$.payload is missing: the answer was cut off before it'],
      repairs: [
        {
          kind: 'syntax',
          before: '{"decision":"dispatch_module","target":"echo","confidence":0.9',
          after: '{"decision":"dispatch_module","target":"echo","confidence":0.9}',
        },
      ],
    });
  });

  it('exits 8 with reject for an unregistered target', async () => {
    const f = await answer('unknown.txt', '{"decision":"dispatch_module","target":"rm","confidence":0.9}');
    const r = await runCli(['router', 'parse', '--registry', registry, '-f', f], {});
    expect(r.code).toBe(8);
    expect(JSON.parse(r.stdout)).toMatchObject({ outcome: 'reject', reason_code: 'unknown_target', retryable: true });
  });

  it('exits 2 with E_USAGE for a malformed registry file', async () => {
    const bad = await answer('bad-registry.json', '{"modules": "echo"}');
    const r = await runWithStdin(['router', 'parse', '--registry', bad, '--json'], '{}');
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'E_USAGE' } });
  });

  describe('without --registry: the running daemon', () => {
    let d: TestDaemon;
    beforeAll(async () => {
      d = await startTestDaemon({ config: { log: { level: 'silent' } } });
    });
    afterAll(async () => {
      await d?.close();
    });

    it("routes against the daemon's modules and tools, high-risk tools forcing a human", async () => {
      const ok = await runWithStdin(
        ['router', 'parse', '--home', d.home],
        '{"decision":"dispatch_module","target":"echo.echo","confidence":0.9,"requires_human":false}',
      );
      expect(ok.code).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({
        outcome: 'ok',
        decision: { target: 'echo.echo', requires_human: false },
      });
      const high = await runWithStdin(
        ['router', 'parse', '--home', d.home],
        '{"decision":"dispatch_module","target":"shell.exec","confidence":0.9,"requires_human":false}',
      );
      expect(high.code).toBe(0);
      expect(JSON.parse(high.stdout)).toMatchObject({
        outcome: 'ok',
        decision: { target: 'shell.exec', requires_human: true },
      });
      const unknown = await runWithStdin(
        ['router', 'parse', '--home', d.home],
        '{"decision":"dispatch_module","target":"nope","confidence":0.9}',
      );
      expect(unknown.code).toBe(8);
    });
  });
});
