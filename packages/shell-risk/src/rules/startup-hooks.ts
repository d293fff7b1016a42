// Setuid bits and start-up hooks the place lists of sensitive-places.ts cannot name: a setuid or
// setgid mode in any spelling (`chmod 04755`, `chmod u+x+s`, `chmod --reference=/usr/bin/passwd`,
// `install -m 4755`); files that run code wherever they lie (`site-packages/*.pth`,
// `sitecustomize.py`, `.vscode/tasks.json`, `.husky/` hooks, `/run/user/<uid>/systemd/`); and
// settings that make a tool run or fetch other code (`npm config set script-shell`, `pip config
// set global.index-url`, `git config url.<x>.insteadOf`, `git config core.worktree`).

import type { SimpleCommand } from '../command-model.js';
import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { normalizePath } from '../knowledge/places/paths.js';
import { parseArgs } from '../options/options.js';

/** Adds a dangerous finding. */
export type Flag = (reason: string) => void;

function quote(s: string): string {
  return `'${s.length > 80 ? `${s.slice(0, 77)}…` : s}'`;
}

/** An octal mode with the setuid or setgid bit (`4755`, `04755`, `0002755`), or a symbolic one (`u+s`, `u+x+s`, `a=rwxs`). */
export function setsSetuid(mode: string): boolean {
  const octal = /^0*([0-7]{1,6})$/.exec(mode);
  if (octal !== null) return (parseInt(octal[1] as string, 8) & 0o6000) !== 0;
  return mode.split(',').some((clause) => /^[ugoa]*(?:[-+=][rwxXtugo]*)*[+=][rwxXt]*s/.test(clause));
}

/** Where programs live whose mode a `--reference` may copy a setuid bit from. */
const SYSTEM_PROGRAMS = /^\/(?:usr\/(?:local\/)?)?(?:s?bin|lib(?:exec|32|64)?)(?:\/|$)|^\/(?:opt|snap)\//;

function setuidRule(seg: SimpleCommand, label: string, flag: Flag, homes: KnownHomes): void {
  const p = seg.program;
  if (p === 'chmod') {
    const parsed = parseArgs('chmod', seg.argv);
    const ref = parsed.options.get('reference');
    if (ref !== undefined) {
      for (const r of ref) {
        const n = normalizePath(r, homes);
        if (n === null || SYSTEM_PROGRAMS.test(n))
          flag(`${label}: chmod --reference=${r} copies the mode of a system program (its setuid bit)`);
      }
      return;
    }
    const mode = parsed.positionals[0] ?? '';
    if (setsSetuid(mode)) flag(`${label}: chmod ${mode} sets the setuid/setgid bit`);
  } else if (p === 'install') {
    const args = seg.argv;
    for (let i = 1; i < args.length; i++) {
      const a = args[i] as string;
      let mode: string | undefined;
      if (a === '-m' || a === '--mode') mode = args[++i];
      else if (a.startsWith('--mode=')) mode = a.slice(7);
      else if (/^-[a-zA-Z]*m./.test(a) && !a.startsWith('--')) mode = a.slice(a.indexOf('m') + 1);
      else if (/^-[a-zA-Z]*m$/.test(a)) mode = args[++i];
      if (mode !== undefined && setsSetuid(mode)) flag(`${label}: install -m ${mode} sets the setuid/setgid bit`);
    }
  }
}

/** Files that run code wherever they are (normalised path, any directory). */
const RUNS_ANYWHERE: readonly [RegExp, string][] = [
  [
    /(?:^|\/)site-packages\/[^/]+\.pth$|(?:^|\/)(?:site|dist)-packages\/[^/]+\.pth$/,
    'a .pth file runs at every python start',
  ],
  [/(?:^|\/)(?:user|site)customize\.py$/, 'python imports it at every start'],
  [/(?:^|\/)\.vscode\/tasks\.json$/, 'an editor task can run when the folder opens'],
  [/(?:^|\/)\.husky\/(?!_\/)[^/]+$|(?:^|\/)\.husky\/_\//, 'a git hook run by husky'],
  [/^\/run\/user\/[^/]+\/systemd(?:\/|$)/, 'runtime systemd user units'],
  [/(?:^|\/)\.envrc$/, 'direnv runs it on entering the directory, once allowed'],
];

/** The start-up file a path names (see {@link RUNS_ANYWHERE}), or null; `.envrc` only when `envrc`. */
function runsAnywhere(word: string, envrc: boolean, homes: KnownHomes): string | null {
  const n = normalizePath(word, homes);
  if (n === null) return null;
  for (const [re, why] of RUNS_ANYWHERE) {
    if (!envrc && why.startsWith('direnv')) continue;
    if (re.test(n)) return why;
  }
  return null;
}

const DEST_LAST = new Set(['cp', 'mv', 'ln', 'install', 'rsync', 'scp']);

/** The files a segment plainly writes: redirect targets, `tee` operands, a copy's destination, `dd of=`. */
export function plainWrites(seg: SimpleCommand): string[] {
  const out = seg.redirects.filter((r) => r.is_write && !r.dynamic).map((r) => r.target);
  const p = seg.program;
  const ops = seg.argv.slice(1).filter((a, k) => !a.startsWith('-') && !seg.dynamic.includes(k + 1));
  if (p === 'tee') out.push(...ops);
  else if (DEST_LAST.has(p) && ops.length > 1) out.push(ops[ops.length - 1] as string);
  else if (p === 'dd') for (const a of ops) if (a.startsWith('of=')) out.push(a.slice(3));
  for (let i = 1; i < seg.argv.length; i++) {
    const a = seg.argv[i] as string;
    if (DEST_LAST.has(p) && (a === '-t' || a === '--target-directory')) out.push(seg.argv[i + 1] ?? '');
    else if (DEST_LAST.has(p) && a.startsWith('--target-directory=')) out.push(a.slice(19));
  }
  return out;
}

function anywhereRule(seg: SimpleCommand, label: string, flag: Flag, homes: KnownHomes): void {
  for (const t of plainWrites(seg)) {
    const why = runsAnywhere(t, false, homes);
    if (why !== null) flag(`${label}: ${seg.program || 'a redirect'} writes to ${quote(t)} (${why})`);
  }
}

/** npm / yarn / pnpm settings that run a program or fetch packages from elsewhere. */
const NPM_KEYS =
  /^(?:script-shell|node-options|registry|@[^:]+:registry|shell|git|userconfig|globalconfig|prefix|init-module|onload-script|npmRegistryServer|yarnPath)$/i;
/** pip settings that fetch packages from elsewhere. */
const PIP_KEYS = /^(?:global|install|download|wheel)\.(?:index-url|extra-index-url|find-links|trusted-host)$/i;

/** The public package indexes themselves (setting the registry back to them changes nothing). */
const OFFICIAL_INDEX =
  /^https:\/\/(?:registry\.npmjs\.org|registry\.yarnpkg\.com|pypi\.org\/simple|files\.pythonhosted\.org)\/?$/;

function configRule(seg: SimpleCommand, label: string, flag: Flag): void {
  const p = seg.program;
  const ops = seg.argv.slice(1).filter((a) => !a.startsWith('-'));
  if (p === 'npm' || p === 'pnpm' || p === 'yarn' || p === 'bun') {
    const [sub, verb, key] = ops;
    const setting = sub === 'set' ? verb : (sub === 'config' || sub === 'c') && verb === 'set' ? key : undefined;
    const name = setting?.split('=', 1)[0];
    const value =
      setting?.includes('=') === true ? setting.slice(setting.indexOf('=') + 1) : ops[sub === 'set' ? 2 : 3];
    if (name !== undefined && NPM_KEYS.test(name) && !OFFICIAL_INDEX.test(value ?? ''))
      flag(`${label}: ${p} config set ${name} makes later installs or scripts run or fetch other code`);
  } else if (/^pip[0-9.]*$/.test(p) || p === 'uv') {
    const [key, value] = (ops[2] ?? '').includes('=') ? (ops[2] as string).split(/=(.*)/s) : [ops[2], ops[3]];
    if (ops[0] === 'config' && ops[1] === 'set' && PIP_KEYS.test(key ?? '') && !OFFICIAL_INDEX.test(value ?? ''))
      flag(`${label}: pip config set ${key} makes later installs fetch packages from elsewhere`);
  } else if (p === 'git') {
    const parsed = parseArgs('git', seg.argv);
    const pos = parsed.positionals;
    if (pos[0] !== 'config') return;
    const rest = pos.slice(1);
    const [key, value] = rest[0] === 'set' ? [rest[1], rest[2]] : [rest[0], rest[1]];
    // a third operand is a value pattern: the key is still written
    if (key === undefined || value === undefined) return;
    if (/^url\..+\.(?:push)?insteadof$/i.test(key))
      flag(`${label}: git config ${key} redirects every later clone, fetch or push`);
    else if (/^core\.worktree$/i.test(key))
      flag(`${label}: git config core.worktree makes checkouts write into ${quote(value)}`);
  }
}

/** The programs {@link startupHookRules} looks at, besides any segment's redirects. */
const PROGRAMS: ReadonlySet<string> = new Set(['chmod', 'install', 'npm', 'pnpm', 'yarn', 'bun', 'git', 'uv']);

/** Setuid, run-anywhere start-up files and tool settings of one segment. */
export function startupHookRules(seg: SimpleCommand, label: string, flag: Flag, homes: KnownHomes): void {
  const p = seg.program;
  if (PROGRAMS.has(p) || /^pip[0-9.]*$/.test(p)) {
    setuidRule(seg, label, flag, homes);
    configRule(seg, label, flag);
  }
  anywhereRule(seg, label, flag, homes);
}

/** `echo … > .envrc && direnv allow`: the file just written is approved to run on every `cd` there. */
export function direnvRule(segments: readonly SimpleCommand[], flag: Flag, homes: KnownHomes): void {
  const allow = segments.findIndex((s) => s.program === 'direnv' && /^(?:allow|permit|grant)$/.test(s.argv[1] ?? ''));
  if (allow < 0) return;
  const written = segments.some((s) => plainWrites(s).some((t) => runsAnywhere(t, true, homes) !== null));
  if (written)
    flag(`segment ${allow + 1}: direnv allow approves an .envrc written by this command (it runs on every cd there)`);
}
