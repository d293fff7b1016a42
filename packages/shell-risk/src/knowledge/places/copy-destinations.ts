// Where a copy or move into a directory writes: `cp /tmp/x/.bashrc ~` writes `~/.bashrc` — the
// destination names a directory and each file keeps its own name. `cp -t DIR SRC…`,
// `--target-directory=DIR`, or the last operand when there are several sources or it is spelt as
// a directory (`~`, a trailing `/`, `.`). A source spelt as a directory's contents (`dir/`,
// `dir/.`) brings names not known here. Pure.

import type { SimpleCommand } from '../../command-model.js';
import { parseArgs } from '../../options/options.js';
import { COPIERS } from './written-files.js';

/** At most this many sources are followed into their destination. */
const MAX_SOURCES = 64;

/** What a copy writes into a directory. */
export interface CopyInto {
  /** the destination directory as written */
  dir: string;
  /** the files it writes there (`dir/<source's name>`) */
  files: string[];
  /** a source is a directory's contents (`src/`, `src/.`): names not known */
  contents: boolean;
}

/** A destination spelt as a directory: `~`, `~user`, `.`, `..`, or ending in `/`. */
function spelledAsDirectory(w: string): boolean {
  return /^~[\w.-]*$/.test(w) || w === '.' || w === '..' || w.endsWith('/') || w.endsWith('/.');
}

/** The name a source keeps in its destination, or null for a directory's contents. */
function nameOf(source: string): string | null {
  if (source.endsWith('/') || source.endsWith('/.') || source === '.') return null;
  const name = source.slice(source.lastIndexOf('/') + 1);
  return name === '' || name === '..' ? null : name;
}

/** What `seg` (a copier) writes into a directory; null when it writes to a named file only. */
export function copyInto(seg: SimpleCommand): CopyInto | null {
  // scp too: its local destination is written as cp's is
  if (!COPIERS.has(seg.program) && seg.program !== 'scp') return null;
  const p = parseArgs(seg.program, seg.argv);
  const target = p.options.get('target-directory')?.[0];
  let dir: string;
  let sources: readonly string[];
  if (target !== undefined) {
    dir = target;
    sources = p.positionals;
  } else {
    if (p.positionals.length < 2) return null;
    dir = p.positionals[p.positionals.length - 1] as string;
    sources = p.positionals.slice(0, -1);
    if (sources.length === 1 && !spelledAsDirectory(dir)) return null;
  }
  // scp/rsync remote destinations (host:path) are not this machine
  if (/^[^/]*:/.test(dir)) return null;
  const base = dir.replace(/\/+\.?$/, '') || '/';
  const files: string[] = [];
  let contents = false;
  for (const s of sources.slice(0, MAX_SOURCES)) {
    const name = nameOf(s.replace(/^[^/]*:/, ''));
    if (name === null) contents = true;
    else files.push(base === '/' ? `/${name}` : `${base}/${name}`);
  }
  return { dir, files, contents };
}
