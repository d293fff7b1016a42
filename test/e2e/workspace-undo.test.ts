// Issue 23 item 3, undoable deletes, through the real daemon on a real bubblewrap: an agent's
// `rm -rf build` in the workspace runs without a question (NOTIFY) in the workspace-write profile,
// finger having hard-linked the tree into the undo store first; `POST /v1/undo` (`myfinger undo`)
// puts every file back byte for byte, with its mode, and the symlinks as they were. Deletes that
// leave the workspace (`../x`, a symlink followed out) stay held; an undo that would overwrite a
// path made again since is refused, E_CONFLICT, and restores nothing.
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { sandboxForTests, startTestDaemon, type TestDaemon } from '@finger/testkit';

/** Every member of a tree: relative path → what it is (content, mode, or link target). */
function treeOf(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (rel: string): void => {
    const abs = path.join(root, rel);
    const st = lstatSync(abs);
    const mode = (st.mode & 0o7777).toString(8);
    if (st.isSymbolicLink()) out[rel] = `link -> ${readlinkSync(abs)}`;
    else if (st.isDirectory()) {
      out[rel] = `dir ${mode}`;
      for (const n of readdirSync(abs)) visit(path.join(rel, n));
    } else out[rel] = `file ${mode} ${readFileSync(abs).toString('base64')}`;
  };
  visit('.');
  return out;
}

describe.skipIf(!sandboxForTests())('undoable deletes in the workspace-write sandbox, through the daemon', () => {
  let d: TestDaemon;
  let agent: string;
  const outside = realpathSync(mkdtempSync(path.join(tmpdir(), 'finger-undo-outside-')));

  beforeAll(async () => {
    d = await startTestDaemon({
      config: { log: { level: 'silent' }, sandbox: { mode: 'required', undoable_deletes: true } },
    });
    agent = await d.token('agent:executor', 'undo-agent');
    writeFileSync(path.join(outside, 'keep.txt'), 'outside\n');
  });

  afterAll(async () => {
    await d?.close();
    rmSync(outside, { recursive: true, force: true });
  });

  const asAgent = (command: string) =>
    d.http<any>('POST', '/v1/tools/shell.exec/run', { args: { command }, timeout_ms: 60_000 }, agent);
  const check = (command: string) => d.http<any>('POST', '/v1/policy/check', { tool: 'shell.exec', args: { command } });
  const linksBackup = async (): Promise<string> => {
    const list = await d.http<any>('GET', '/v1/backups');
    if (list.body.backups === undefined) throw new Error(JSON.stringify(list));
    const b = list.body.backups.find((x: any) => x.type === 'links' && x.restored_by === undefined);
    return b.id as string;
  };

  it('rm -rf build runs at NOTIFY in the profile, and undo restores every file byte for byte, mode and symlink', async () => {
    const build = path.join(d.workspace, 'build');
    mkdirSync(path.join(build, 'sub', 'deep'), { recursive: true });
    writeFileSync(path.join(build, 'a.bin'), Buffer.from([0, 1, 2, 255, 254]));
    writeFileSync(path.join(build, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    writeFileSync(path.join(build, 'sub', 'deep', 'secret.txt'), 'only me\n', { mode: 0o600 });
    symlinkSync('../a.bin', path.join(build, 'sub', 'rel-link'));
    symlinkSync(path.join(outside, 'keep.txt'), path.join(build, 'abs-link'));
    chmodSync(path.join(build, 'sub'), 0o750);
    const before = treeOf(build);

    const ev = await check('rm -rf build');
    expect([ev.body.level, ev.body.sandbox_profile, ev.body.undo_snapshot]).toEqual([
      'NOTIFY',
      'workspace-write',
      [build],
    ]);
    const r = await asAgent('rm -rf build');
    expect([r.status, r.body.result.exit_code, r.body.result.sandbox]).toEqual([
      200,
      0,
      { profile: 'workspace-write' },
    ]);
    expect(() => lstatSync(build)).toThrow();
    expect(readFileSync(path.join(outside, 'keep.txt'), 'utf8')).toBe('outside\n');

    const id = await linksBackup();
    const u = await d.http<any>('POST', '/v1/undo', { id });
    expect([u.status, u.body.restored.id, u.body.restored.path]).toEqual([200, id, build]);
    expect(treeOf(build)).toEqual(before);
  });

  it('rm -rf ../x and a symlink followed out of the workspace stay held, not in the profile', async () => {
    symlinkSync(outside, path.join(d.workspace, 'out-link'));
    for (const command of [
      `rm -rf ../${path.basename(outside)}`,
      'rm -rf out-link/',
      'rm -rf $TARGET',
      'rm -rf .git',
    ]) {
      const ev = await check(command);
      expect([command, ev.body.sandbox_profile, ev.body.undo_snapshot]).toEqual([command, undefined, undefined]);
      expect([command, ['CONFIRM', 'APPROVE', 'DENY'].includes(ev.body.level)]).toEqual([command, true]);
    }
    const ev = await check('rm -rf out-link/');
    expect(ev.body.reasons.join('\n')).toContain('outside the workspace');
    expect(readFileSync(path.join(outside, 'keep.txt'), 'utf8')).toBe('outside\n');
  });

  it('an undo that would overwrite a path made again since is refused with E_CONFLICT and restores nothing', async () => {
    const gone = path.join(d.workspace, 'gone');
    mkdirSync(gone);
    writeFileSync(path.join(gone, 'a.txt'), 'old\n');
    writeFileSync(path.join(gone, 'b.txt'), 'old b\n');
    const r = await asAgent('rm -rf gone');
    expect([r.status, r.body.result.exit_code]).toEqual([200, 0]);
    mkdirSync(gone);
    writeFileSync(path.join(gone, 'a.txt'), 'new\n');
    const id = await linksBackup();
    const u = await d.http<any>('POST', '/v1/undo', { id });
    expect([u.status, u.body.error.code, u.body.error.details.paths]).toEqual([
      409,
      'E_CONFLICT',
      [path.join(gone, 'a.txt')],
    ]);
    expect(readFileSync(path.join(gone, 'a.txt'), 'utf8')).toBe('new\n');
    expect(() => lstatSync(path.join(gone, 'b.txt'))).toThrow();
  });
});
