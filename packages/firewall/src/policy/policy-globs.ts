// The three kinds of glob a policy holds, each compiled once at load: tool ids (grant-glob
// semantics), argument values (`*` is any run of characters), and resolved paths (picomatch, dot
// files included, `~` expanded).

import { createRequire } from 'node:module';
import path from 'node:path';

import { compileGrantGlob } from '../grants/grant-glob.js';

/** A compiled matcher. */
export type Matcher = (input: string) => boolean;

type PicomatchOptions = { dot?: boolean; nonegate?: boolean; noextglob?: boolean };
type Picomatch = ((glob: string, options?: PicomatchOptions) => Matcher) & {
  makeRe(glob: string, options?: PicomatchOptions): RegExp;
};
const picomatch = createRequire(import.meta.url)('picomatch/posix') as Picomatch;

const GLOB_CHARS = /[*?[{]/;

/**
 * Compiles a tool glob. Dots separate segments as in grants (`fs.*` matches `fs.write`, not
 * `fs.a.b`; `mcp.**` every MCP tool); `*` or `**` alone matches every tool. Throws E_INVALID_ARGS
 * for characters a tool glob cannot hold.
 */
export function compileToolGlob(glob: string): Matcher {
  if (glob === '*' || glob === '**') return () => true;
  return compileGrantGlob(glob);
}

export { compileValueGlob } from '../value-glob.js';

/** `~` and `~/…` → the user's home directory. Other `~user` forms are left alone. */
export function expandHome(p: string, homeDir: string): string {
  if (p === '~') return homeDir;
  if (p.startsWith('~/')) return path.posix.join(homeDir, p.slice(2));
  return p;
}

/**
 * Compiles a path glob, matched against real, absolute paths. `~/…` is the user's home; a
 * pattern that is neither absolute nor `~/…` nor `**…` matches at any depth (`*.env` →
 * `**\/*.env`); a pattern without glob characters also matches everything below it (`/etc` →
 * `/etc` and `/etc/**`). Dot files are matched like any other.
 */
export function compilePathGlob(pattern: string, homeDir: string): Matcher {
  let p = expandHome(pattern, homeDir);
  if (!p.startsWith('/') && !p.startsWith('**')) p = `**/${p}`;
  if (p.length > 1 && p.endsWith('/')) p = p.slice(0, -1);
  if (!GLOB_CHARS.test(p)) {
    const exact = path.posix.normalize(p);
    const prefix = exact === '/' ? '/' : `${exact}/`;
    return (s) => s === exact || s.startsWith(prefix);
  }
  // `/dir/**` is a prefix test; otherwise the literal directory before the first glob character
  // is checked first, so most rules cost one startsWith and never reach their RegExp
  const star = /^(\/[^*?[{\]\\]*?)\/\*\*$/.exec(p);
  if (star !== null) {
    const dir = path.posix.normalize(star[1] as string);
    const prefix = dir === '/' ? '/' : `${dir}/`;
    return (s) => s === dir || s.startsWith(prefix);
  }
  const firstGlob = p.search(/[*?[{\\]/);
  const literal = p.slice(0, p.lastIndexOf('/', firstGlob) + 1);
  // the bare RegExp: picomatch's matcher function does several times the work per test
  const re = picomatch.makeRe(p, { dot: true, nonegate: true, noextglob: true });
  return literal.length > 1 ? (s) => s.startsWith(literal) && re.test(s) : (s) => re.test(s);
}

/** A policy root (`readable_paths`, `writable_paths`) as an absolute normalised path, or null when not absolute. */
export function policyRoot(p: string, homeDir: string): string | null {
  const e = expandHome(p, homeDir);
  if (!path.posix.isAbsolute(e)) return null;
  return path.posix.resolve(e);
}
