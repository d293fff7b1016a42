// Where a path leads on disk through symbolic links: a cloned repository's `docs -> /root/.ssh`
// makes `cat docs/id_rsa` a key read, a dangling `link -> ~/.bashrc` makes `echo x > link` a
// start-up file write. The path is followed one component at a time (lstat, readlink), as the
// kernel does, so a link whose target does not exist yet still counts (a write creates it), and
// the parts past the last existing one are kept as written (`docs/new`). /proc, /dev and /sys are
// not followed (their links name the process that reads them, or devices): the path stays as
// written from there. The work is bounded per command (MAX_RESOLUTIONS paths, MAX_LOOKUPS
// lookups; a path asked again costs nothing); past it, paths are judged as written. Nothing here throws: a missing, unreadable or
// looping path is an ordinary answer. Every answer is kept (probes) so that a cached assessment
// can be checked against the disk again before it is reused (risk-assessor.ts).

import { lstatSync, readlinkSync } from 'node:fs';
import { posix } from 'node:path';

import type { KnownHomes } from './known-homes.js';

/** At most this many paths looked up per command. */
export const MAX_RESOLUTIONS = 64;
/** At most this many lstat/readlink lookups per command. */
const MAX_LOOKUPS = 1024;
/** Links followed in one path before it counts as a loop (Linux's MAXSYMLINKS). */
const MAX_LINKS = 40;
/** Components walked in one path (its own and its links'). */
const MAX_STEPS = 256;
const VIRTUAL = /^\/(?:proc|dev|sys)(?:\/|$)/;

/** One lookup: the path as asked, and its answer (null: no link on the way, or not looked up). */
export type Probe = readonly [path: string, real: string | null];

/** One lookup's memo: true: exists (no link); false: missing or unreadable; a string: a link's target. */
type Entry = boolean | string;

/** The symlink resolver of one command's assessment. */
export class RealPaths {
  readonly probes: Probe[] = [];
  readonly #memo = new Map<string, Entry>();
  /** answers so far (asking again is free: several readings of a command ask the same) */
  readonly #answers = new Map<string, string | null>();
  #left = MAX_RESOLUTIONS;
  #lookups = MAX_LOOKUPS;
  readonly #trusted: string | undefined;
  /** the homes of the instance that judges: where `~` stands on disk, and how the rules that use this resolver read paths */
  readonly homes: KnownHomes;

  /**
   * `trusted`: a real directory (the command's starting directory, which the sandbox resolved):
   * it and its parents are taken as they are, with no lookup, and asking for one of them is no
   * probe — a command that names no path rests on nothing on disk. `homes`: those of the
   * instance that judges (`~` stands for its user's home).
   */
  constructor(homes: KnownHomes, trusted?: string) {
    this.homes = homes;
    if (trusted === undefined || !trusted.startsWith('/') || trusted.length > 4096) return;
    this.#trusted = trusted;
    for (let at = trusted.indexOf('/', 1); ; at = trusted.indexOf('/', at + 1)) {
      this.#memo.set(at < 0 ? trusted : trusted.slice(0, at), true);
      if (at < 0) break;
    }
  }

  /**
   * Where `path` (absolute, or `~`/`~/…`) leads when a symlink on the way takes it elsewhere:
   * the real path (absolute); null when no link was followed, or it was not looked up.
   */
  resolve(path: string): string | null {
    const known = this.#answers.get(path);
    if (known !== undefined) return known;
    if (this.#left <= 0 || this.#lookups <= 0) return null;
    const abs = path === '~' || path.startsWith('~/') ? this.homes.homeOnDisk() + path.slice(1) : path;
    if (!abs.startsWith('/') || abs.length > 4096 || VIRTUAL.test(abs)) return null;
    if (this.#memo.get(abs) === true && this.#trusted !== undefined && isWithin(abs, this.#trusted)) return null;
    this.#left--;
    const real = this.#walk(abs);
    this.probes.push([path, real]);
    this.#answers.set(path, real);
    return real;
  }

  /** Whether every probe still gets the same answer (the disk has not changed under it). */
  static unchanged(probes: readonly Probe[], homes: KnownHomes, trusted?: string): boolean {
    if (probes.length === 0) return true;
    const again = new RealPaths(homes, trusted);
    return probes.every(([p, real]) => again.resolve(p) === real);
  }

  #entry(p: string): Entry {
    const known = this.#memo.get(p);
    if (known !== undefined) return known;
    this.#lookups--;
    let e: Entry = false;
    try {
      const st = lstatSync(p, { throwIfNoEntry: false });
      if (st !== undefined) e = st.isSymbolicLink() ? readlinkSync(p) : true;
    } catch {
      e = false; // EACCES, ENOTDIR, ELOOP…: taken as written from here
    }
    this.#memo.set(p, e);
    return e;
  }

  #walk(abs: string): string | null {
    // the components still to walk, the next one last
    const rest = abs.split('/').reverse();
    let cur = '';
    let links = 0;
    for (let steps = 0; rest.length > 0; steps++) {
      if (steps > MAX_STEPS || this.#lookups <= 0) return null;
      const part = rest.pop()!;
      if (part === '' || part === '.') continue;
      if (part === '..') {
        cur = cur.slice(0, cur.lastIndexOf('/'));
        continue;
      }
      const next = `${cur}/${part}`;
      const e = VIRTUAL.test(next) ? false : this.#entry(next);
      if (e === true) {
        cur = next;
        continue;
      }
      if (e === false) {
        // missing (or not to be followed): the rest as written
        if (links === 0) return null;
        return posix.normalize([next, ...rest.reverse()].join('/'));
      }
      if (++links > MAX_LINKS) return null;
      if (e.startsWith('/')) cur = '';
      rest.push(...e.split('/').reverse());
    }
    return links === 0 ? null : cur === '' ? '/' : cur;
  }
}

/** Whether `dir` is `trusted` or one of its parents. */
function isWithin(dir: string, trusted: string): boolean {
  return trusted === dir || (trusted.startsWith(dir) && trusted[dir.length] === '/');
}
