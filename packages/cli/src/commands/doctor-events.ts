// `myfinger doctor`'s events line: the event files' retention bound in bytes (config `events.*`,
// docs/operations.md "Events storage") and what FINGER_HOME/events takes now.

import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

import type { DoctorCheck } from './doctor.js';

const SEGMENT_RE = /^events-\d+\.jsonl(\.gz)?$/;

export interface EventRetention {
  max_segment_bytes: number;
  max_segments: number;
  compress_closed: boolean;
}

/** Bytes as people read them: `0 B`, `1.5 KiB`, `640 KiB`, `1.5 MiB`, `64 MiB`. */
function size(bytes: number): string {
  if (bytes === 0) return '0 B';
  const [n, unit] = bytes < 1024 * 1024 ? [bytes / 1024, 'KiB'] : [bytes / (1024 * 1024), 'MiB'];
  return `${n >= 10 || Number.isInteger(n) ? n.toFixed(0) : n.toFixed(1)} ${unit}`;
}

/** What the segment files in `dir` take: bytes, files, and how many are gzip'd; zeros when there is no directory. */
async function onDisk(dir: string): Promise<{ bytes: number; files: number; packed: number }> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return { bytes: 0, files: 0, packed: 0 };
  }
  let bytes = 0;
  let files = 0;
  let packed = 0;
  for (const n of names) {
    const m = SEGMENT_RE.exec(n);
    if (m === null) continue;
    try {
      bytes += (await stat(join(dir, n))).size;
    } catch {
      continue; // rotated away meanwhile
    }
    files++;
    if (m[1] !== undefined) packed++;
  }
  return { bytes, files, packed };
}

export async function eventsCheck(home: string, r: EventRetention): Promise<DoctorCheck> {
  const now = await onDisk(join(home, 'events'));
  const bound = r.max_segment_bytes * r.max_segments;
  return {
    name: 'events',
    status: 'ok',
    detail:
      `event files keep at most ${r.max_segments} segments of ${size(r.max_segment_bytes)} of lines (${size(bound)}; events.max_segments, max_segment_bytes), ` +
      (r.compress_closed ? 'closed ones gzip’d (events.compress_closed)' : 'all plain (events.compress_closed false)') +
      `; now ${size(now.bytes)} in ${now.files} file${now.files === 1 ? '' : 's'}${now.packed > 0 ? ` (${now.packed} gzip’d)` : ''}; ` +
      "held calls' arguments and input text are not kept",
  };
}
