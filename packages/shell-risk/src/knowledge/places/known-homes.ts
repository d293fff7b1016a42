// The home directories one assessor knows besides the usual spellings (`/home/<u>`, `/Users/<u>`,
// `/root`, `/var/root`, see sensitive-places.ts USER_HOME): the user's home when it lies elsewhere
// (`/srv/alice`, a test's temporary home; RiskAssessorOptions.home_dir) — a path under it reads as
// `~/…`, so `/srv/alice/.ssh` is a credential store as `~/.ssh` is, and `~` stands for it where a
// word is looked up on disk (real-paths.ts) — and finger's own home where it is not `~/.finger`
// (RiskAssessorOptions.finger_home): its tokens, `config/`, `state/`… are credentials and
// sensitive to write (paths.ts).
//
// The homes belong to the instance that judges (a RiskAssessor, a PathSandbox), not to the
// process: two assessors built with different options judge independently (issue 26: these were
// two process-wide registries that every assessor's options added to, then one module-wide
// variable holding the homes of the call running). The instance passes its homes to the path
// functions of paths.ts and real-paths.ts explicitly, down through the rules that call them; no
// module here holds homes, so calls of different assessors may interleave freely.

import { homedir } from 'node:os';
import { posix } from 'node:path';

/** The homes of one assessor, normalised: see the file comment. */
export class KnownHomes {
  /** Absolute, normalised, no trailing slash; never `/`. */
  readonly userHomes: readonly string[];
  /** As paths.ts normalises them (`/srv/finger`, or `~/…` under a usual home spelling). */
  readonly fingerHomes: readonly string[];

  /** `fingerHomes` must already be normalised (paths.ts `knownHomes` does it); `userHomes` are here. */
  constructor(userHomes: readonly string[], fingerHomes: readonly string[]) {
    const users: string[] = [];
    for (const dir of userHomes) {
      if (!dir.startsWith('/')) continue;
      let n = posix.normalize(dir);
      if (n.length > 1 && n.endsWith('/')) n = n.slice(0, -1);
      if (n !== '/' && !users.includes(n)) users.push(n);
    }
    this.userHomes = Object.freeze(users);
    this.fingerHomes = Object.freeze([...new Set(fingerHomes)]);
  }

  /** The length of the known home `n` (normalised, absolute) starts with, or 0. */
  userHomePrefix(n: string): number {
    for (const h of this.userHomes) if (n === h || n.startsWith(`${h}/`)) return h.length;
    return 0;
  }

  /** The directory `~` stands for on disk: the first known home, else the process's home. */
  homeOnDisk(): string {
    return this.userHomes[0] ?? homedir();
  }
}

/** No homes beyond the usual spellings. */
export const USUAL_HOMES = new KnownHomes([], []);
