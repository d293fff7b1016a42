// A secret that leaves through git within one command line: a file written from a secret and then
// `git add`ed (by name, or with `.`/`-A`/`commit -a` while it sits under the working directory), or
// a commit message expanding a secret variable, is sent by a later `git push`. Used by
// secret-flow.ts, which knows what is tainted; this only follows what git is told to do.

import type { SimpleCommand } from '../command-model.js';
import { parseArgs } from '../options/options.js';
import type { Flow } from './exfiltration.js';

/** What the pass knows, asked by {@link GitCommits.observe}. */
export interface TaintQuery {
  /** the secret a path word reaches (a file written from one), or null */
  file(word: string): Flow | null;
  /** the secret a word expands (a secret variable), or null */
  value(word: string): Flow | null;
  /** the secret of a file written to some relative path (under the working directory), or null */
  anyRelative(): string | null;
}

const EVERYTHING = /^(?:\.|\.\/|:\/|\*|-A|--all|-u|--update)$/;

function relative(taint: TaintQuery): Flow | null {
  const what = taint.anyRelative();
  return what === null ? null : { what };
}

/** Secrets staged or committed so far, for the `git push` that sends them. */
export class GitCommits {
  #pending: Flow | null = null;

  /** Takes in segment i when it is a git command (`git add`, `git commit`); others are ignored. */
  observe(i: number, seg: SimpleCommand, taint: TaintQuery): void {
    if (seg.program !== 'git' || this.#pending !== null) return;
    const sub = parseArgs('git', seg.argv).positionals[0];
    if (sub !== 'add' && sub !== 'commit') return;
    const words = seg.argv.slice(seg.argv.indexOf(sub) + 1);
    for (let k = 0; k < words.length && this.#pending === null; k++) {
      const w = words[k] as string;
      let f: Flow | null;
      if (sub === 'add') f = EVERYTHING.test(w) ? relative(taint) : w.startsWith('-') ? null : taint.file(w);
      else if (/^-[a-zA-Z]*a[a-zA-Z]*$|^--all$/.test(w)) f = relative(taint);
      else if (/^-[a-zA-Z]*F$|^--file$/.test(words[k - 1] ?? '')) f = taint.file(w);
      else f = taint.value(w);
      if (f !== null) {
        const what = f.from === undefined ? f.what : `${f.what} (segment ${f.from + 1})`;
        this.#pending = { what: `${what} committed to git (segment ${i + 1})` };
      }
    }
  }

  /** The secret a `git push` segment sends, or null. */
  pushed(seg: SimpleCommand): Flow | null {
    if (seg.program !== 'git' || this.#pending === null) return null;
    return parseArgs('git', seg.argv).positionals[0] === 'push' ? this.#pending : null;
  }
}
