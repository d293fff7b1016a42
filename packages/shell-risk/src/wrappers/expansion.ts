// What a command that runs other commands runs: the words of a wrapper's argv or a string of shell
// code (an `Expansion`), and the helpers that build them. Its own file so that wrappers.ts and the
// wrapper families it dispatches to (user-wrappers.ts, find-exec.ts, …) share these types without
// importing each other (issue 26: no runtime import cycles).

import type { Assignment } from '../command-model.js';

/** One de-quoted word and whether it holds a run-time value. */
export interface Word {
  text: string;
  dynamic: boolean;
  /** for a dynamic word whose value is still known statically (`"$(echo cm0= | base64 -d)"`): that value */
  value?: string;
  /** a glob in this word, when it is a command name, is not expanded again (program-globs.ts) */
  noGlob?: boolean;
}

/** What a wrapper runs. */
export type Expansion =
  | {
      kind: 'argv';
      via: string;
      words: Word[];
      assignments?: Assignment[];
      unknownTail?: boolean;
      findBroad?: boolean;
    }
  | { kind: 'script'; via: string; text: string; dynamic: boolean; value?: string };

/** The result of looking at one command as a possible wrapper. */
export interface WrapperExpansion {
  /** the segment only wraps what it runs (find is not: it is a command with -exec children) */
  wrapper: boolean;
  inner: Expansion[];
}

/** The words as one string (eval, watch, sg), with its value when every run-time part has one. */
export function joinWords(words: readonly Word[]): { text: string; dynamic: boolean; value?: string } {
  const out: { text: string; dynamic: boolean; value?: string } = {
    text: words.map((w) => w.text).join(' '),
    dynamic: words.some((w) => w.dynamic),
  };
  if (out.dynamic && words.every((w) => !w.dynamic || w.value !== undefined)) {
    out.value = words.map((w) => (w.dynamic ? w.value : w.text)).join(' ');
  }
  return out;
}

/** A string run as shell code, through `via`. */
export function scriptOf(via: string, w: { text: string; dynamic: boolean; value?: string }): Expansion {
  const e: Expansion = { kind: 'script', via, text: w.text, dynamic: w.dynamic };
  if (w.value !== undefined) e.value = w.value;
  return e;
}
