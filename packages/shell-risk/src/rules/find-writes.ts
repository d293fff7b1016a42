// What find writes and deletes itself, beside what it runs: `-fprint FILE`, `-fprint0 FILE`,
// `-fls FILE` and `-fprintf FILE FORMAT` create (truncate) FILE, as `sort -o FILE` does — a
// start-up file, a credential store or finger's own files there is a dangerous write; `-delete`
// (or `-exec rm … {}`) under a place sensitive to write (finger's home with its audit log,
// backups and events, `~/.ssh`, `/etc`…) or under a directory holding one that is no broad
// target (`find /srv/x -name '*.jsonl' -delete` with finger's home in /srv/x) is dangerous
// whatever the filter: a name test (`-name '*.jsonl'`) keeps exactly the files that matter there.

import type { CommandModel, SimpleCommand } from '../command-model.js';
import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { holdsSensitive, normalizePath, sensitiveWriteTarget } from '../knowledge/places/paths.js';
import { findRoots } from '../wrappers/find-exec.js';

/** Primaries whose next word is a file find writes. */
const FIND_OUTPUTS: ReadonlySet<string> = new Set(['-fprint', '-fprint0', '-fls', '-fprintf']);
const FIND_EXEC: ReadonlySet<string> = new Set(['-exec', '-execdir', '-ok', '-okdir']);
/** Programs that remove (or empty) the file `{}` they are given. */
const REMOVERS: ReadonlySet<string> = new Set(['rm', 'unlink', 'shred', 'rmdir', 'truncate', 'srm', 'wipe']);

function quote(s: string): string {
  return `'${s.length > 80 ? `${s.slice(0, 77)}…` : s}'`;
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/** How find deletes what it visits (`-delete`, `-exec rm`), or null. */
function deletion(argv: readonly string[]): string | null {
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i] as string;
    if (w === '-delete') return 'find -delete';
    if (FIND_EXEC.has(w)) {
      const prog = basename(argv[i + 1] ?? '');
      if (REMOVERS.has(prog) && argv.slice(i + 2).some((a) => a.includes('{}'))) return `find ${w} ${prog}`;
    }
  }
  return null;
}

/** The sensitive place a deleting find's root is in (or holds, for a root that is no broad target), or null. */
function sensitiveRoot(root: string, homes: KnownHomes): string | null {
  const at = sensitiveWriteTarget(root, homes);
  if (at !== null) return at;
  const n = normalizePath(root, homes);
  // home, `/` and top-level directories hold everything: with a filter they keep the rule of
  // destruction.ts (a name test is a filter there); a child of home (`~/.finger`) does not
  if (n === null || n === '~' || /^\/[^/]*$/.test(n)) return null;
  return holdsSensitive(n, homes) ? `it holds places sensitive to write` : null;
}

function findRules(seg: SimpleCommand, i: number, add: (reason: string) => void, homes: KnownHomes): void {
  const label = `segment ${i + 1}`;
  const a = seg.argv;
  for (let k = 1; k < a.length - 1; k++) {
    const w = a[k] as string;
    if (!FIND_OUTPUTS.has(w)) continue;
    const file = a[k + 1] as string;
    const sens = sensitiveWriteTarget(file, homes);
    if (sens !== null) add(`${label}: find ${w} writes to ${quote(file)} (${sens})`);
  }
  const how = deletion(a);
  if (how === null) return;
  const dynamic = new Set(seg.dynamic);
  const words = a.map((text, k) => ({ text, dynamic: dynamic.has(k) }));
  for (const root of findRoots(words)) {
    if (root.dynamic) continue;
    const place = sensitiveRoot(root.text, homes);
    if (place !== null) add(`${label}: ${how} under ${quote(root.text)} (${place}), whatever its filters`);
  }
}

/** Adds a dangerous finding for each find that writes a sensitive file or deletes under a sensitive place. */
export function findWriteRules(model: CommandModel, add: (reason: string) => void, homes: KnownHomes): void {
  model.segments.forEach((seg, i) => {
    if (seg.program === 'find' && !seg.wrapper) findRules(seg, i, add, homes);
  });
}
