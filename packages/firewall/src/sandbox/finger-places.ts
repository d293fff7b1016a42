// finger's own home and guarded files as the PathSandbox sees them: real paths (a symlink into
// the home is the home). Every path under a home — but a workspace root the operator put there —
// and every guarded file (the admin token file kept elsewhere) is forbidden to agents: the
// sandbox answers DENY for a path argument of an fs or MCP tool, a redirection or a shell path
// word that lies there (docs/policy.md, "finger's own home and API").

import path from 'node:path';

import { isInsideRoot, resolveReal, type SandboxFs } from './real-path.js';

/** Where finger's places are, resolved once (lazily: the home may be created after the sandbox). */
export class FingerPlaces {
  readonly #fs: SandboxFs;
  readonly #homes: readonly string[];
  readonly #guarded: readonly string[];
  readonly #exempt: readonly string[];
  #real: { homes: string[]; guarded: string[]; exempt: string[] } | undefined;

  /** `homes`, `guarded`, `exempt` (roots inside a home that agents work in): absolute paths. */
  constructor(fs: SandboxFs, homes: readonly string[], guarded: readonly string[], exempt: readonly string[]) {
    this.#fs = fs;
    this.#homes = homes.map((h) => path.resolve(h));
    this.#guarded = guarded.map((g) => path.resolve(g));
    this.#exempt = exempt.map((e) => path.resolve(e));
  }

  #resolved(): { homes: string[]; guarded: string[]; exempt: string[] } {
    if (this.#real !== undefined) return this.#real;
    const both = (list: readonly string[]): string[] => {
      const out = new Set<string>(list);
      for (const p of list) {
        const r = resolveReal(this.#fs, p);
        if (r.ok) out.add(r.real);
      }
      return [...out];
    };
    const homes = both(this.#homes);
    this.#real = { homes, guarded: both(this.#guarded), exempt: both(this.#exempt) };
    return this.#real;
  }

  /**
   * finger's place `p` (absolute, real or lexical) lies in — the home or the guarded file — or
   * null; a path inside an exempt root is in none.
   */
  placeOf(p: string): string | null {
    const { homes, guarded, exempt } = this.#resolved();
    for (const g of guarded) if (p === g) return g;
    for (const h of homes) {
      if (!isInsideRoot(p, h)) continue;
      if (exempt.some((e) => e !== h && isInsideRoot(e, h) && isInsideRoot(p, e))) return null;
      return h;
    }
    return null;
  }
}
