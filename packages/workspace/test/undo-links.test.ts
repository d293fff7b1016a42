// UndoManager's `links` backups (snapshotLinks before a deleting command, settleLinks after it,
// restore) on real temp directories: exact restore of what the command removed, E_CONFLICT on a
// path made again (nothing restored, the backup kept), the bounds and another file system refused
// (E_DENIED_BY_POLICY not_undoable, no entry), paths outside the roots or through a symlink
// refused (E_FORBIDDEN), symlinks never followed, and the undo of the undo.
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { type RestoreScope, UndoManager } from '@finger/workspace';

let tmp: string;
let ws: string;
let outside: string;
let store: string;

beforeEach(() => {
  tmp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'finger-undo-links-')));
  ws = path.join(tmp, 'ws');
  outside = path.join(tmp, 'outside');
  store = path.join(tmp, 'backups');
  mkdirSync(ws);
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'keep.txt'), 'outside\n');
});

afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** A human operator's scope: every backup. */
const OP: RestoreScope = { principal: 'human:op', any: true };
const AGENT = 'agent:a1';

function manager(extra: Partial<ConstructorParameters<typeof UndoManager>[0]> = {}): UndoManager {
  return new UndoManager({ backups_dir: store, workspace_roots: [ws], ...extra });
}

async function errorOf(p: Promise<unknown>): Promise<{ code: string; message: string; details?: unknown }> {
  try {
    await p;
  } catch (e) {
    const { code, message, details } = e as { code: string; message: string; details?: unknown };
    return { code, message, details };
  }
  throw new Error('resolved');
}

/** Every member of a tree: relative path → what it is (content, mode, link target). */
function treeOf(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (rel: string): void => {
    const abs = path.join(root, rel);
    const st = lstatSync(abs);
    const mode = (st.mode & 0o7777).toString(8);
    if (st.isSymbolicLink()) out[rel] = `link -> ${readlinkSync(abs)}`;
    else if (st.isDirectory()) {
      out[rel] = `dir ${mode}`;
      for (const n of readdirSync(abs).sort()) visit(path.join(rel, n));
    } else out[rel] = `file ${mode} ${readFileSync(abs).toString('base64')}`;
  };
  visit('.');
  return out;
}

function makeTree(name: string): string {
  const top = path.join(ws, name);
  mkdirSync(path.join(top, 'sub'), { recursive: true });
  writeFileSync(path.join(top, 'a.bin'), Buffer.from([0, 1, 2, 255]));
  writeFileSync(path.join(top, 'run.sh'), '#!/bin/sh\n', { mode: 0o755 });
  writeFileSync(path.join(top, 'sub', 'secret.txt'), 'only me\n', { mode: 0o600 });
  symlinkSync(outside, path.join(top, 'out-link'));
  symlinkSync('../a.bin', path.join(top, 'sub', 'rel-link'));
  chmodSync(path.join(top, 'sub'), 0o750);
  return top;
}

/** The files of the store's blobs directory (what a backup still holds on disk). */
const blobs = () => readdirSync(path.join(store, 'blobs')).sort();

describe('UndoManager links backups', () => {
  it('snapshot, delete, settle, restore: the tree comes back exactly, the same inodes; the store lets go of them', async () => {
    const m = manager();
    const build = makeTree('build');
    const before = treeOf(build);
    const ino = statSync(path.join(build, 'sub', 'secret.txt')).ino;
    const entry = await m.snapshotLinks([build], { request_id: 'r1', principal: AGENT });
    expect(entry).toEqual({
      id: entry.id,
      path: build,
      ts: entry.ts,
      kind: 'delete',
      existed: true,
      type: 'links',
      size: 4 + 10 + 8,
      sha256: null,
      paths: [build],
      request_id: 'r1',
      principal: AGENT,
    });
    rmSync(build, { recursive: true }); // the command
    const settled = await m.settleLinks(entry.id);
    expect(settled).toEqual({ ...entry, size: 4 + 10 + 8 });
    expect((await m.list()).map((e) => [e.id, e.type])).toEqual([[entry.id, 'links']]);

    const r = await m.restore(undefined, { principal: AGENT });
    expect(treeOf(build)).toEqual(before);
    expect(statSync(path.join(build, 'sub', 'secret.txt')).ino).toBe(ino);
    expect(statSync(path.join(build, 'sub', 'secret.txt')).nlink).toBe(1);
    expect(readFileSync(path.join(outside, 'keep.txt'), 'utf8')).toBe('outside\n');
    expect([r.entry.id, r.entry.restored_by, r.entry.size]).toEqual([entry.id, r.undo.id, 0]);
    // the tree was absent before the restore: the undo record is that absence
    expect([r.undo.kind, r.undo.type, r.undo.existed, r.undo.undo_of, r.undo.principal]).toEqual([
      'undo',
      'absent',
      false,
      entry.id,
      AGENT,
    ]);
    expect(blobs()).toEqual([]); // the links are the restored files now; an absence needs no blob
    // the index survives a new manager: restored, and nothing left to undo for the agent
    const again = manager();
    expect((await again.get(entry.id))?.restored_by).toBe(r.undo.id);
    expect(await errorOf(again.restore(entry.id, OP))).toEqual({
      code: 'E_CONFLICT',
      message: `backup "${entry.id}" was already restored (by ${r.undo.id})`,
      details: { id: entry.id, restored_by: r.undo.id },
    });
    // restoring the undo record (an absence) deletes the tree again
    await again.restore(r.undo.id, OP);
    expect(() => lstatSync(build)).toThrow();
  });

  it('settle keeps only what the command removed; nothing removed drops the entry and its links', async () => {
    const m = manager();
    const build = makeTree('build');
    const e1 = await m.snapshotLinks([build], { principal: AGENT });
    rmSync(path.join(build, 'sub'), { recursive: true });
    const kept = await m.settleLinks(e1.id);
    expect([kept?.size, kept?.paths]).toEqual([8, [build]]);
    expect(statSync(path.join(build, 'a.bin')).nlink).toBe(1);
    await m.restore(e1.id, OP);
    expect(readFileSync(path.join(build, 'sub', 'secret.txt'), 'utf8')).toBe('only me\n');
    expect(readlinkSync(path.join(build, 'sub', 'rel-link'))).toBe('../a.bin');

    const other = makeTree('other');
    const e2 = await m.snapshotLinks([other], { principal: AGENT });
    expect(await m.settleLinks(e2.id)).toBeUndefined();
    expect(await m.get(e2.id)).toBeUndefined();
    expect(blobs().some((b) => b.startsWith(e2.id))).toBe(false);
    expect(statSync(path.join(other, 'a.bin')).nlink).toBe(1);
    // an unknown id settles to nothing
    expect(await m.settleLinks('01UNKNOWN')).toBeUndefined();
  });

  it('several trees: restored together; the undo record is a links record that is not restorable itself (E_INVALID_ARGS)', async () => {
    const m = manager();
    const a = makeTree('a');
    const b = makeTree('b');
    const before = [treeOf(a), treeOf(b)];
    const entry = await m.snapshotLinks([a, b], { principal: AGENT });
    rmSync(a, { recursive: true });
    rmSync(b, { recursive: true });
    expect((await m.settleLinks(entry.id))?.paths).toEqual([a, b]);
    const r = await m.restore(entry.id, OP);
    expect([treeOf(a), treeOf(b)]).toEqual(before);
    expect([r.undo.type, r.undo.kind, r.undo.paths, r.undo.undo_of]).toEqual(['links', 'undo', [a, b], entry.id]);
    expect(await errorOf(m.restore(r.undo.id, OP))).toEqual({
      code: 'E_INVALID_ARGS',
      message: `backup "${r.undo.id}" records the restore of deleted files, which is not undone by a restore: delete them again`,
      details: { id: r.undo.id },
    });
  });

  it('a path made again is never overwritten: E_CONFLICT, nothing restored, the backup kept for a later undo', async () => {
    const m = manager();
    const gone = path.join(ws, 'gone');
    mkdirSync(gone);
    writeFileSync(path.join(gone, 'a.txt'), 'old\n');
    writeFileSync(path.join(gone, 'b.txt'), 'old b\n');
    const entry = await m.snapshotLinks([gone], { principal: AGENT });
    rmSync(gone, { recursive: true });
    await m.settleLinks(entry.id);
    mkdirSync(gone);
    writeFileSync(path.join(gone, 'a.txt'), 'new\n');
    expect(await errorOf(m.restore(entry.id, OP))).toEqual({
      code: 'E_CONFLICT',
      message: `cannot undo the delete: 1 of its paths exist again (${path.join(gone, 'a.txt')}); move them away first — nothing was restored`,
      details: { paths: [path.join(gone, 'a.txt')], count: 1 },
    });
    expect(readFileSync(path.join(gone, 'a.txt'), 'utf8')).toBe('new\n');
    expect(() => lstatSync(path.join(gone, 'b.txt'))).toThrow();
    expect((await m.list()).map((e) => [e.id, e.restored_by])).toEqual([[entry.id, undefined]]);
    // the new file moved away, the same backup restores
    renameSync(path.join(gone, 'a.txt'), path.join(ws, 'a.new'));
    await m.restore(entry.id, OP);
    expect([readFileSync(path.join(gone, 'a.txt'), 'utf8'), readFileSync(path.join(gone, 'b.txt'), 'utf8')]).toEqual([
      'old\n',
      'old b\n',
    ]);
  });

  it('past the bound nothing is snapshotted: E_DENIED_BY_POLICY not_undoable, no entry, no links left', async () => {
    const m = manager({ links: { max_entries: 3 } });
    expect(m.linkBounds).toEqual({ max_entries: 3, max_ms: 10_000 });
    const build = makeTree('build');
    expect(await errorOf(m.snapshotLinks([build], { principal: AGENT }))).toEqual({
      code: 'E_DENIED_BY_POLICY',
      message:
        'the delete was let through because it could be undone, but its snapshot failed: more than 3 entries; not run',
      details: { reason: 'not_undoable', why: 'more than 3 entries' },
    });
    expect(await m.list()).toEqual([]);
    expect(blobs()).toEqual([]);
    expect(statSync(path.join(build, 'a.bin')).nlink).toBe(1);
  });

  it('paths outside the roots, through a symlink, or none at all are refused before anything is linked', async () => {
    const m = manager();
    makeTree('build');
    symlinkSync(path.join(ws, 'build'), path.join(ws, 'via-link'));
    // (the parent is resolved inside a root, the last component never followed)
    const cases: [string[], string][] = [
      [[outside], 'E_FORBIDDEN'],
      [[path.join(ws, 'via-link', 'sub')], 'E_FORBIDDEN'],
      [[path.join(ws, 'via-link')], 'resolved'], // the link itself: removing it removes no file of the tree
      [[], 'E_INVALID_ARGS'],
    ];
    for (const [paths, code] of cases) {
      const got = await m.snapshotLinks(paths, { principal: AGENT }).then(
        () => 'resolved',
        (e: { code: string }) => e.code,
      );
      expect([paths, got]).toEqual([paths, code]);
    }
    expect(await errorOf(m.snapshotLinks([path.join(ws, 'build')], { principal: '' }))).toEqual({
      code: 'E_INVALID_ARGS',
      message: 'principal must be a non-empty "kind:id" string',
      details: { principal: '' },
    });
    expect((await m.list()).map((e) => e.paths)).toEqual([[path.join(ws, 'via-link')]]);
    expect(statSync(path.join(outside, 'keep.txt')).nlink).toBe(1);
    expect(statSync(path.join(ws, 'build', 'a.bin')).nlink).toBe(1);
  });

  it('symlinks are never followed: a link to a directory outside is deleted and restored as a link, what it reaches never linked', async () => {
    const m = manager();
    const build = makeTree('build');
    writeFileSync(path.join(outside, 'big.bin'), Buffer.alloc(1024, 7));
    const entry = await m.snapshotLinks([build], { principal: AGENT });
    // only the tree's own three files are in the store
    expect(readdirSync(path.join(store, 'blobs', `${entry.id}.d`, 'files')).sort()).toEqual(['0', '1', '2']);
    expect([statSync(path.join(outside, 'keep.txt')).nlink, statSync(path.join(outside, 'big.bin')).nlink]).toEqual([
      1, 1,
    ]);
    rmSync(build, { recursive: true });
    await m.settleLinks(entry.id);
    await m.restore(entry.id, OP);
    expect(lstatSync(path.join(build, 'out-link')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path.join(build, 'out-link'))).toBe(outside);
    expect(readdirSync(outside).sort()).toEqual(['big.bin', 'keep.txt']);
  });

  it('a tree whose parent became a symlink out of the workspace is not restored there (E_FORBIDDEN), nothing written outside', async () => {
    const m = manager();
    const parent = path.join(ws, 'parent');
    mkdirSync(parent);
    const build = path.join(parent, 'build');
    mkdirSync(build);
    writeFileSync(path.join(build, 'f.txt'), 'f\n');
    const entry = await m.snapshotLinks([build], { principal: AGENT });
    rmSync(parent, { recursive: true });
    await m.settleLinks(entry.id);
    symlinkSync(outside, parent);
    const e = await errorOf(m.restore(entry.id, OP));
    expect(e.code).toBe('E_FORBIDDEN');
    expect(readdirSync(outside)).toEqual(['keep.txt']);
    expect((await m.get(entry.id))?.restored_by).toBeUndefined();
  });

  it("an agent restores its own links backups only; another caller's is E_FORBIDDEN", async () => {
    const m = manager();
    const build = makeTree('build');
    const entry = await m.snapshotLinks([build], { principal: AGENT });
    rmSync(build, { recursive: true });
    await m.settleLinks(entry.id);
    expect(await errorOf(m.restore(entry.id, { principal: 'agent:other' }))).toEqual({
      code: 'E_FORBIDDEN',
      message: `backup "${entry.id}" was taken for another caller: agent:other may restore only its own backups`,
      details: { id: entry.id, principal: 'agent:other' },
    });
    expect(() => lstatSync(build)).toThrow();
  });

  it('a store on another file system than the tree is refused: E_DENIED_BY_POLICY not_undoable, no entry', async () => {
    const dev = statSync(os.tmpdir()).dev;
    const far = ['/dev/shm', '/run/shm'].find((d) => {
      try {
        return statSync(d).dev !== dev;
      } catch {
        return false;
      }
    });
    if (far === undefined) {
      console.warn('\n!! SKIPPED: undo-links.test.ts other-file-system case — no /dev/shm here\n');
      return;
    }
    const farStore = mkdtempSync(path.join(far, 'finger-undo-links-'));
    try {
      const m = new UndoManager({ backups_dir: farStore, workspace_roots: [ws] });
      const build = makeTree('build');
      const e = await errorOf(m.snapshotLinks([build], { principal: AGENT }));
      expect([e.code, e.details]).toEqual([
        'E_DENIED_BY_POLICY',
        { reason: 'not_undoable', why: `${build} is on another file system than the undo store` },
      ]);
      expect(await m.list()).toEqual([]);
      expect(statSync(path.join(build, 'a.bin')).nlink).toBe(1);
    } finally {
      rmSync(farStore, { recursive: true, force: true });
    }
  });
});
