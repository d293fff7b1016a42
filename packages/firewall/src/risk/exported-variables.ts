// Which shell variables a command line exports, so that programs it starts later see them in their
// environment: `export K=…`, `export K`, `declare -x K=…` / `typeset -x`, and every assignment
// while `set -a` (`set -o allexport`) is on. `export -n K` and `unset K` take one back.

import type { SimpleCommand } from './command-model.js';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The variables exported so far in a pass over a command line's segments. */
export class ExportedVariables {
  readonly #names = new Set<string>();
  #all = false;

  /** Takes in what a segment does to the exported set (call for every segment, in order). */
  observe(seg: SimpleCommand): void {
    const p = seg.program;
    const rest = seg.argv.slice(1);
    if (p === 'set') {
      for (let k = 0; k < rest.length; k++) {
        const w = rest[k] as string;
        const on = w.startsWith('-');
        if (/^[-+][a-zA-Z]*a/.test(w) || (/^[-+]o$/.test(w) && rest[k + 1] === 'allexport')) this.#all = on;
      }
      return;
    }
    if (p === 'unset') for (const w of rest) this.#names.delete(w);
    const declares = p === 'declare' || p === 'typeset' || p === 'local' || p === 'readonly';
    const exporting = p === 'export' || (declares && rest.some((w) => /^-[a-zA-Z]*x/.test(w)));
    const removing = p === 'export' && rest.some((w) => /^-[a-zA-Z]*n/.test(w));
    if (exporting) {
      for (const a of seg.assignments) this.#set(a.name, !removing);
      for (const w of rest) if (NAME.test(w)) this.#set(w, !removing);
    } else if (this.#all) {
      for (const a of seg.assignments) this.#names.add(a.name);
    }
  }

  /** The names exported now. */
  names(): Iterable<string> {
    return this.#names;
  }

  #set(name: string, on: boolean): void {
    if (on) this.#names.add(name);
    else this.#names.delete(name);
  }
}
