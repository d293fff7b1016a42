// Hard-link snapshots (undo/link-snapshot.ts) on real temp directories: what the firewall plans
// (real paths inside the roots, words known only at run time refused, the bound counted), what is
// linked (the same inodes; symlinks recorded, never followed), what pruning keeps (exactly what
// was removed) and what a restore puts back (byte for byte, modes, links; nothing overwritten:
// E_CONFLICT). A store on another file system is refused where this machine has one (/dev/shm).
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  promises as fsp,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { LINK_DEFAULTS, planLinkSnapshot, type SnapshotWord } from '@finger/workspace';

import { applyLinks, captureLinks, linkedTrees, pruneLinks } from '../src/link-snapshot.js';

let tmp: string;
let ws: string;
let outside: string;
let store: string;

beforeEach(() => {
  tmp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'finger-links-')));
  ws = path.join(tmp, 'ws');
  outside = path.join(tmp, 'outside');
  store = path.join(tmp, 'store');
  for (const d of [ws, outside, store]) mkdirSync(d);
  writeFileSync(path.join(outside, 'keep.txt'), 'outside\n');
});

afterEach(() => {
  rmSync(tmp, { recursive: true, force: true });
});

/** A writable directory on another device than the temp directory, or undefined (then said loudly). */
function otherDevice(): string | undefined {
  const dev = statSync(os.tmpdir()).dev;
  for (const d of ['/dev/shm', '/run/shm']) {
    try {
      if (statSync(d).dev === dev) continue;
      const probe = mkdtempSync(path.join(d, 'finger-links-dev-'));
      rmSync(probe, { recursive: true });
      return d;
    } catch {
      // not here
    }
  }
  console.warn('\n!! SKIPPED: the other-file-system cases of link-snapshot.test.ts — no writable /dev/shm here\n');
  return undefined;
}
const OTHER_DEVICE = otherDevice();

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

/** A build tree: binary and executable files, a private nested file, a 0750 directory, links in and out. */
function makeBuild(): string {
  const build = path.join(ws, 'build');
  mkdirSync(path.join(build, 'sub', 'deep'), { recursive: true });
  writeFileSync(path.join(build, 'a.bin'), Buffer.from([0, 1, 2, 255, 254]));
  writeFileSync(path.join(build, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
  writeFileSync(path.join(build, 'sub', 'deep', 'secret.txt'), 'only me\n', { mode: 0o600 });
  symlinkSync('../a.bin', path.join(build, 'sub', 'rel-link'));
  symlinkSync(outside, path.join(build, 'out-dir-link'));
  chmodSync(path.join(build, 'sub'), 0o750);
  return build;
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

const tree = (word: string): SnapshotWord => ({ word, kind: 'tree' });

describe('planLinkSnapshot', () => {
  it('has the documented bounds', () => {
    expect(LINK_DEFAULTS).toEqual({ max_entries: 200_000, max_ms: 10_000 });
  });

  it('resolves the words to real paths inside the roots; a path inside another needs no snapshot of its own, nor one below a missing directory', () => {
    const build = makeBuild();
    mkdirSync(path.join(ws, 'dist'));
    expect(
      planLinkSnapshot([tree('build'), tree('build/sub'), tree('./dist'), tree('no-dir/x'), tree('gone')], ws, [ws], {
        store,
      }),
      // a missing path in an existing directory stays planned (captureLinks records nothing for it)
    ).toEqual({ paths: [build, path.join(ws, 'dist'), path.join(ws, 'gone')] });
    expect(planLinkSnapshot([{ word: '-fdx', kind: 'cwd' }], path.join(ws, 'dist'), [ws], { store })).toEqual({
      paths: [path.join(ws, 'dist')],
    });
  });

  it('refuses words known only at run time, . and .. components, the root itself and .git — each with why', () => {
    mkdirSync(path.join(ws, '.git', 'objects'), { recursive: true });
    const cases: [string, string][] = [
      ['*.o', "what '*.o' names is known only at run time"],
      ['~/build', "what '~/build' names is known only at run time"],
      ['$OUT', "what '$OUT' names is known only at run time"],
      ['`pwd`/x', "what '`pwd`/x' names is known only at run time"],
      ['', "what '' names is known only at run time"],
      ['build/../..', "'build/../..' names a directory through . or .."],
      ['../outside', "'../outside' names a directory through . or .."],
      ['.git/objects', "'.git/objects' is in the repository's .git"],
    ];
    for (const [word, reason] of cases)
      expect([word, planLinkSnapshot([tree(word)], ws, [ws], { store })]).toEqual([word, { reason }]);
    expect(planLinkSnapshot([tree('ws')], tmp, [ws], { store })).toEqual({
      reason: "'ws' is the workspace root itself",
    });
    expect(planLinkSnapshot([tree('outside')], tmp, [ws], { store })).toEqual({
      reason: `'outside' resolves to ${outside}, outside the workspace`,
    });
  });

  it('never follows the last component unless written with a trailing slash: a link out is the link, link/ is where it leads', () => {
    symlinkSync(outside, path.join(ws, 'out-link'));
    expect(planLinkSnapshot([tree('out-link')], ws, [ws], { store })).toEqual({
      paths: [path.join(ws, 'out-link')],
    });
    expect(planLinkSnapshot([tree('out-link/')], ws, [ws], { store })).toEqual({
      reason: `'out-link/' resolves to ${outside}, outside the workspace`,
    });
    // a parent that is a link out is followed (the kernel does): judged where it leads
    expect(planLinkSnapshot([tree('out-link/keep.txt')], ws, [ws], { store })).toEqual({
      reason: `'out-link/keep.txt' resolves to ${path.join(outside, 'keep.txt')}, outside the workspace`,
    });
  });

  it('counts the entries below each path against max_entries (the top counts)', () => {
    makeBuild(); // build + a.bin, run.sh, sub, out-dir-link + deep, rel-link + secret.txt = 8
    expect(planLinkSnapshot([tree('build')], ws, [ws], { store, max_entries: 8 })).toEqual({
      paths: [path.join(ws, 'build')],
    });
    expect(planLinkSnapshot([tree('build')], ws, [ws], { store, max_entries: 7 })).toEqual({
      reason: 'more than 7 entries to snapshot',
    });
  });

  it('refuses a store that does not exist, and one on another file system than the trees', () => {
    makeBuild();
    expect(planLinkSnapshot([tree('build')], ws, [path.join(tmp, 'nope')], { store })).toEqual({
      reason: 'a workspace root does not exist',
    });
    if (OTHER_DEVICE === undefined) return;
    const far = mkdtempSync(path.join(OTHER_DEVICE, 'finger-links-store-'));
    try {
      expect(planLinkSnapshot([tree('build')], ws, [ws], { store: path.join(far, 'backups') })).toEqual({
        reason: `${path.join(ws, 'build')} is on another file system than finger's undo store (hard links cannot reach it)`,
      });
    } finally {
      rmSync(far, { recursive: true, force: true });
    }
  });
});

describe('captureLinks, pruneLinks, applyLinks', () => {
  const bounds = LINK_DEFAULTS;

  it('links every file (the same inode), records directories and symlinks without following them, and counts the bytes', async () => {
    const build = makeBuild();
    const dir = path.join(store, 's1');
    expect(await captureLinks([build], dir, bounds)).toBe(5 + 18 + 8);
    const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8'));
    expect(manifest.trees.map((t: { path: string }) => t.path)).toEqual([build]);
    const items = manifest.trees[0].items.map((i: { rel: string; type: string; n?: number; target?: string }) => [
      i.rel,
      i.type,
      i.n ?? i.target ?? null,
    ]);
    expect(items).toEqual([
      ['', 'dir', null],
      ['a.bin', 'file', 0],
      ['out-dir-link', 'symlink', outside],
      ['run.sh', 'file', 1],
      ['sub', 'dir', null],
      ['sub/deep', 'dir', null],
      ['sub/deep/secret.txt', 'file', 2],
      ['sub/rel-link', 'symlink', '../a.bin'],
    ]);
    // hard links: the store's files are the tree's inodes; nothing of what the link reaches was linked
    expect(statSync(path.join(dir, 'files', '0')).ino).toBe(statSync(path.join(build, 'a.bin')).ino);
    expect(statSync(path.join(build, 'a.bin')).nlink).toBe(2);
    expect(readdirSync(path.join(dir, 'files')).sort()).toEqual(['0', '1', '2']);
    expect(statSync(path.join(outside, 'keep.txt')).nlink).toBe(1);
    expect(await linkedTrees(dir)).toEqual([build]);
  });

  it('past max_entries (or the time bound) the snapshot is abandoned: E_DENIED_BY_POLICY not_undoable, nothing left behind', async () => {
    const build = makeBuild();
    const dir = path.join(store, 's2');
    expect(await errorOf(captureLinks([build], dir, { max_entries: 3, max_ms: 10_000 }))).toEqual({
      code: 'E_DENIED_BY_POLICY',
      message:
        'the delete was let through because it could be undone, but its snapshot failed: more than 3 entries; not run',
      details: { reason: 'not_undoable', why: 'more than 3 entries' },
    });
    expect(readdirSync(store)).toEqual([]);
    expect(statSync(path.join(build, 'a.bin')).nlink).toBe(1);
    // a bound already passed when the first entry is linked (deterministic: -1 ms)
    expect((await errorOf(captureLinks([build], dir, { max_entries: 100, max_ms: -1 }))).details).toEqual({
      reason: 'not_undoable',
      why: 'linking took longer than -1 ms',
    });
    expect(readdirSync(store)).toEqual([]);
  });

  it('refuses a tree on another file system than the store, leaving nothing behind', async () => {
    if (OTHER_DEVICE === undefined) return;
    const far = mkdtempSync(path.join(OTHER_DEVICE, 'finger-links-tree-'));
    try {
      writeFileSync(path.join(far, 'f.txt'), 'far\n');
      const dir = path.join(store, 's3');
      expect(await errorOf(captureLinks([far], dir, bounds))).toEqual({
        code: 'E_DENIED_BY_POLICY',
        message: `the delete was let through because it could be undone, but its snapshot failed: ${far} is on another file system than the undo store; not run`,
        details: { reason: 'not_undoable', why: `${far} is on another file system than the undo store` },
      });
      expect(readdirSync(store)).toEqual([]);
    } finally {
      rmSync(far, { recursive: true, force: true });
    }
  });

  it('pruning keeps exactly what was removed; untouched files lose the extra link; nothing removed leaves 0 entries', async () => {
    const build = makeBuild();
    const dir = path.join(store, 's4');
    await captureLinks([build], dir, bounds);
    // the "command": removes run.sh and sub/deep, replaces a.bin by a new file at the same path
    rmSync(path.join(build, 'run.sh'));
    rmSync(path.join(build, 'sub', 'deep'), { recursive: true });
    rmSync(path.join(build, 'a.bin'));
    writeFileSync(path.join(build, 'a.bin'), 'rebuilt');
    expect(await pruneLinks(dir)).toEqual({ bytes: 5 + 18 + 8, entries: 4 });
    const kept = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')).trees[0].items.map(
      (i: { rel: string }) => i.rel,
    );
    expect(kept).toEqual(['a.bin', 'run.sh', 'sub/deep', 'sub/deep/secret.txt']);
    expect(readdirSync(path.join(dir, 'files')).sort()).toEqual(['0', '1', '2']);

    const untouched = path.join(store, 's5');
    const other = path.join(ws, 'other');
    mkdirSync(other);
    writeFileSync(path.join(other, 'x.txt'), 'x');
    await captureLinks([other], untouched, bounds);
    expect(await pruneLinks(untouched)).toEqual({ bytes: 0, entries: 0 });
    expect(readdirSync(path.join(untouched, 'files'))).toEqual([]);
    expect(statSync(path.join(other, 'x.txt')).nlink).toBe(1);
    expect(await linkedTrees(untouched)).toEqual([]);
  });

  it('restores a deleted tree exactly: content, modes, the same inodes, symlinks as they were; what they point to untouched', async () => {
    const build = makeBuild();
    const before = treeOf(build);
    const ino = statSync(path.join(build, 'sub', 'deep', 'secret.txt')).ino;
    const dir = path.join(store, 's6');
    await captureLinks([build], dir, bounds);
    rmSync(build, { recursive: true }); // rm -r removes links, never what they reach
    await pruneLinks(dir);
    const checked: string[] = [];
    await applyLinks(dir, async (top) => {
      checked.push(top);
    });
    expect(checked).toEqual([build]);
    expect(treeOf(build)).toEqual(before);
    expect(statSync(path.join(build, 'sub', 'deep', 'secret.txt')).ino).toBe(ino);
    expect(readFileSync(path.join(outside, 'keep.txt'), 'utf8')).toBe('outside\n');
  });

  it('restores into a directory that is read-only for its owner (modes set last, deepest first)', async () => {
    const top = path.join(ws, 'ro');
    mkdirSync(path.join(top, 'inner'), { recursive: true });
    writeFileSync(path.join(top, 'inner', 'f.txt'), 'f\n');
    chmodSync(path.join(top, 'inner'), 0o500);
    const before = treeOf(top);
    const dir = path.join(store, 's7');
    await captureLinks([top], dir, bounds);
    chmodSync(path.join(top, 'inner'), 0o700);
    rmSync(top, { recursive: true });
    await pruneLinks(dir);
    await applyLinks(dir, async () => undefined);
    expect(treeOf(top)).toEqual(before);
    chmodSync(path.join(top, 'inner'), 0o700); // lets afterEach remove it as any user
  });

  it('a path made again is never overwritten: E_CONFLICT with the paths, and nothing restored; a directory made again is filled', async () => {
    const build = makeBuild();
    const dir = path.join(store, 's8');
    await captureLinks([build], dir, bounds);
    rmSync(build, { recursive: true });
    await pruneLinks(dir);
    mkdirSync(path.join(build, 'sub'), { recursive: true });
    writeFileSync(path.join(build, 'a.bin'), 'new');
    symlinkSync('elsewhere', path.join(build, 'sub', 'rel-link'));
    for (const [p, mode] of [
      [build, 0o755],
      [path.join(build, 'sub'), 0o755],
      [path.join(build, 'a.bin'), 0o644],
    ] as const)
      chmodSync(p, mode);
    const e = await errorOf(applyLinks(dir, async () => undefined));
    expect(e).toEqual({
      code: 'E_CONFLICT',
      message: `cannot undo the delete: 2 of its paths exist again (${path.join(build, 'a.bin')}, ${path.join(build, 'sub', 'rel-link')}); move them away first — nothing was restored`,
      details: { paths: [path.join(build, 'a.bin'), path.join(build, 'sub', 'rel-link')], count: 2 },
    });
    expect(treeOf(build)).toEqual({
      '.': 'dir 755',
      'a.bin': `file 644 ${Buffer.from('new').toString('base64')}`,
      sub: 'dir 755',
      'sub/rel-link': 'link -> elsewhere',
    });
    // moved away, the restore fills the directories made again (keeping their own modes)
    rmSync(path.join(build, 'a.bin'));
    rmSync(path.join(build, 'sub', 'rel-link'));
    await applyLinks(dir, async () => undefined);
    expect(readlinkSync(path.join(build, 'sub', 'rel-link'))).toBe('../a.bin');
    expect(readFileSync(path.join(build, 'sub', 'deep', 'secret.txt'), 'utf8')).toBe('only me\n');
    expect((statSync(path.join(build, 'sub')).mode & 0o7777).toString(8)).toBe('755');
  });

  it('a check that refuses a tree stops the restore before anything is written', async () => {
    const build = makeBuild();
    const dir = path.join(store, 's9');
    await captureLinks([build], dir, bounds);
    rmSync(build, { recursive: true });
    await pruneLinks(dir);
    const refusal = Object.assign(new Error('moved'), { code: 'E_FORBIDDEN' });
    expect((await errorOf(applyLinks(dir, () => Promise.reject(refusal)))).code).toBe('E_FORBIDDEN');
    expect(() => lstatSync(build)).toThrow();
  });

  it('a damaged manifest is E_STORE_UNAVAILABLE', async () => {
    const dir = path.join(store, 's10');
    mkdirSync(dir);
    await fsp.writeFile(path.join(dir, 'manifest.json'), '{not json');
    expect((await errorOf(pruneLinks(dir))).code).toBe('E_STORE_UNAVAILABLE');
    expect((await errorOf(applyLinks(dir, async () => undefined))).code).toBe('E_STORE_UNAVAILABLE');
  });
});
