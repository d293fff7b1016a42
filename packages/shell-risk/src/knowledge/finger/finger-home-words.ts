// Whether a path part of a shell word reaches finger's own home or guarded files: as written
// (`~/.finger/token`, `$FINGER_HOME/config`, `/srv/finger/*`), relative to every directory the
// segment may run in (`../token` from FINGER_HOME/workspace, `cd ..; cat token`), in every brace
// and glob reading (`{..,x}/tok*`), and through symbolic links on disk (`docs -> ..`).

import type { Directories } from '../places/cwd-paths.js';
import { components, expandBraces, GLOB, meet } from '../places/path-globs.js';
import { isRelativePart } from '../places/path-parts.js';
import { pathReadings } from '../places/paths.js';
import type { RealPaths } from '../places/real-paths.js';
import type { FingerSelf } from './finger-self.js';

const FINGER_HOME_VAR = /^(?:\$FINGER_HOME|\$\{FINGER_HOME\})(?=\/|$)/;
const FINGER_TOKEN_VAR = /^(?:\$FINGER_TOKEN_FILE|\$\{FINGER_TOKEN_FILE\})$/;

/** Where a part leads that is finger's: the place (its home or a guarded file) and the path. */
export interface FingerHit {
  place: string;
  to: string;
}

/** finger's place a normalised reading lies in (a glob: one it can match), or null. */
function placeOfReading(n: string, self: FingerSelf): string | null {
  if (!GLOB.test(n)) return self.placeOf(n);
  // a pattern inside a workspace root the operator put in the home matches nothing else
  if (self.exempt.some((e) => n.startsWith(`${e}/`) && !GLOB.test(e))) return null;
  const parts = components(n);
  for (const h of [...self.guarded, ...self.homes]) {
    const dir = self.homes.includes(h);
    if (meet(parts, { parts: components(h), dir, label: h }) === 'at') return h;
  }
  return null;
}

/**
 * finger's place `part` reaches from one of `dirs` (a relative part) or as written, also through
 * a symbolic link; null when it reaches none. Run-time values other than `$HOME` and
 * `$FINGER_HOME` are not known (the rest of the command's checks hold those).
 */
export function fingerPlaceOf(part: string, dirs: Directories, real: RealPaths, self: FingerSelf): FingerHit | null {
  if (FINGER_HOME_VAR.test(part)) return { place: '$FINGER_HOME', to: part };
  if (FINGER_TOKEN_VAR.test(part)) return { place: '$FINGER_TOKEN_FILE', to: part };
  const relative = isRelativePart(part);
  for (const alt of expandBraces(part)) {
    const written = relative ? dirs.list.filter((d) => d !== '').map((d) => `${d}/${alt}`) : [alt];
    for (const w of written) {
      for (const n of pathReadings(w, real.homes)) {
        const place = placeOfReading(n, self);
        if (place !== null) return { place, to: n };
      }
      if (GLOB.test(w) || !(w.startsWith('/') || w.startsWith('~'))) continue;
      const r = real.resolve(w);
      if (r === null) continue;
      for (const n of pathReadings(r, real.homes)) {
        const place = placeOfReading(n, self);
        if (place !== null) return { place, to: `${n} (through a symbolic link)` };
      }
    }
  }
  return null;
}
