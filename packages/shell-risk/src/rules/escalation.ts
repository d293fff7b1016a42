// Dangerous findings of one segment beyond the container rules of host-escape.ts: privilege
// escalation that is no plain wrapper (`machinectl shell`, `systemd-run --uid=0`, `setcap
// cap_setuid+ep`, `enable -f lib.so`), commands that run later or outside the agent's process
// tree (`at`, `batch`, `systemd-run` other than a `--scope`), writes of start-up and plugin files
// by programs that are no plain writers (`sponge`, `awk -i inplace`, `sed w`, `ex`/`vim -es`/`ed`,
// `git clone … ~/.oh-my-zsh`, `git clone --template`; extraction.ts: `tar -x -C ~`), and commands
// that freeze a process (`kill -STOP`) or open finger's files for writing (`sqlite3`); what stops
// or steers finger itself is forbidden (self-governance.ts).

import type { CommandModel, SimpleCommand } from '../command-model.js';
import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { normalizePath, sensitiveWriteTarget } from '../knowledge/places/paths.js';
import { awkPrograms, awkWrites } from '../wrappers/awk-code.js';
import type { Word } from '../wrappers/expansion.js';
import { sedScripts, sedWrites } from '../wrappers/sed-code.js';
import { direnvRule } from './startup-hooks.js';
import { logRedirectRule } from './system-tampering.js';

/** Records one dangerous finding. */
export type Flag = (reason: string) => void;

function quote(s: string): string {
  return `'${s.length > 80 ? `${s.slice(0, 77)}…` : s}'`;
}

const words = (seg: SimpleCommand): Word[] => seg.argv.map((text, i) => ({ text, dynamic: seg.dynamic.includes(i) }));
const operands = (args: readonly string[]): string[] => args.filter((a) => !a.startsWith('-'));

/** What writing into a directory may overwrite: the directory itself, or a home's start-up files and keys. */
export function sensitiveDirectory(dir: string, homes: KnownHomes): string | null {
  const own = sensitiveWriteTarget(dir, homes);
  if (own !== null) return own;
  const n = normalizePath(dir, homes);
  if (n === '/') return 'the root directory';
  for (const probe of ['.bashrc', '.ssh/authorized_keys']) {
    const s = sensitiveWriteTarget(`${dir.replace(/\/+$/, '')}/${probe}`, homes);
    if (s !== null) return `${s}, in ${quote(dir)}`;
  }
  return null;
}

// ---- privilege ---------------------------------------------------------------------------------

const ROOT = /^(?:0|root)$/;
const ESCALATING_CAPS =
  /cap_(?:setuid|setgid|sys_admin|sys_ptrace|sys_module|dac_override|dac_read_search|chown|fowner|sys_rawio|bpf|net_admin|all)|^all[=+]|[,\s]all[=+]|^=[eip]+$/i;

function privilegeRules(seg: SimpleCommand, label: string, flag: Flag): void {
  const p = seg.program;
  const args = seg.argv.slice(1);
  if (p === 'machinectl') {
    const verb = operands(args)[0];
    if (verb === 'shell' || verb === 'login')
      flag(`${label}: machinectl ${verb} opens a shell on a machine (the host itself as .host), as root by default`);
  } else if (p === 'systemd-run') {
    const uid = systemdRunValues(args, 'uid', 'User');
    if (uid.some((u) => ROOT.test(u))) flag(`${label}: systemd-run runs a command as root`);
  } else if (p === 'setcap') {
    const caps = operands(args).find((a) => /cap_|^=|[+=][eip]+$/i.test(a));
    if (caps !== undefined && ESCALATING_CAPS.test(caps) && /[+=][a-z]*[ep]/i.test(caps))
      flag(`${label}: setcap ${quote(caps)} gives a program root's powers (privilege escalation)`);
  } else if (p === 'enable' && args.some((a) => /^-[a-zA-Z]*f/.test(a))) {
    flag(`${label}: enable -f loads a shared object into the shell (it runs native code)`);
  }
}

/** The values systemd-run is given for `--NAME=` and for `-p KEY=` / `--property=KEY=`. */
function systemdRunValues(args: readonly string[], name: string, key: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === `--${name}`) out.push(args[++i] ?? '');
    else if (a.startsWith(`--${name}=`)) out.push(a.slice(name.length + 3));
    else if (a === '-p' || a === '--property') {
      const v = args[++i] ?? '';
      if (v.startsWith(`${key}=`)) out.push(v.slice(key.length + 1));
    } else if (a.startsWith('--property=') || (a.startsWith('-p') && a.length > 2)) {
      const v = a.startsWith('-p') ? a.slice(2) : a.slice(11);
      if (v.startsWith(`${key}=`)) out.push(v.slice(key.length + 1));
    }
  }
  return out;
}

// ---- later runs --------------------------------------------------------------------------------

/** at / batch: a job for later (not -l / -r / -d / -c, which list, remove or print jobs). */
function schedules(argv: readonly string[]): boolean {
  return !argv.slice(1).some((a) => /^-[a-zA-Z]*[lrdc]/.test(a) || a === '--help' || a === '-V');
}

function laterRules(seg: SimpleCommand, label: string, flag: Flag): void {
  const p = seg.program;
  if ((p === 'at' || p === 'batch') && schedules(seg.argv)) {
    flag(`${label}: ${p} schedules commands to run later (persistence: they run after the command ends)`);
  } else if (p === 'systemd-run') {
    const args = seg.argv.slice(1);
    const timer = args.find((a) => /^--on-|^--timer-property/.test(a));
    if (timer !== undefined) flag(`${label}: systemd-run ${timer.split('=')[0]} schedules a command (persistence)`);
    else if (!args.some((a) => a === '--scope'))
      flag(`${label}: systemd-run starts a service outside this command's process tree (it outlives a stop)`);
  }
}

// ---- writes ------------------------------------------------------------------------------------

const EDITORS: ReadonlySet<string> = new Set([
  'ex',
  'ed',
  'red',
  'vi',
  'vim',
  'nvim',
  'view',
  'vim.basic',
  'vim.tiny',
  'nano',
  'emacs',
]);

/** The files (or directories) a segment writes that the plain writer rules do not know, each with how. */
function extraWrites(seg: SimpleCommand): { path: string; how: string; dir: boolean }[] {
  const p = seg.program;
  const args = seg.argv.slice(1);
  const out: { path: string; how: string; dir: boolean }[] = [];
  if (p === 'sponge') for (const f of operands(args)) out.push({ path: f, how: 'sponge writes', dir: false });
  else if (p === 'awk' || p === 'gawk' || p === 'mawk' || p === 'nawk') {
    for (const f of awkWrites(awkPrograms(words(seg)))) out.push({ path: f, how: `${p} writes`, dir: false });
  } else if (p === 'sed' || p === 'gsed') {
    for (const f of sedWrites(sedScripts(words(seg)))) out.push({ path: f, how: 'sed w writes', dir: false });
  } else if (EDITORS.has(p)) {
    for (const f of operands(args)) out.push({ path: f, how: `${p} edits`, dir: false });
  } else if (p === 'git') {
    const ops = operands(args);
    const sub = ops[0];
    if (sub === 'clone' && ops[2] !== undefined) out.push({ path: ops[2], how: 'git clone writes', dir: true });
  }
  return out;
}

function writeRules(seg: SimpleCommand, label: string, flag: Flag, homes: KnownHomes): void {
  for (const w of extraWrites(seg)) {
    const sens = w.dir ? sensitiveDirectory(w.path, homes) : sensitiveWriteTarget(w.path, homes);
    if (sens !== null) flag(`${label}: ${w.how} ${quote(w.path)} (${sens})`);
  }
  if (seg.program === 'git') {
    const ops = operands(seg.argv.slice(1));
    if ((ops[0] === 'clone' || ops[0] === 'init') && seg.argv.some((a) => /^--template(?:=|$)/.test(a)))
      flag(`${label}: git ${ops[0]} --template installs hooks from a template (they run on later git commands)`);
  }
}

// ---- finger itself -----------------------------------------------------------------------------
// (what steers or stops finger itself is forbidden, not only dangerous: self-governance.ts)

function freezeRules(seg: SimpleCommand, label: string, flag: Flag, homes: KnownHomes): void {
  const p = seg.program;
  const args = seg.argv.slice(1);
  if (p === 'kill') {
    const stop = args.findIndex(
      (a, k) =>
        /^-(?:SIG)?STOP$|^-19$/i.test(a) ||
        (/^(?:-s|-n|--signal)$/.test(args[k - 1] ?? '') && /^(?:SIG)?STOP$|^19$/i.test(a)),
    );
    if (stop >= 0) flag(`${label}: kill -STOP freezes a process (finger itself, unnoticed)`);
  } else if (p === 'sqlite3' || p === 'sqlite') {
    const db = operands(args)[0];
    const sens = db === undefined ? null : sensitiveWriteTarget(db, homes);
    if (sens !== null && !args.includes('-readonly'))
      flag(`${label}: ${p} opens ${quote(db as string)} for writing (${sens})`);
  }
}

/** The programs {@link escalationRules} looks at (a cheap first test for every segment). */
export const ESCALATION_PROGRAMS: ReadonlySet<string> = new Set([
  'machinectl',
  'systemd-run',
  'setcap',
  'enable',
  'at',
  'batch',
  'sponge',
  'awk',
  'gawk',
  'mawk',
  'nawk',
  'sed',
  'gsed',
  ...EDITORS,
  'git',
  'pkill',
  'killall',
  'systemctl',
  'service',
  'launchctl',
  'fuser',
  'myfinger',
  'kill',
  'iptables',
  'ip6tables',
  'iptables-legacy',
  'iptables-nft',
  'ip6tables-legacy',
  'ip6tables-nft',
  'nft',
  'sqlite3',
  'sqlite',
]);

/** Privilege, later-run, write and finger-stopping findings of one segment. */
export function escalationRules(seg: SimpleCommand, label: string, flag: Flag, homes: KnownHomes): void {
  privilegeRules(seg, label, flag);
  laterRules(seg, label, flag);
  writeRules(seg, label, flag, homes);
  freezeRules(seg, label, flag, homes);
}

/** Findings over the whole command: `.envrc` hooks and log files emptied by a bare redirection. */
export function fingerModelRules(model: CommandModel, flag: Flag, homes: KnownHomes): void {
  direnvRule(model.segments, flag, homes);
  // a bare `> /var/log/wtmp` has no program for the segment rules
  model.segments.forEach((seg, i) => logRedirectRule(seg, `segment ${i + 1}`, flag, homes));
}
