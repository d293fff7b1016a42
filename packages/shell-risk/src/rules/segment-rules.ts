// The rules for one segment of a command line (`classifySegment`) and the `Findings` they add
// to: a program on the danger list, an option that runs code, a write to a sensitive place, a
// secret read, a wrapper. Its own file because the whole-line rules use it twice: classify.ts for
// every segment, and secret-flow.ts for the commands a line builds and runs later (an alias, a
// literal script) — which classify.ts in turn calls (issue 26: no runtime import cycles).

import { metadataEndpointIn } from '@finger/net-address';

import { type CommandRiskLevel, maxLevel, type SimpleCommand } from '../command-model.js';
import { NETWORK_PROGRAMS } from '../flow/exfiltration.js';
import { authenticationFiles, cloudUpload, fileCandidates } from '../flow/network-files.js';
import { copyInto } from '../knowledge/places/copy-destinations.js';
import { type SegmentPlace } from '../knowledge/places/cwd-paths.js';
import { fetchedIntoSensitive } from '../knowledge/places/fetched-names.js';
import type { KnownHomes } from '../knowledge/places/known-homes.js';
import {
  holdsSensitive,
  isBroadTarget,
  isNullSink,
  isStandardProgramPath,
  mayNameSecret,
  secretPath,
  sensitiveWriteTarget,
} from '../knowledge/places/paths.js';
import { FILE_WRITERS, writtenFiles } from '../knowledge/places/written-files.js';
import { BENIGN_PAGER, benignGitProgram, printsOnlyBenign, runsNothing } from '../knowledge/programs/benign-forms.js';
import {
  DISK_TOOLS,
  isGitExecKey,
  isInterpreter,
  NO_CONTENT,
  OPERAND_CHANGERS,
  POWER_TOOLS,
  PRIVILEGED,
  SHELLS,
} from '../knowledge/programs/programs.js';
import { READERS } from '../knowledge/programs/read-builtins.js';
import { isSafeCommand, NEUTRAL_WRAPPERS } from '../knowledge/programs/safe-commands.js';
import { fileReadingValues } from '../options/file-reading-options.js';
import { parseArgs } from '../options/options.js';
import { hasConfusableLetter } from '../parse/unicode.js';
import { foundCredentials } from '../wrappers/find-exec.js';
import { findIsBroad, findRoots } from '../wrappers/wrappers.js';
import { destructionRules, recursiveReadRule } from './destruction.js';
import { extractionRule, EXTRACTORS } from './extraction.js';
import { HOST_ESCAPE_PROGRAMS, hostEscapeRules } from './host-escape.js';
import { orderReasons } from './primary-reason.js';

/** Accumulates findings: the strictest level and its reasons, dangerous ones first, without duplicates. */
export class Findings {
  level: CommandRiskLevel = 'safe';
  /** the homes of the assessor that judges (known-homes.ts): every path rule reads them here */
  readonly homes: KnownHomes;
  readonly #dangerous: string[] = [];
  readonly #moderate: string[] = [];
  readonly #seen = new Set<string>();

  constructor(homes: KnownHomes) {
    this.homes = homes;
  }

  add(level: CommandRiskLevel, reason: string): void {
    this.level = maxLevel(this.level, level);
    if (level === 'safe' || this.#seen.has(reason)) return;
    this.#seen.add(reason);
    (level === 'dangerous' ? this.#dangerous : this.#moderate).push(reason);
  }

  /** How many dangerous findings so far (a segment with one needs no "not read-only" line). */
  get dangerousCount(): number {
    return this.#dangerous.length;
  }

  /** The reasons, the primary one first (primary-reason.ts). */
  reasons(): string[] {
    return orderReasons(this.#dangerous, this.#moderate, this.homes);
  }
}

const HERE_DIRS = Object.freeze({ list: Object.freeze(['']), unknown: false });

/** The starting directory, as written (no context). */
function here(homes: KnownHomes): SegmentPlace {
  return { dirs: HERE_DIRS, isBroad: (t) => isBroadTarget(t, homes) };
}

const EXEC_ENV =
  /^(?:LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|DYLD_INSERT_LIBRARIES|DYLD_LIBRARY_PATH|DYLD_FRAMEWORK_PATH|BASH_ENV|ENV|PROMPT_COMMAND|PS4|IFS|SHELLOPTS|BASHOPTS|GIT_SSH|GIT_SSH_COMMAND|GIT_EXTERNAL_DIFF|GIT_ASKPASS|SSH_ASKPASS|GIT_EXEC_PATH|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_CONFIG_PARAMETERS|GIT_CONFIG_GLOBAL|GIT_TEMPLATE_DIR|GIT_PROXY_COMMAND|NODE_OPTIONS|PYTHONSTARTUP|PYTHONPATH|PERL5OPT|PERL5LIB|RUBYOPT|LESSOPEN|LESSCLOSE|BROWSER)$/;
const PAGER_ENV = /^(?:PAGER|GIT_PAGER|MANPAGER|EDITOR|VISUAL|GIT_EDITOR|GIT_SEQUENCE_EDITOR)$/;
const WRITERS = new Set([
  'tee',
  'cp',
  'mv',
  'ln',
  'install',
  ...OPERAND_CHANGERS,
  'rsync',
  'scp',
  'dd',
  'sed',
  'perl',
  'curl',
  'wget',
  'patch',
]);
/** Writers that only write their last operand (or -t DIR): the sources are read. */
const DEST_ONLY = new Set(['cp', 'ln', 'install', 'rsync', 'scp']);
const OUTPUT_OPTIONS = [
  'output',
  'output-document',
  'directory-prefix',
  'output-dir',
  'target-directory',
  'output-file',
];

export function quote(s: string): string {
  const t = s.length > 80 ? `${s.slice(0, 77)}…` : s;
  return `'${t}'`;
}

function describe(seg: SimpleCommand): string {
  return seg.program !== '' ? seg.program : seg.path;
}

function isDynamicAt(seg: SimpleCommand, index: number | undefined): boolean {
  return index !== undefined && seg.dynamic.includes(index);
}

function rmRule(seg: SimpleCommand, label: string, f: Findings, isBroad: (t: string) => boolean): void {
  const p = parseArgs('rm', seg.argv);
  const rec = p.options.has('recursive');
  const force = p.options.has('force');
  if (p.options.has('no-preserve-root')) f.add('dangerous', `${label}: rm --no-preserve-root`);
  if (!rec && !force) return;
  const flags = [rec ? '-r' : '', force ? '-f' : ''].filter((x) => x !== '').join(' and ');
  for (const t of p.positionals) {
    const broad = t === '{}' ? seg.find_broad === true : isBroad(t);
    if (broad) f.add('dangerous', `${label}: rm with ${flags} on ${quote(t)}`);
  }
  if (rec && seg.unknown_tail) f.add('dangerous', `${label}: rm with ${flags} on arguments read at run time (xargs)`);
}

function ownershipRule(seg: SimpleCommand, label: string, f: Findings, isBroad: (t: string) => boolean): void {
  const p = parseArgs(seg.program, seg.argv);
  const targets = p.options.has('reference') ? p.positionals : p.positionals.slice(1);
  if (p.options.has('recursive')) {
    for (const t of targets) if (isBroad(t)) f.add('dangerous', `${label}: ${seg.program} -R on ${quote(t)}`);
  }
  if (seg.program === 'chmod') {
    const mode = p.options.has('reference') ? '' : (p.positionals[0] ?? '');
    if (/^[2-7][0-7]{3}$/.test(mode) || /(?:^|,)[ugoa]*[+=][rwxXt]*s/.test(mode)) {
      f.add('dangerous', `${label}: chmod ${mode} sets the setuid/setgid bit`);
    }
  }
}

function killRule(seg: SimpleCommand, label: string, f: Findings): void {
  const a = seg.argv;
  let j = 1;
  const first = a[1];
  if (first !== undefined && first.startsWith('-') && first !== '--') {
    if (first === '-l' || first === '-L') return;
    j = first === '-s' || first === '-n' ? 3 : 2;
  }
  const pids = a.slice(j).filter((x) => x !== '--');
  if (pids.includes('-1')) f.add('dangerous', `${label}: kill -1 signals every process`);
  if (pids.includes('1')) f.add('dangerous', `${label}: kill signals init (pid 1)`);
}

function gitRule(seg: SimpleCommand, label: string, f: Findings): void {
  const p = parseArgs('git', seg.argv);
  for (const v of p.options.get('config') ?? []) {
    const eq = v.indexOf('=');
    const key = eq < 0 ? v : v.slice(0, eq);
    if (isGitExecKey(key) && !benignGitProgram(key, eq < 0 ? undefined : v.slice(eq + 1)))
      f.add('dangerous', `${label}: git -c ${key}=… makes git run another program`);
  }
  // --config-env KEY=VAR: the value comes from the environment, never known
  for (const v of p.options.get('config-env') ?? []) {
    const key = v.split('=', 1)[0] as string;
    if (isGitExecKey(key)) f.add('dangerous', `${label}: git --config-env ${key}=… makes git run another program`);
  }
  if (p.options.has('exec-path') && (p.options.get('exec-path') ?? []).some((v) => v !== '')) {
    f.add('dangerous', `${label}: git --exec-path runs git commands from another directory`);
  }
  if (p.positionals[0] === 'config') {
    const ops = p.positionals.slice(1);
    const [key, value] = ops[0] === 'set' ? [ops[1], ops[2]] : [ops[0], ops[1]];
    if (key !== undefined && value !== undefined && isGitExecKey(key) && !benignGitProgram(key, value)) {
      f.add('dangerous', `${label}: git config ${key} makes git run another program`);
    }
  }
}

function writerRule(seg: SimpleCommand, label: string, f: Findings): void {
  const prog = seg.program;
  const p = parseArgs(prog, seg.argv);
  let paths: string[] = [];
  if (prog === 'dd') paths = seg.argv.filter((a) => a.startsWith('of=')).map((a) => a.slice(3));
  else if (prog === 'curl' || prog === 'wget') paths = [];
  else if (prog === 'sed') paths = p.options.has('in-place') ? p.positionals : [];
  else if (prog === 'perl') paths = seg.argv.some((a) => /^-[a-zA-Z]*i/.test(a)) ? p.positionals : [];
  else if (DEST_ONLY.has(prog)) paths = p.options.has('target-directory') ? [] : p.positionals.slice(-1);
  else paths = p.positionals;
  for (const o of OUTPUT_OPTIONS) paths.push(...(p.options.get(o) ?? []));
  for (const t of paths) {
    if (prog === 'dd' && t.startsWith('/dev/') && !isNullSink(t)) {
      f.add('dangerous', `${label}: dd writes to the device ${quote(t)}`);
      continue;
    }
    const sens = sensitiveWriteTarget(t, f.homes);
    if (sens !== null) f.add('dangerous', `${label}: ${prog} writes to ${quote(t)} (${sens})`);
  }
  // into a directory: each file keeps its name (`cp /tmp/x/.bashrc ~` writes ~/.bashrc)
  const into = copyInto(seg);
  if (into === null) return;
  for (const t of into.files) {
    const sens = sensitiveWriteTarget(t, f.homes);
    if (sens !== null) f.add('dangerous', `${label}: ${prog} writes ${quote(t)} (${sens})`);
  }
  if (into.contents && holdsSensitive(into.dir, f.homes))
    f.add(
      'dangerous',
      `${label}: ${prog} copies a directory's contents into ${quote(into.dir)}, where start-up files live`,
    );
}

/** An encoder's, compressor's or sort's output file (`sort -o ~/.bashrc`), when it is a sensitive place. */
function outputRule(seg: SimpleCommand, label: string, f: Findings): void {
  for (const w of writtenFiles(seg)) {
    if (w.read) continue; // an archiver's operand: which one is the archive is not worked out
    const sens = sensitiveWriteTarget(w.path, f.homes);
    if (sens !== null) f.add('dangerous', `${label}: ${seg.program} writes to ${quote(w.path)} (${sens})`);
  }
}

function interpreterRule(seg: SimpleCommand, label: string, f: Findings): void {
  const p = seg.program;
  if (!(SHELLS.has(p) || isInterpreter(p) || p === 'source' || p === '.')) return;
  for (let i = 1; i < seg.argv.length; i++) {
    const a = seg.argv[i] as string;
    const prev = seg.argv[i - 1] as string;
    const codeSlot =
      i === firstOperand(seg) || /^-[a-zA-Z]*[cem]$/.test(prev) || prev === '--eval' || prev === '--command';
    if (codeSlot && isDynamicAt(seg, i) && /^(?:\$\(|`|<\()/.test(a)) {
      f.add('dangerous', `${label}: ${p} runs code produced at run time (${quote(a)})`);
    }
  }
}

function firstOperand(seg: SimpleCommand): number {
  for (let i = 1; i < seg.argv.length; i++) if (!(seg.argv[i] as string).startsWith('-')) return i;
  return -1;
}

/** Rules that make a segment dangerous, by program. */
function dangerRules(seg: SimpleCommand, label: string, f: Findings, place: SegmentPlace): void {
  const p = seg.program;
  if (PRIVILEGED.has(p) && !runsNothing(seg))
    f.add('dangerous', `${label}: ${p} runs a command with elevated privileges`);
  if (p === 'rm') rmRule(seg, label, f, place.isBroad);
  if (p === 'chmod' || p === 'chown' || p === 'chgrp') ownershipRule(seg, label, f, place.isBroad);
  if (p === 'kill') killRule(seg, label, f);
  if (p === 'git') gitRule(seg, label, f);
  if (EXTRACTORS.has(p)) extractionRule(seg, label, place.dirs, (reason) => f.add('dangerous', reason), f.homes);
  if (DISK_TOOLS.has(p) || /^mkfs\./.test(p)) f.add('dangerous', `${label}: ${p} formats, partitions or wipes disks`);
  if (POWER_TOOLS.has(p) || p === 'killall5') f.add('dangerous', `${label}: ${p} stops the machine or every process`);
  if (p === 'init' && /^[06]$/.test(seg.argv[1] ?? ''))
    f.add('dangerous', `${label}: init ${seg.argv[1]} stops the machine`);
  if (
    p === 'systemctl' &&
    /^(?:poweroff|reboot|halt|kexec|suspend|hibernate|rescue|emergency)$/.test(
      parseArgs(p, seg.argv).positionals[0] ?? '',
    )
  ) {
    f.add('dangerous', `${label}: systemctl ${parseArgs(p, seg.argv).positionals[0]} stops the machine`);
  }
  if (
    (p === 'nc' || p === 'ncat' || p === 'netcat') &&
    seg.argv.some((a) => /^-[a-zA-Z]*[ec]$/.test(a) || /^--(?:exec|sh-exec|lua-exec)/.test(a))
  ) {
    f.add('dangerous', `${label}: ${p} -e connects a program to the network`);
  }
  if (p === 'socat' && seg.argv.some((a) => /^(?:exec|system):/i.test(a)))
    f.add('dangerous', `${label}: socat connects a program to the network`);
  if (p === 'find' && seg.argv.includes('-delete')) {
    const words = seg.argv.map((text, i) => ({ text, dynamic: seg.dynamic.includes(i) }));
    if (findIsBroad(words, f.homes))
      f.add(
        'dangerous',
        `${label}: find -delete on everything under ${
          findRoots(words)
            .map((w) => quote(w.text))
            .join(', ') || "'.'"
        }`,
      );
  }
  if (WRITERS.has(p)) writerRule(seg, label, f);
  else if (FILE_WRITERS.has(p)) outputRule(seg, label, f);
  destructionRules(seg, label, (level, reason) => f.add(level, reason), place.isBroad, f.homes);
  interpreterRule(seg, label, f);
  metadataRule(seg, label, f);
  if (HOST_ESCAPE_PROGRAMS.has(p)) hostEscapeRules(seg, label, (reason) => f.add('dangerous', reason), f.homes);
}

/** A word that may hold a metadata address: a dotted or colon-separated number, 0x…, 10 digits, or a name. */
const METADATA_HINT = /\d[.:x]|[.:]\d|\d{10}|metadata|instance-data/i;

/** A network program (or a script's code) addressing a cloud metadata endpoint: the instance's credentials. */
function metadataRule(seg: SimpleCommand, label: string, f: Findings): void {
  const p = seg.program;
  const network = NETWORK_PROGRAMS.has(p);
  if (!network && !isInterpreter(p)) return;
  let hint = false;
  for (let i = 1; i < seg.argv.length && !hint; i++) hint = METADATA_HINT.test(seg.argv[i] as string);
  if (!hint) return;
  for (let i = 1; i < seg.argv.length; i++) {
    const m = metadataEndpointIn(seg.argv[i] as string, network);
    if (m !== null) {
      f.add('dangerous', `${label}: ${p} reaches the cloud metadata endpoint '${m}' (instance credentials)`);
      return;
    }
  }
}

function envRules(seg: SimpleCommand, label: string, f: Findings): void {
  for (const a of seg.assignments) {
    // for read / mapfile a prefix IFS= only sets how the line read is split (`while IFS= read -r l`)
    if (a.name === 'IFS' && READERS.has(seg.program)) {
      f.add('moderate', `${label}: sets IFS for ${seg.program}`);
    } else if (EXEC_ENV.test(a.name) || (PAGER_ENV.test(a.name) && (a.dynamic || !BENIGN_PAGER.test(a.value)))) {
      f.add('dangerous', `${label}: ${a.name}=${quote(a.value)} can make programs run other code`);
    } else if (a.name === 'PATH') {
      f.add('moderate', `${label}: changes PATH (later commands may run other programs)`);
    } else {
      f.add('moderate', `${label}: sets ${a.name}`);
    }
  }
}

function redirectRules(seg: SimpleCommand, label: string, f: Findings): boolean {
  let writes = false;
  for (const r of seg.redirects) {
    if (r.is_write) {
      if (isNullSink(r.target)) continue;
      writes = true;
      const sens = sensitiveWriteTarget(r.target, f.homes);
      if (sens !== null) f.add('dangerous', `${label}: redirect ${r.op} writes to ${quote(r.target)} (${sens})`);
      else if (r.dynamic) f.add('moderate', `${label}: writes to a path known only at run time (${quote(r.target)})`);
      else f.add('moderate', `${label}: writes to ${quote(r.target)}`);
    } else if (r.op === '<' || r.op === '<>') {
      const secret = secretPath(r.target, f.homes);
      if (secret !== null) f.add('moderate', `${label}: reads the credential file ${quote(r.target)}`);
    }
  }
  return writes;
}

/** A program that prints no content still reads the files its options name (`file -f LIST`, `du --files0-from=LIST`). */
function optionReadRule(seg: SimpleCommand, label: string, f: Findings): boolean {
  let found = false;
  for (const v of fileReadingValues(seg.program, seg.argv)) {
    if (!mayNameSecret(v, f.homes) || secretPath(v, f.homes) === null) continue;
    found = true;
    f.add('moderate', `${label}: reads the credential file ${quote(v)}`);
  }
  return found;
}

function secretRule(seg: SimpleCommand, label: string, f: Findings): boolean {
  if (NO_CONTENT.has(seg.program)) return optionReadRule(seg, label, f);
  let found = false;
  const fromFind = seg.program === 'find' ? foundCredentials(seg.argv, f.homes, seg.dynamic) : null;
  if (fromFind !== null) {
    found = true;
    f.add('moderate', `${label}: reads ${fromFind}`);
  }
  let network: boolean | undefined;
  let auth: Set<number> | undefined;
  let upload: ReturnType<typeof cloudUpload> | undefined;
  for (let i = 1; i < seg.argv.length; i++) {
    const a = seg.argv[i] as string;
    if (!mayNameSecret(a, f.homes)) continue;
    network ??= NETWORK_PROGRAMS.has(seg.program) && !(seg.program === 'openssl' && seg.argv[1] !== 's_client');
    auth ??= network ? authenticationFiles(seg) : new Set<number>();
    if (!fileCandidates(a, network, auth.has(i)).some((c) => secretPath(c, f.homes) !== null)) continue;
    found = true;
    upload ??= network ? null : cloudUpload(seg);
    if (network && !auth.has(i) && !/\.pub$/.test(a))
      f.add('dangerous', `${label}: ${seg.program} may send the credential file ${quote(a)} over the network`);
    else if (upload?.files.includes(i) === true && !/\.pub$/.test(a))
      f.add('dangerous', `${label}: ${upload.label} uploads the credential file ${quote(a)}`);
    else f.add('moderate', `${label}: reads the credential file ${quote(a)}`);
  }
  return found;
}

function wrapperRules(seg: SimpleCommand, label: string, f: Findings): void {
  const p = seg.program;
  if (NEUTRAL_WRAPPERS.has(p) || SHELLS.has(p) || p === 'env') return;
  if (p === 'eval') f.add('moderate', `${label}: eval runs a string as shell code`);
  else if (p === 'xargs') f.add('moderate', `${label}: xargs runs a command on arguments read from its input`);
  else if (!PRIVILEGED.has(p)) f.add('moderate', `${label}: ${p} runs another command`);
}

/**
 * Findings for one segment (index is 0-based; reasons say "segment N", 1-based); `place`: where
 * it runs (cwd-paths.ts).
 */
export function classifySegment(
  seg: SimpleCommand,
  index: number,
  f: Findings,
  place: SegmentPlace = here(f.homes),
): void {
  const label = `segment ${index + 1}`;
  if (seg.unknown_program) {
    f.add('dangerous', `${label}: the program is computed at run time (${quote(seg.path)})`);
    return;
  }
  if (hasConfusableLetter(seg.path))
    f.add('dangerous', `${label}: the program name ${quote(seg.path)} has non-ASCII letters`);
  for (const a of seg.argv) {
    if (a.startsWith('-') && hasConfusableLetter(a))
      f.add('dangerous', `${label}: the option ${quote(a)} has non-ASCII letters`);
  }
  const before = f.dangerousCount;
  envRules(seg, label, f);
  const writes = redirectRules(seg, label, f);
  if (seg.argv.length === 0) return;
  dangerRules(seg, label, f, place);
  for (const w of fetchedIntoSensitive(seg, place, f.homes))
    f.add('dangerous', `${label}: ${seg.program} writes the download to ${quote(w.file)} (${w.place})`);
  recursiveReadRule(seg, label, place.dirs, (level, reason) => f.add(level, reason), f.homes);
  const secret = secretRule(seg, label, f);
  if (seg.wrapper) {
    wrapperRules(seg, label, f);
    return;
  }
  if (seg.local_binary) {
    f.add('moderate', `${label}: ${quote(seg.path)} is a local binary, not the system command`);
  } else if (!isStandardProgramPath(seg.path)) {
    f.add('moderate', `${label}: ${quote(seg.path)} is run from a non-standard directory`);
  } else if (seg.unknown_tail) {
    f.add('moderate', `${label}: ${describe(seg)} gets arguments read at run time (xargs)`);
  } else if (seg.dynamic.length > 0 && !printsOnlyBenign(seg)) {
    f.add(
      'moderate',
      `${label}: arguments known only at run time (${seg.dynamic.map((i) => quote(seg.argv[i] ?? '')).join(', ')})`,
    );
  } else if (!isSafeCommand(seg.program, seg.argv.slice(1), f.homes)) {
    if (f.dangerousCount === before) f.add('moderate', `${label}: ${shortForm(seg)} is not a read-only command`);
  } else if (seg.assignments.length === 0 && !writes && !secret) {
    return; // safe
  }
}

/** The program as a person names it (`git push`, `ls`). */
export function shortForm(seg: SimpleCommand): string {
  if (seg.program === 'git') {
    const sub = parseArgs('git', seg.argv).positionals[0];
    return sub === undefined ? 'git' : `git ${sub}`;
  }
  return describe(seg);
}
