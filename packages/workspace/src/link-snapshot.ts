// Hard-link snapshots: the undo of a shell command that only unlinks (rm -r, find -delete, git
// clean) in the workspace-write sandbox. Before the run every file of the trees it may delete is
// hard-linked into the undo store (directories recorded, symlinks recorded as symlinks, never
// followed); after the run what is still in place (same device and inode at the same path) is
// dropped, so the snapshot keeps exactly what the command removed. Unlinking never changes an
// inode's content, so a link is an exact pre-image of a deleted file — content, mode, owner and
// times. That holds only for programs that delete: one that rewrote a file in place (same inode)
// would change the "snapshot" with it, so nothing else is ever snapshotted this way.

import { lstatSync, promises as fsp, readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

import { FingerError } from '@finger/protocol';

import { atomicWriteFile } from './atomic-write.js';
import { isInside } from './workspace-path.js';

/** Bounds of one snapshot (every tree of one call together). */
export interface LinkBounds {
  /** Most entries (files, directories, symlinks) linked or recorded. Default 200,000. */
  max_entries: number;
  /** Most milliseconds spent linking; past it the snapshot is abandoned. Default 10,000. */
  max_ms: number;
}

/** Defaults of {@link LinkBounds}. */
export const LINK_DEFAULTS: LinkBounds = Object.freeze({ max_entries: 200_000, max_ms: 10_000 });

/** How a word is snapshotted: the path it names (`rm -r`, `find` roots), or the directory a program cleans (`git clean`). */
export interface SnapshotWord {
  word: string;
  /** `tree`: the path as named, its last component not followed; `cwd`: the directory it runs in (may be a root). */
  kind: 'tree' | 'cwd';
}

/** One recorded member of a tree; `rel` '' is the tree's top. */
interface LinkItem {
  rel: string;
  type: 'dir' | 'file' | 'symlink';
  mode: number;
  dev?: number;
  ino?: number;
  size?: number;
  target?: string;
  /** Index of the hard link under `files/` (files only). */
  n?: number;
}

/** The manifest of a links snapshot: per tree, its members in pre-order (parents first). */
export interface LinkManifest {
  trees: { path: string; items: LinkItem[] }[];
}

const GLOB = /[*?[\]{}]/;

/** The device of `p`, or of its nearest existing ancestor. */
function deviceOf(p: string): number {
  for (let cur = p; ; cur = path.dirname(cur)) {
    try {
      return statSync(cur).dev;
    } catch {
      if (path.dirname(cur) === cur) throw new Error(`no existing ancestor of ${p}`);
    }
  }
}

/**
 * Resolves the words a deleting command names to the real paths to snapshot, or says why they
 * cannot be (then the command is not undoable and stays held). Synchronous and bounded: realpath
 * and lstat of each word, then a count of the entries below it (at most `max_entries`). A `tree`
 * word resolves its parent (the last component is what the program removes; it is followed only
 * when written with a trailing slash), must lie strictly inside a root and outside `.git`; a `cwd`
 * word is `cwd` itself. Words with globs, `~`, `.`/`..` components are refused: what they name is
 * known only when the shell expands them. A path that does not exist needs no snapshot.
 */
export function planLinkSnapshot(
  words: readonly SnapshotWord[],
  cwd: string,
  roots: readonly string[],
  o: { store: string; max_entries?: number },
): { paths: string[] } | { reason: string } {
  const max = o.max_entries ?? LINK_DEFAULTS.max_entries;
  let realRoots: string[];
  try {
    realRoots = roots.map((r) => realpathSync(r));
  } catch {
    return { reason: 'a workspace root does not exist' };
  }
  const paths: string[] = [];
  for (const { word, kind } of words) {
    let target: string;
    if (kind === 'cwd') {
      target = cwd;
    } else {
      if (word === '' || word.startsWith('~') || GLOB.test(word) || word.includes('$') || word.includes('`'))
        return { reason: `what '${word}' names is known only at run time` };
      const parts = word.split('/').filter((s, i) => s !== '' && !(i === 0 && s === '.'));
      if (parts.length === 0 || parts.some((s) => s === '.' || s === '..'))
        return { reason: `'${word}' names a directory through . or ..` };
      const abs = path.resolve(cwd, word);
      try {
        target = word.endsWith('/')
          ? realpathSync(abs)
          : path.join(realpathSync(path.dirname(abs)), path.basename(abs));
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === 'ENOENT' || code === 'ENOTDIR') continue; // nothing there to delete
        return { reason: `'${word}' cannot be resolved (${code ?? String(e)})` };
      }
    }
    const root = realRoots.find((r) => isInside(target, r));
    if (root === undefined) return { reason: `'${word}' resolves to ${target}, outside the workspace` };
    if (kind === 'tree' && target === root) return { reason: `'${word}' is the workspace root itself` };
    if (path.relative(root, target).split(path.sep).includes('.git'))
      return { reason: `'${word}' is in the repository's .git` };
    paths.push(target);
  }
  // a path inside another one is in that one's snapshot
  const unique = [...new Set(paths)].filter((p, _i, all) => !all.some((q) => q !== p && isInside(p, q)));
  let storeDev: number;
  try {
    storeDev = deviceOf(o.store);
  } catch {
    return { reason: 'the undo store has no existing directory' };
  }
  let count = 0;
  for (const p of unique) {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      continue;
    }
    if (st.dev !== storeDev)
      return { reason: `${p} is on another file system than finger's undo store (hard links cannot reach it)` };
    count++;
    if (st.isDirectory()) {
      const stack = [p];
      while (stack.length > 0 && count <= max) {
        const dir = stack.pop()!;
        let names;
        try {
          names = readdirSync(dir, { withFileTypes: true });
        } catch (e) {
          return { reason: `${dir} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})` };
        }
        count += names.length;
        for (const d of names) if (d.isDirectory()) stack.push(path.join(dir, d.name));
      }
    }
    if (count > max) return { reason: `more than ${max} entries to snapshot` };
  }
  return { paths: unique };
}

function notUndoable(reason: string, details: Record<string, unknown> = {}): FingerError {
  return new FingerError(
    'E_DENIED_BY_POLICY',
    `the delete was let through because it could be undone, but its snapshot failed: ${reason}; not run`,
    { reason: 'not_undoable', why: reason, ...details },
  );
}

/**
 * Hard-links the trees at `paths` (real paths, planned by {@link planLinkSnapshot}) into `dir`
 * (created; must not exist): `files/<n>` per file, `manifest.json` for the rest. Checks again that
 * every path is on `dir`'s device and the bounds hold; throws E_DENIED_BY_POLICY (details
 * `{reason: 'not_undoable'}`) and leaves nothing behind when not. Returns the manifest's bytes.
 */
export async function captureLinks(paths: readonly string[], dir: string, bounds: LinkBounds): Promise<number> {
  const start = Date.now();
  const files = path.join(dir, 'files');
  await fsp.mkdir(files, { recursive: true, mode: 0o700 });
  const dev = (await fsp.stat(dir)).dev;
  const manifest: LinkManifest = { trees: [] };
  let count = 0;
  let n = 0;
  let bytes = 0;
  try {
    for (const top of paths) {
      const items: LinkItem[] = [];
      const visit = async (rel: string): Promise<void> => {
        const abs = rel === '' ? top : path.join(top, rel);
        let st;
        try {
          st = await fsp.lstat(abs);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
          throw e;
        }
        if (++count > bounds.max_entries) throw notUndoable(`more than ${bounds.max_entries} entries`);
        if (Date.now() - start > bounds.max_ms) throw notUndoable(`linking took longer than ${bounds.max_ms} ms`);
        if (st.dev !== dev) throw notUndoable(`${abs} is on another file system than the undo store`);
        const mode = st.mode & 0o7777;
        if (st.isDirectory()) {
          items.push({ rel, type: 'dir', mode, dev: st.dev, ino: st.ino });
          for (const name of (await fsp.readdir(abs)).sort()) await visit(rel === '' ? name : path.join(rel, name));
        } else if (st.isSymbolicLink()) {
          items.push({ rel, type: 'symlink', mode, target: await fsp.readlink(abs) });
        } else {
          await fsp.link(abs, path.join(files, String(n)));
          items.push({ rel, type: 'file', mode, dev: st.dev, ino: st.ino, size: st.size, n });
          bytes += st.size;
          n++;
        }
      };
      await visit('');
      if (items.length > 0) manifest.trees.push({ path: top, items });
    }
    await atomicWriteFile(path.join(dir, 'manifest.json'), Buffer.from(JSON.stringify(manifest)), { mode: 0o600 });
    return bytes;
  } catch (e) {
    await fsp.rm(dir, { recursive: true, force: true });
    if ((e as FingerError).code === 'E_DENIED_BY_POLICY') throw e;
    throw notUndoable((e as Error).message);
  }
}

async function readManifest(dir: string): Promise<LinkManifest> {
  try {
    return JSON.parse(await fsp.readFile(path.join(dir, 'manifest.json'), 'utf8')) as LinkManifest;
  } catch (e) {
    throw new FingerError('E_STORE_UNAVAILABLE', `backup store is damaged: ${dir}: ${(e as Error).message}`);
  }
}

/** The path a tree member had. */
const at = (top: string, rel: string): string => (rel === '' ? top : path.join(top, rel));

/**
 * After the run: drops from the snapshot in `dir` what is still in place — a file with the same
 * device and inode at its path, a symlink with the same target, a directory that still exists —
 * so it keeps exactly what was removed. Returns the bytes and entries kept (0 entries: nothing
 * was deleted).
 */
export async function pruneLinks(dir: string): Promise<{ bytes: number; entries: number }> {
  const manifest = await readManifest(dir);
  let bytes = 0;
  let entries = 0;
  for (const tree of manifest.trees) {
    const kept: LinkItem[] = [];
    for (const item of tree.items) {
      const st = await fsp.lstat(at(tree.path, item.rel)).catch(() => null);
      let still = false;
      if (st !== null) {
        if (item.type === 'dir') still = st.isDirectory();
        else if (item.type === 'symlink')
          still = st.isSymbolicLink() && (await fsp.readlink(at(tree.path, item.rel))) === item.target;
        else still = st.dev === item.dev && st.ino === item.ino;
      }
      if (!still) {
        kept.push(item);
        bytes += item.size ?? 0;
      } else if (item.n !== undefined) await fsp.rm(path.join(dir, 'files', String(item.n)), { force: true });
    }
    tree.items = kept;
    entries += kept.length;
  }
  manifest.trees = manifest.trees.filter((t) => t.items.length > 0);
  await atomicWriteFile(path.join(dir, 'manifest.json'), Buffer.from(JSON.stringify(manifest)), { mode: 0o600 });
  return { bytes, entries };
}

/** The top paths a links snapshot holds. */
export async function linkedTrees(dir: string): Promise<string[]> {
  return (await readManifest(dir)).trees.map((t) => t.path);
}

/**
 * Puts the removed members back: directories recreated (modes last, deepest first), files linked
 * back (the same inodes: content, mode, owner, times), symlinks recreated. Nothing is overwritten:
 * when a path to restore exists again (other than a directory), nothing is restored and it throws
 * E_CONFLICT with `{paths}` (the first 20) and `count`. `check(top)` must throw when a tree's
 * place now resolves outside the workspace.
 */
export async function applyLinks(dir: string, check: (top: string) => Promise<void>): Promise<void> {
  const manifest = await readManifest(dir);
  const conflicts: string[] = [];
  for (const tree of manifest.trees) {
    await check(tree.path);
    for (const item of tree.items) {
      const st = await fsp.lstat(at(tree.path, item.rel)).catch(() => null);
      if (st !== null && !(item.type === 'dir' && st.isDirectory())) conflicts.push(at(tree.path, item.rel));
    }
  }
  if (conflicts.length > 0)
    throw new FingerError(
      'E_CONFLICT',
      `cannot undo the delete: ${conflicts.length} of its paths exist again (${conflicts.slice(0, 3).join(', ')}${conflicts.length > 3 ? ', …' : ''}); move them away first — nothing was restored`,
      { paths: conflicts.slice(0, 20), count: conflicts.length },
    );
  const dirs: { p: string; mode: number }[] = [];
  for (const tree of manifest.trees) {
    for (const item of tree.items) {
      const p = at(tree.path, item.rel);
      try {
        if (item.type === 'dir') {
          // a directory made again since keeps its own mode
          const made = await fsp.mkdir(p, { mode: 0o700 }).then(
            () => true,
            (e: NodeJS.ErrnoException) => {
              if (e.code !== 'EEXIST') throw e;
              return false;
            },
          );
          if (made) dirs.push({ p, mode: item.mode });
        } else if (item.type === 'symlink') await fsp.symlink(item.target ?? '', p);
        else await fsp.link(path.join(dir, 'files', String(item.n)), p);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'EEXIST')
          throw new FingerError('E_CONFLICT', `cannot undo the delete: ${p} was created while restoring`, {
            paths: [p],
            count: 1,
          });
        throw e;
      }
    }
  }
  for (const d of dirs.reverse()) await fsp.chmod(d.p, d.mode);
}
