// Words that name a subcommand, not a path: `run` in `docker run`, `enable` in `systemctl enable`,
// `push` in `git -C x push`. cwd-paths.ts leaves them as written (and real-paths.ts does not look
// them up): `cd ~/.ssh && docker run --privileged …` must still read as `docker run` to the
// container rules, not as `docker ~/.ssh/run`. The programs are those whose first operand is a
// subcommand (options.ts SUBCOMMAND_PROGRAMS, and the container engines); a second word is one too
// for the CLIs with two levels (`docker container run`, `aws s3 cp`, `gh repo clone`). Every other
// operand (`npm install ./pkg`, `docker build ctx`) is still a path word. So are an archiver's
// command letters (`7z x`, `tar xzf`), which the extraction rules read, and the keyword values of
// an engine's long options (`--pid=host`, `--network host`), which the container rules read. Pure.

import type { SimpleCommand } from '../command-model.js';
import { engineGlobalsEnd, ENGINES } from '../rules/host-escape.js';
import { subcommandIndex } from './directory-options.js';
import { SUBCOMMAND_PROGRAMS } from './options.js';

/** The engines' management commands, followed by a subcommand (`docker container run`). */
const ENGINE_GROUPS = new Set([
  'builder',
  'buildx',
  'compose',
  'container',
  'context',
  'image',
  'machine',
  'manifest',
  'network',
  'node',
  'plugin',
  'pod',
  'secret',
  'service',
  'stack',
  'system',
  'trust',
  'volume',
]);
/** Archivers whose first word is a command (`7z x`), or old-style key letters (`tar xzf`). */
const ARCHIVE_KEYS = /^(?:7z|7za|7zr|tar|gtar|bsdtar)$/;
/** CLIs whose subcommand is always two words (`aws s3 cp`, `gcloud compute ssh`). */
const TWO_LEVEL = new Set(['aws', 'gcloud', 'az', 'gh']);
const WORD = /^[a-z][a-z0-9-]*$/;
/** Engine options whose value is a keyword or a name, not a host path (`--pid=host`, `--network host`). */
const ENGINE_KEYWORD_OPTIONS = new Set([
  'pid',
  'network',
  'net',
  'ipc',
  'uts',
  'userns',
  'cgroupns',
  'cap-add',
  'cap-drop',
  'security-opt',
  'user',
  'name',
  'hostname',
  'entrypoint',
  'platform',
  'runtime',
  'restart',
]);
const NONE: readonly number[] = Object.freeze([]);

/** The first operand from `i` (options skipped: an option's value is not known, so not skipped). */
function operandFrom(argv: readonly string[], i: number): number {
  for (let k = i; k < argv.length; k++) {
    const w = argv[k] as string;
    if (w === '--') return -1;
    if (!w.startsWith('-') || w === '-') return k;
  }
  return -1;
}

/** The argv indexes of a segment's subcommand words (none for a program without subcommands). */
export function subcommandWords(seg: SimpleCommand): readonly number[] {
  const p = seg.program;
  if (p === 'git') {
    const k = subcommandIndex(seg);
    return k < 0 ? NONE : [k];
  }
  if (ARCHIVE_KEYS.test(p)) {
    const w = seg.argv[1];
    return w !== undefined && /^[a-zA-Z]+$/.test(w) && (p.startsWith('7') || /[AcdrtuxMG]/.test(w)) ? [1] : NONE;
  }
  const engine = ENGINES.has(p);
  if (!engine && !SUBCOMMAND_PROGRAMS.has(p)) return NONE;
  const argv = seg.argv;
  const first = engine ? engineGlobalsEnd(argv) : operandFrom(argv, 1);
  if (first < 0 || first >= argv.length || !WORD.test(argv[first] as string)) return NONE;
  const out = [first];
  if (engine ? ENGINE_GROUPS.has(argv[first] as string) : TWO_LEVEL.has(p)) {
    const second = operandFrom(argv, first + 1);
    if (second >= 0 && WORD.test(argv[second] as string)) out.push(second);
  }
  if (engine) engineKeywords(argv, out[out.length - 1]! + 1, out);
  return out;
}

/** Adds the indexes of the engine's keyword option values before its image or container operand. */
function engineKeywords(argv: readonly string[], from: number, out: number[]): void {
  for (let i = from; i < argv.length; i++) {
    const w = argv[i] as string;
    if (!w.startsWith('--') || w === '--') return;
    const eq = w.indexOf('=');
    if (!ENGINE_KEYWORD_OPTIONS.has(w.slice(2, eq < 0 ? undefined : eq))) continue;
    if (eq >= 0) out.push(i);
    else if (i + 1 < argv.length) out.push(++i);
  }
}
