// Home directories the RiskAssessor knows besides the usual spellings (`/home/<u>`, `/Users/<u>`,
// `/root`, `/var/root`, see sensitive-places.ts USER_HOME): the daemon's own home when it lies
// elsewhere (`/srv/alice`, a test's temporary home), registered once at start
// (RiskAssessorOptions.home_dir). A path under one reads as `~/…`, so `/srv/alice/.ssh` is a
// credential store as `~/.ssh` is; and `~` stands for it where a word is looked up on disk
// (real-paths.ts). Process-wide, as finger's own home is (paths.ts addFingerHome).

import { homedir } from 'node:os';
import { posix } from 'node:path';

const EXTRA_HOMES: string[] = [];

/** Makes `dir` (absolute) a home directory for every later check of this process. */
export function addUserHome(dir: string): void {
  if (!dir.startsWith('/')) return;
  let n = posix.normalize(dir);
  if (n.length > 1 && n.endsWith('/')) n = n.slice(0, -1);
  if (n === '/' || EXTRA_HOMES.includes(n)) return;
  EXTRA_HOMES.push(n);
}

/** The length of the registered home `n` (normalised, absolute) starts with, or 0. */
export function userHomePrefix(n: string): number {
  for (const h of EXTRA_HOMES) if (n === h || n.startsWith(`${h}/`)) return h.length;
  return 0;
}

/** The directory `~` stands for on disk: the first registered home, else the process's home. */
export function homeOnDisk(): string {
  return EXTRA_HOMES[0] ?? homedir();
}
