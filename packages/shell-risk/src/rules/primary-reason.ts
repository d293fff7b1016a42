// The order of an assessment's reasons: reasons[0] is the primary reason, the one a person can act
// on — the most specific and severe finding, naming the segment and what it does ("segment 1: nc
// opens a reverse shell to 10.0.0.1:4242 (-e /bin/sh)", "segment 1: writes the start-up file
// '~/.bashrc' (bash runs it at every start)"). The rules word their own findings; this file ranks
// them by family (a table over the shapes those rules write), keeps the order within a family,
// and puts a headline in front of findings whose wording names the place but not what it is (a
// write to a start-up file, a shell running a string that a fetcher produces). The generic
// "X is not a read-only command" ranks last: it is the reason only when nothing else is found.

import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { startupFile } from '../knowledge/places/startup-files.js';

/** A family of reasons: what a person should check when it is the primary reason (docs/policy.md). */
export interface ReasonFamily {
  family: string;
  /** lower ranks first */
  rank: number;
  test: RegExp;
}

/** The families, in rank order; a reason matching none ranks with `other`. */
export const REASON_FAMILIES: readonly ReasonFamily[] = [
  {
    family: 'remote_shell',
    rank: 0,
    test: /\bopens a (?:reverse|bind) shell\b|\((?:a )?reverse shell\)|a shell on the network/,
  },
  { family: 'finger_self', rank: 1, test: /\bfinger(?:'s|’s)? (?:own|daemon)|\bsteers finger|\bstops finger/ },
  {
    family: 'credential_send',
    rank: 2,
    test: /\bsends? the (?:credential|secret)|\bmay send (?:the credential|what is read)|\buploads the credential|\(exfiltration\)|exfiltration/,
  },
  {
    family: 'download_run',
    rank: 3,
    test: /\bruns what \S+ (?:\(segment \d+\) )?(?:downloads|fetches)|, which \S+ \(segment \d+\) downloads|\bruns code it (?:decodes or )?downloads|\bruns a shell command it decodes or downloads|\(remote code|from what \S+ \(segment \d+\) fetches/,
  },
  {
    family: 'startup_write',
    rank: 4,
    test: /\bwrites the start-up file\b|start-up files live|\bcrontab\b.*\binstalls\b/,
  },
  {
    family: 'destruction',
    rank: 5,
    test: /\brm with\b|\bdeletes\b|\bformats, partitions or wipes\b|\bstops the machine\b|\bfork bomb\b|\bwrites to the device\b|\bsignals (?:every process|init)\b/,
  },
  { family: 'other', rank: 6, test: /(?:)/ },
  {
    family: 'privilege',
    rank: 7,
    test: /\bruns a command with elevated privileges$/,
  },
  {
    family: 'run_time',
    rank: 8,
    test: /\bopens a network socket$|\bbuilt at run time\b|\bproduced at run time\b|\bcomputed at run time\b|\breads differently to \/bin\/sh\b/,
  },
];
/** The residue: no finding but that the program is not on the read-only list. */
const GENERIC = /\bis not a read-only command$/;

const OTHER_RANK = 6;

function rankOf(reason: string): number {
  if (GENERIC.test(reason)) return Number.MAX_SAFE_INTEGER;
  for (const f of REASON_FAMILIES) if (f.family !== 'other' && f.test.test(reason)) return f.rank;
  return OTHER_RANK;
}

/** The family of a reason (`generic` for the residue), for tests and the docs. */
export function familyOf(reason: string): string {
  if (GENERIC.test(reason)) return 'generic';
  return REASON_FAMILIES.find((f) => f.family !== 'other' && f.test.test(reason))?.family ?? 'other';
}

/** `segment N: … writes (to) 'PATH'`: the label and the path written. */
const WRITE = /^(segment \d+: )?(?:.*?\s)?writes(?: the download)?(?: to)? '([^']+)'/;
/** A string a shell runs that a fetcher produces (`<(curl …)`, `$(wget -qO- …)`). */
const FETCHED_CODE =
  /^(segment \d+: )?(.+?) runs (?:code produced|a string built) at run time \('(?:<\(|\$\(|`)\s*(curl|wget|fetch|aria2c|lwp-request|lwp-download|http|httpie|xh|GET)\b/;

/** The headline a finding needs in front of it, or null. */
function headline(reason: string, homes: KnownHomes): string | null {
  const w = WRITE.exec(reason);
  if (w !== null && !reason.includes('start-up file')) {
    const why = startupFile(w[2] as string, homes);
    if (why !== null) return `${w[1] ?? ''}writes the start-up file '${w[2] as string}' (${why})`;
  }
  const f = FETCHED_CODE.exec(reason);
  if (f !== null) return `${f[1] ?? ''}${f[2] as string} runs what ${f[3] as string} downloads`;
  return null;
}

/**
 * The reasons in the order a person reads them: dangerous before moderate; within each, by family
 * (remote shells, finger itself, credentials sent, download-then-run, start-up files, destruction,
 * the rest, privileges, run-time values), then as found; the generic residue last. A headline is
 * put in front of a write to a start-up file (as the judging assessor's `homes` read its path) and
 * of a shell running what a fetcher produces.
 */
export function orderReasons(dangerous: readonly string[], moderate: readonly string[], homes: KnownHomes): string[] {
  return [...ordered(dangerous, homes), ...ordered(moderate, homes)];
}

function ordered(reasons: readonly string[], homes: KnownHomes): string[] {
  const seen = new Set(reasons);
  const withHeadlines: string[] = [];
  for (const r of reasons) {
    const h = headline(r, homes);
    if (h !== null && !seen.has(h)) {
      seen.add(h);
      withHeadlines.push(h);
    }
    withHeadlines.push(r);
  }
  return withHeadlines
    .map((r, i) => ({ r, i, rank: rankOf(r) }))
    .sort((a, b) => a.rank - b.rank || a.i - b.i)
    .map((x) => x.r);
}
