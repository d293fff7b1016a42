import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { runCli, startTestDaemon, type TestDaemon } from '@finger/testkit';

/** Content with bytes a lossy path would change: a BOM-less UTF-8 letter, CRLF, a tab, no final newline. */
const V1 = 'v1 λ\r\n\tsecond line';

describe('myfinger tool / undo (built CLI) against a fresh daemon with the built-in modules', () => {
  let d: TestDaemon;
  let env: Record<string, string>;
  beforeAll(async () => {
    d = await startTestDaemon({ config: { log: { level: 'silent' } } });
    env = { FINGER_HOME: d.home };
  });
  afterAll(async () => {
    await d?.close();
  });

  it('tool list shows the built-in tools with risk and capability level', async () => {
    const r = await runCli(['tool', 'list'], env);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID\s+RISK\s+CAPABILITY\s+SIDE_EFFECTS\s+PROVIDER$/);
    const row = (id: string) => lines.find((l) => l.split(/\s+/)[0] === id)?.split(/\s+/);
    for (const id of ['fs.read', 'fs.write', 'fs.delete', 'echo.echo']) {
      const cells = row(id);
      expect(cells, id).toBeDefined();
      expect(['low', 'medium', 'high', 'critical']).toContain(cells![1]);
      expect(['L0', 'L1', 'L2']).toContain(cells![2]);
    }
    expect(row('fs.read')!.slice(1)).toEqual(['low', 'L0', 'no', 'fs']);
    const json = JSON.parse((await runCli(['tool', 'list', '--json'], env)).stdout) as {
      tools: { id: string; risk_level: string; capability_level: string }[];
    };
    const write = json.tools.find((t) => t.id === 'fs.write')!;
    expect(write.capability_level).toBe('L1');
  });

  it('tool show fs.write shows its metadata and input schema', async () => {
    const r = await runCli(['tool', 'show', 'fs.write'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^fs\.write/);
    expect(r.stdout).toMatch(/\n {2}risk: +\w+\n/);
    expect(r.stdout).toMatch(/\n {2}capability: +L1\n/);
    expect(r.stdout).toContain('\n  short name:    write → fs.write (only_provider)\n');
    const schemaText = r.stdout.slice(r.stdout.indexOf('input schema:\n') + 'input schema:\n'.length);
    expect(schemaText).toContain('"path"');
    expect(schemaText).toContain('"content"');
    const json = JSON.parse((await runCli(['tool', 'show', 'fs.write', '--json'], env)).stdout);
    expect(json.tool.input_schema.properties).toHaveProperty('path');
    expect(json.tool.input_schema.properties).toHaveProperty('content');
  });

  it('tool run fs.write writes, and undo restores the previous content byte for byte', async () => {
    const file = join(d.workspace, 'a.txt');
    const first = await runCli(
      ['tool', 'run', 'fs.write', '--args', JSON.stringify({ path: 'a.txt', content: V1 })],
      env,
    );
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(await readFile(file)).toEqual(Buffer.from(V1, 'utf8'));

    const second = await runCli(['tool', 'run', 'fs.write', '--args', '{"path":"a.txt","content":"v2"}'], env);
    expect(second.code).toBe(0);
    expect(await readFile(file, 'utf8')).toBe('v2');

    const list = await runCli(['undo', '--list', '--json'], env);
    expect(list.code).toBe(0);
    const { backups } = JSON.parse(list.stdout) as { backups: { id: string; path: string; kind: string }[] };
    expect(backups.length).toBeGreaterThanOrEqual(2);

    const undo = await runCli(['undo'], env);
    expect(undo.stderr).toBe('');
    expect(undo.code).toBe(0);
    expect(undo.stdout).toMatch(
      /^restored .*a\.txt \(\d+ bytes\) from backup \S+\nto reverse this undo: myfinger undo \S+\n$/,
    );
    expect(await readFile(file)).toEqual(Buffer.from(V1, 'utf8'));
  });

  it('bad --args exits 2 locally; args the schema refuses exit 2 listing each problem', async () => {
    const bad = await runCli(['tool', 'run', 'fs.write', '--args', '{"path":'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--args is not valid JSON at position 8');
    const refused = await runCli(['tool', 'run', 'fs.write', '--args', '{"content":5}'], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/^error E_INVALID_ARGS: /);
    expect(refused.stderr.trimEnd().split('\n').length).toBeGreaterThanOrEqual(3);
  });

  it('an agent token is refused a tool outside its grants until an admin grants it', async () => {
    const agent = await d.token('agent:reviewer');
    const args = ['tool', 'run', 'fs.write', '--args', '{"path":"by-agent.txt","content":"x"}'];
    const denied = await runCli(args, { ...env, FINGER_TOKEN: agent });
    expect(denied.code).toBe(4);
    expect(denied.stderr).toContain('E_FORBIDDEN');
    const grant = await runCli(['tool', 'grant', '--role', 'reviewer', '--tool', 'fs.write'], env);
    expect(grant.code).toBe(0);
    const ok = await runCli(args, { ...env, FINGER_TOKEN: agent });
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(await readFile(join(d.workspace, 'by-agent.txt'), 'utf8')).toBe('x');
  });
});
