// The files a command line wrote a secret to, for secret-flow.ts: keyed by their path as far as it
// is known lexically. A path under a variable of known plain value (`D=/tmp/x; … > $D`) is that
// path; one under another variable keeps it as written (`T=$(mktemp); cp key "$T"` is `$T`), and
// assigning the variable again forgets the files named through it.

import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { normalizePath } from '../knowledge/places/paths.js';

/** A leading variable reference of a word: `$T`, `${T}`, `$1`, `$@`. */
export const LEADING_REF = /^\$\{?([A-Za-z_][A-Za-z0-9_]*|[0-9@*])\}?(?![A-Za-z0-9_])/;

/** Files written from a secret, with how each got it. */
export class TaintedFiles {
  /** variable → its plain value, for the paths built from it */
  readonly #plain = new Map<string, string>();
  /** path key → the secret written there; `tree`: what is under it was written too */
  readonly #files = new Map<string, { what: string; tree: boolean }>();
  /** the keys of trees, and the keys under a variable: the few a lookup or a rebind scans */
  readonly #trees = new Set<string>();
  readonly #underVariable = new Set<string>();
  /** the homes of the assessor that judges: how a path word is normalised (paths.ts) */
  readonly #homes: KnownHomes;

  constructor(homes: KnownHomes) {
    this.#homes = homes;
  }

  get size(): number {
    return this.#files.size;
  }

  /** What a path word is tracked by (see the file comment); null when unknown. */
  key(word: string): string | null {
    const m = LEADING_REF.exec(word);
    if (m === null || m[1] === 'HOME') return normalizePath(word, this.#homes);
    const name = m[1] as string;
    const rest = word.slice(m[0].length);
    const value = this.#plain.get(name);
    if (value !== undefined) return normalizePath(value + rest, this.#homes);
    if (rest !== '' && !rest.startsWith('/')) return null;
    const tail = normalizePath(`/x${rest}`, this.#homes);
    return tail === null ? null : `$${name}${tail.slice(2)}`;
  }

  /** A variable takes a new value (`plain` when it is known): files named through it are forgotten. */
  rebind(name: string, plain: string | null): void {
    if (plain === null) this.#plain.delete(name);
    else this.#plain.set(name, plain);
    for (const key of this.#underVariable) {
      if (key === `$${name}` || key.startsWith(`$${name}/`)) this.#delete(key);
    }
  }

  /**
   * The secret a read of `word` gets: the file itself, a file under a tree written there, or —
   * `recursive`, for a reader of whole directories — a written file under it. Null otherwise.
   */
  find(word: string, recursive: boolean): string | null {
    if (this.#files.size === 0) return null;
    const n = this.key(word);
    if (n === null || n === '') return null;
    const exact = this.#files.get(n);
    if (exact !== undefined) return exact.what;
    for (const path of this.#trees) if (n.startsWith(`${path}/`)) return this.#files.get(path)?.what ?? null;
    if (recursive) for (const [path, f] of this.#files) if (path.startsWith(`${n}/`)) return f.what;
    return null;
  }

  /**
   * A write to `word`: with a secret (`what`) the file holds it — unless `keep` and it already
   * holds one (an archiver's operand may be what it read); without, a write that `replaces` the
   * file's content clears it.
   */
  write(word: string, what: string | null, tree: boolean, replaces: boolean, keep: boolean): void {
    const n = this.key(word);
    if (n === null || n === '') return;
    if (what === null) {
      if (replaces) this.#delete(n);
      return;
    }
    if (keep && this.#files.has(n)) return;
    this.#files.set(n, { what, tree });
    if (tree) this.#trees.add(n);
    else this.#trees.delete(n);
    if (n.startsWith('$')) this.#underVariable.add(n);
  }

  /** The secret of some file written under the working directory (a relative path), or null. */
  anyRelative(): string | null {
    for (const [path, f] of this.#files) if (!/^[/~$]/.test(path)) return f.what;
    return null;
  }

  #delete(key: string): void {
    this.#files.delete(key);
    this.#trees.delete(key);
    this.#underVariable.delete(key);
  }
}
