// finger's home named anywhere in a command's text: inside inline interpreter code
// (`python3 -c "open('/home/u/.finger/token')"`), here-documents, quoted strings a program reads
// as a path at run time. The word checks (finger-home-words.ts) see the words a shell passes as
// paths; code a program runs is text to them. A command whose text names a path under finger's
// home or its token file is forbidden like one whose words do: an agent has no business spelling
// those paths at all. The OS sandbox masks the home as well; this is the reason the person sees.

import type { KnownHomes } from '../places/known-homes.js';
import { normalizePath } from '../places/paths.js';
import type { FingerSelf } from './finger-self.js';

/** Characters that end a path inside code or shell text. */
const END = /[\s'"`;|&()<>,{}[\]\\$=]/;

/** Whether `c` (the character after a match, or undefined at the end) ends a path component. */
function endsComponent(c: string | undefined): boolean {
  return c === undefined || c === '/' || END.test(c);
}

/** The path that continues from `at` in `text` up to the first character that ends a path. */
function pathFrom(text: string, at: number): string {
  let end = at;
  while (end < text.length && !END.test(text[end]!)) end++;
  return text.slice(at, end);
}

/**
 * The places of finger's (its homes, its guarded files) that `text` names as a path, each as
 * `'<as written>' (<place>)`; empty when none. `~/.finger` is found in any spelling that ends in
 * `/.finger` (`/root/.finger`, `$HOME/.finger`, `os.path.expanduser('~/.finger')`); a home
 * elsewhere by its absolute path. A workspace root the operator put inside the home is not named.
 */
export function fingerPathsInText(text: string, self: FingerSelf, homes: KnownHomes): string[] {
  const out: string[] = [];
  const places = [...self.homes, ...self.guarded];
  for (const place of places) {
    // `~/x` is found as `/x` after whatever spells the home directory
    const needle = place.startsWith('~/') ? place.slice(1) : place;
    let from = 0;
    for (;;) {
      const at = text.indexOf(needle, from);
      if (at < 0) break;
      from = at + needle.length;
      if (!endsComponent(text[from])) continue;
      const written = pathFrom(text, from);
      const n = normalizePath(`${place}${written}`, homes);
      if (n === null) continue;
      const hit = self.placeOf(n);
      if (hit === null) continue;
      const shown = `${needle}${written}`;
      const line = `'${shown.length > 80 ? `${shown.slice(0, 77)}…` : shown}' (${hit})`;
      if (!out.includes(line)) out.push(line);
    }
  }
  return out;
}
