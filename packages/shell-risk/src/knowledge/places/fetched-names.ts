// A download written under the name the server gives it lands in the directory the fetcher runs
// in: `cd ~ && curl -O https://x/.bashrc` writes ~/.bashrc, `wget -P ~ https://x/.profile`
// ~/.profile. The names come from the URL (download-run.ts fetchedFiles), the directory from the
// segment's place (cwd-paths.ts). Pure.

import type { SimpleCommand } from '../../command-model.js';
import { fetchedFiles } from '../../rules/download-run.js';
import { FETCHERS } from '../programs/programs.js';
import type { SegmentPlace } from './cwd-paths.js';
import type { KnownHomes } from './known-homes.js';
import { sensitiveWriteTarget } from './paths.js';

/** At most this many written names are placed (a command line may name many URLs). */
const MAX_NAMES = 32;

/** The sensitive places a fetcher's downloads are written to, each with the file it writes. */
export function fetchedIntoSensitive(
  seg: SimpleCommand,
  place: SegmentPlace,
  homes: KnownHomes,
): { file: string; place: string }[] {
  if (!FETCHERS.has(seg.program)) return [];
  const redirected = new Set(seg.redirects.map((r) => r.target));
  const out: { file: string; place: string }[] = [];
  for (const name of fetchedFiles(seg).slice(0, MAX_NAMES)) {
    // a redirect's target is judged as a redirect already
    if (redirected.has(name)) continue;
    const files = /^[/~]/.test(name) ? [name] : place.dirs.list.map((d) => `${d.replace(/\/+$/, '')}/${name}`);
    for (const file of files) {
      const sens = sensitiveWriteTarget(file, homes);
      if (sens !== null) out.push({ file, place: sens });
    }
  }
  return out;
}
