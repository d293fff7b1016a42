// Options that run a command in another directory: `git -C DIR` (and `--work-tree`), `tar -C DIR`
// / `--directory=DIR`, `make -C DIR` / `--directory=DIR`. Relative paths the command is given
// after them lead from DIR, as after a `cd` (`tar -C ~ -cf x.tar .ssh` archives ~/.ssh); cwd-paths.ts
// follows them as it follows a `cd`. Pure.

import type { SimpleCommand } from '../command-model.js';
import { GIT_GLOBAL_LONG_ARG } from './git-options.js';

/** One directory option of a command. */
export interface DirectoryOption {
  /** the argv index of the word holding the directory (the option's own word when joined: `-C~`) */
  index: number;
  /** the directory as written */
  dir: string;
  /** the directory the command started in still counts (tar opens its archive there) */
  keep: boolean;
}

/** Where a command's directory options move its relative paths. */
export interface DirectoryOptions {
  options: DirectoryOption[];
  /**
   * `after`: each option moves the words after it (git's global options, tar's order-sensitive
   * `-C`); `all`: the last one moves every word (make reads all its options before it starts).
   */
  scope: 'after' | 'all';
}

const TAR = new Set(['tar', 'gtar', 'bsdtar']);
const TAR_LONG = /^--dir(?:e(?:c(?:t(?:o(?:r(?:y)?)?)?)?)?)?(?:=(.*))?$/s;

/** tar's `-C DIR` / `--directory=DIR` values (also in a cluster: `-xzC ~`), with their argv indexes. */
export function tarDirectoryOptions(argv: readonly string[]): DirectoryOption[] {
  const out: DirectoryOption[] = [];
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i] as string;
    const long = TAR_LONG.exec(a);
    if (long !== null) {
      if (long[1] !== undefined) out.push({ index: i, dir: long[1], keep: true });
      else if (i + 1 < argv.length) out.push({ index: ++i, dir: argv[i] as string, keep: true });
    } else if (/^-[a-zA-Z]*C$/.test(a)) {
      if (i + 1 < argv.length) out.push({ index: ++i, dir: argv[i] as string, keep: true });
    } else if (/^-[a-zA-Z]*C./.test(a)) out.push({ index: i, dir: a.slice(a.indexOf('C') + 1), keep: true });
  }
  return out;
}

/**
 * git's global `-C DIR` (each relative to the one before) and `--work-tree=DIR`, and the argv
 * index of its subcommand (argv.length when there is none).
 */
function gitGlobals(argv: readonly string[]): { options: DirectoryOption[]; subcommand: number } {
  const out: DirectoryOption[] = [];
  let i = 1;
  for (; i < argv.length; i++) {
    const w = argv[i] as string;
    if (!w.startsWith('-') || w === '-' || w === '--') break;
    if (w === '-C') {
      if (i + 1 < argv.length) out.push({ index: ++i, dir: argv[i] as string, keep: false });
    } else if (w === '-c') i++;
    else if (w.startsWith('--work-tree=')) out.push({ index: i, dir: w.slice(12), keep: true });
    else if (w === '--work-tree') {
      // pathspecs lead from the work tree when git runs outside it, from the starting directory inside it
      if (i + 1 < argv.length) out.push({ index: ++i, dir: argv[i] as string, keep: true });
    } else if (w.startsWith('--') && !w.includes('=') && GIT_GLOBAL_LONG_ARG.has(w.slice(2))) i++;
  }
  return { options: out, subcommand: Math.min(i, argv.length) };
}

/** The argv index of a word that names a subcommand, not a path (`git -C x log`: `log`), or -1. */
export function subcommandIndex(seg: SimpleCommand): number {
  if (seg.program !== 'git') return -1;
  const { subcommand } = gitGlobals(seg.argv);
  return subcommand < seg.argv.length && seg.argv[subcommand] !== '--' ? subcommand : -1;
}

/** make's short options that take an argument (joined or in the next word). */
const MAKE_SHORT_ARG = new Set(['C', 'f', 'I', 'o', 'W', 'E']);
/** make's long options that take an argument in the next word when it is not joined with `=`. */
const MAKE_LONG_ARG =
  /^--(?:file|makefile|include-dir|old-file|assume-old|what-if|new-file|assume-new|eval|jobserver-auth|jobserver-style|shuffle)$/;
const MAKE_LONG_DIR = /^--dir(?:e(?:c(?:t(?:o(?:r(?:y)?)?)?)?)?)?(?:=(.*))?$/s;

/** make's `-C DIR` / `--directory=DIR` anywhere before `--` (also in a cluster: `-kC dir`). */
function makeOptions(argv: readonly string[]): DirectoryOption[] {
  const out: DirectoryOption[] = [];
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i] as string;
    if (w === '--') break;
    if (w.startsWith('--')) {
      const dir = MAKE_LONG_DIR.exec(w);
      if (dir !== null) {
        if (dir[1] !== undefined) out.push({ index: i, dir: dir[1], keep: true });
        else if (i + 1 < argv.length) out.push({ index: ++i, dir: argv[i] as string, keep: true });
      } else if (MAKE_LONG_ARG.test(w)) i++;
      continue;
    }
    if (!w.startsWith('-') || w === '-') continue;
    for (let k = 1; k < w.length; k++) {
      const c = w[k] as string;
      if (!MAKE_SHORT_ARG.has(c)) continue;
      if (k + 1 < w.length) {
        if (c === 'C') out.push({ index: i, dir: w.slice(k + 1), keep: true });
      } else if (i + 1 < argv.length) {
        i++;
        if (c === 'C') out.push({ index: i, dir: argv[i] as string, keep: true });
      }
      break;
    }
  }
  return out;
}

/** The directory options of a segment, or null when it has none. */
export function directoryOptions(seg: SimpleCommand): DirectoryOptions | null {
  const p = seg.program;
  let options: DirectoryOption[];
  let scope: DirectoryOptions['scope'] = 'after';
  if (p === 'git') options = gitGlobals(seg.argv).options;
  else if (TAR.has(p)) options = tarDirectoryOptions(seg.argv);
  else if (p === 'make' || p === 'gmake') {
    options = makeOptions(seg.argv);
    scope = 'all';
  } else return null;
  return options.length === 0 ? null : { options, scope };
}
