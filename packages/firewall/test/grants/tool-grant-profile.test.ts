import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { thrownBy } from '@finger/testkit';

import { DEFAULT_ROLE_GRANTS, ToolGrantProfile } from '../../src/index.js';

let home: string;
let file: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'finger-grants-'));
  file = join(home, 'state', 'grants.json');
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('ToolGrantProfile', () => {
  it('starts from the default role grants', () => {
    const p = new ToolGrantProfile();
    expect(p.list()).toEqual({
      executor: ['fs.*', 'shell.*', 'web.*', 'scratchpad.*', 'echo.*'],
      reviewer: ['fs.read', 'fs.list', 'fs.stat', 'scratchpad.read', 'audit.*'],
      supervisor: ['echo.*', 'fs.read', 'fs.list', 'fs.stat', 'scratchpad.read', 'web.search'],
      delegated: ['shell.*', 'fs.*', 'web.*', 'mcp.**', 'agent.*'],
    });
    expect(Object.keys(DEFAULT_ROLE_GRANTS)).toEqual(['supervisor', 'executor', 'reviewer', 'delegated']);
    // the delegated role (agents' hook tokens) reaches every MCP tool, however many segments its name has
    expect(p.isGranted('agent:delegated', 'mcp.memory.create_entities')).toBe(true);
    expect(p.isGranted('delegated', 'mcp.srv.a.b')).toBe(true);
    expect(p.isGranted('delegated', 'scratchpad.write')).toBe(false);
  });

  it('answers isGranted per role, accepting agent:<role>', () => {
    const p = new ToolGrantProfile();
    const ask = (role: string) =>
      ['fs.read', 'fs.write', 'shell.exec', 'web.search', 'web.fetch', 'audit.verify', 'echo.echo', 'mcp.x.y'].filter(
        (t) => p.isGranted(role, t),
      );
    expect(ask('supervisor')).toEqual(['fs.read', 'web.search', 'echo.echo']);
    expect(ask('agent:executor')).toEqual([
      'fs.read',
      'fs.write',
      'shell.exec',
      'web.search',
      'web.fetch',
      'echo.echo',
    ]);
    expect(ask('reviewer')).toEqual(['fs.read', 'audit.verify']);
    expect(ask('nobody')).toEqual([]);
  });

  it('grants every tool of a module to the roles its manifest lists', () => {
    const p = new ToolGrantProfile();
    expect(p.isGranted('reviewer', 'mcp.files.read_file')).toBe(false);
    expect(p.isGranted('reviewer', 'mcp.files.read_file', ['reviewer'])).toBe(true);
    expect(p.isGranted('agent:reviewer', 'mcp.files.read_file', ['agent:reviewer'])).toBe(true);
    expect(p.isGranted('supervisor', 'mcp.files.read_file', ['reviewer'])).toBe(false);
    const tools = [{ id: 'fs.read' }, { id: 'fs.write' }, { id: 'notes.add', grants: ['reviewer'] }];
    expect(p.granted('reviewer', tools).map((t) => t.id)).toEqual(['fs.read', 'notes.add']);
  });

  it('adds config grants and refuses bad ones with E_INVALID_ARGS listing each', () => {
    const p = new ToolGrantProfile({ extra: { reviewer: ['web.search'], auditor: ['audit.*'] } });
    expect(p.list().reviewer).toEqual(['fs.read', 'fs.list', 'fs.stat', 'scratchpad.read', 'audit.*', 'web.search']);
    expect(p.isGranted('auditor', 'audit.verify')).toBe(true);
    const e = thrownBy(() => new ToolGrantProfile({ extra: { reviewer: ['!fs.*', 'ok.*', 'a/b'], 'Bad Role': [] } }));
    expect(e.code).toBe('E_INVALID_ARGS');
    expect((e.details as { issues: { path: string }[] }).issues.map((i) => i.path)).toEqual([
      '$.grants.reviewer[0]',
      '$.grants.reviewer[2]',
      '$.grants["Bad Role"]',
    ]);
  });

  it('persists admin grants atomically with mode 0600, and a new profile reads them back', async () => {
    const p = new ToolGrantProfile({ file });
    expect(p.grant('supervisor', 'mcp.files.*')).toBe(true);
    expect(p.grant('agent:supervisor', 'mcp.files.*')).toBe(false);
    expect(p.isGranted('supervisor', 'mcp.files.read_file')).toBe(true);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      version: 1,
      granted: { supervisor: ['mcp.files.*'] },
      revoked: {},
    });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readdir(join(home, 'state'))).toEqual(['grants.json']);
    const again = new ToolGrantProfile({ file });
    expect(again.isGranted('supervisor', 'mcp.files.read_file')).toBe(true);
    expect(
      again
        .entries()
        .filter((e) => e.role === 'supervisor')
        .map((e) => [e.glob, e.source]),
    ).toEqual([
      ['echo.*', 'default'],
      ['fs.read', 'default'],
      ['fs.list', 'default'],
      ['fs.stat', 'default'],
      ['scratchpad.read', 'default'],
      ['web.search', 'default'],
      ['mcp.files.*', 'admin'],
    ]);
  });

  it('revokes admin and default grants, persists the revocation, and restores a default on re-grant', () => {
    const p = new ToolGrantProfile({ file, extra: { executor: ['mcp.**'] } });
    p.grant('reviewer', 'web.search');
    expect(p.revoke('reviewer', 'web.search')).toBe(true);
    expect(p.isGranted('reviewer', 'web.search')).toBe(false);
    p.revoke('executor', 'shell.*');
    p.revoke('executor', 'mcp.**');
    expect(p.isGranted('executor', 'shell.exec')).toBe(false);
    expect(p.isGranted('executor', 'mcp.files.read')).toBe(false);
    const reloaded = new ToolGrantProfile({ file, extra: { executor: ['mcp.**'] } });
    expect(reloaded.list().executor).toEqual(['fs.*', 'web.*', 'scratchpad.*', 'echo.*']);
    expect(reloaded.grant('executor', 'shell.*')).toBe(true);
    expect(reloaded.list().executor).toEqual(['fs.*', 'shell.*', 'web.*', 'scratchpad.*', 'echo.*']);
    expect(new ToolGrantProfile({ file }).isGranted('executor', 'shell.exec')).toBe(true);
  });

  it('refuses to revoke what a role does not have (E_NOT_FOUND) and bad input (E_INVALID_ARGS)', () => {
    const p = new ToolGrantProfile({ file });
    const e = thrownBy(() => p.revoke('supervisor', 'fs.write'));
    expect(e.code).toBe('E_NOT_FOUND');
    expect(e.details).toEqual({
      role: 'supervisor',
      tool: 'fs.write',
      grants: ['echo.*', 'fs.read', 'fs.list', 'fs.stat', 'scratchpad.read', 'web.search'],
    });
    expect(thrownBy(() => p.grant('supervisor', '!fs.write')).code).toBe('E_INVALID_ARGS');
    expect(thrownBy(() => p.grant('Super visor', 'fs.write')).code).toBe('E_INVALID_ARGS');
  });

  it('refuses to start from a corrupt grants file with E_STORE_UNAVAILABLE instead of running open', async () => {
    const { mkdir } = await import('node:fs/promises');
    await mkdir(join(home, 'state'));
    for (const body of [
      '{"version":1,"granted":{"executor":["fs.*"]},', // truncated
      '[]',
      '{"version":2,"granted":{},"revoked":{}}',
      '{"version":1,"granted":{"executor":"fs.*"},"revoked":{}}',
      '{"version":1,"granted":{},"revoked":{"executor":["!shell.*"]}}',
    ]) {
      await writeFile(file, body);
      const e = thrownBy(() => new ToolGrantProfile({ file }));
      expect(e.code).toBe('E_STORE_UNAVAILABLE');
      expect(e.message).toContain(file);
    }
  });
});
