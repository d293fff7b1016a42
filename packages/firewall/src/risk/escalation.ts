// Dangerous findings of one segment beyond the container rules of host-escape.ts: privilege
// escalation that is no plain wrapper (`machinectl shell`, `systemd-run --uid=0`, `setcap
// cap_setuid+ep`, `enable -f lib.so`), commands that run later or outside the agent's process
// tree (`at`, `batch`, `systemd-run` other than a `--scope`), writes of start-up and plugin files
// by programs that are no plain writers (`sponge`, `awk -i inplace`, `sed w`, `ex`/`vim -es`/`ed`,
// `git clone … ~/.oh-my-zsh`, `git clone --template`; extraction.ts: `tar -x -C ~`), and commands
// that stop or steer finger itself (`pkill -f myfinger`, `killall node`, `systemctl --user stop
// finger`, `fuser -k 7770/tcp`, a request to the daemon's API, the `myfinger` CLI).

import { awkPrograms, awkWrites } from './awk-code.js';
import type { CommandModel, SimpleCommand } from './command-model.js';
import { normalizePath, secretPath, sensitiveWriteTarget } from './paths.js';
import { sedScripts, sedWrites } from './sed-code.js';
import { direnvRule } from './startup-hooks.js';
import { logRedirectRule } from './system-tampering.js';
import type { Word } from './wrappers.js';

/** Records one dangerous finding. */
export type Flag = (reason: string) => void;

/** finger's default port (the daemon's `server.port`, the CLI's default URL). */
export const FINGER_PORT = 7770;

function quote(s: string): string {
  return `'${s.length > 80 ? `${s.slice(0, 77)}…` : s}'`;
}

const words = (seg: SimpleCommand): Word[] => seg.argv.map((text, i) => ({ text, dynamic: seg.dynamic.includes(i) }));
const operands = (args: readonly string[]): string[] => args.filter((a) => !a.startsWith('-'));

/** What writing into a directory may overwrite: the directory itself, or a home's start-up files and keys. */
export function sensitiveDirectory(dir: string): string | null {
  const own = sensitiveWriteTarget(dir);
  if (own !== null) return own;
  const n = normalizePath(dir);
  if (n === '/') return 'the root directory';
  for (const probe of ['.bashrc', '.ssh/authorized_keys']) {
    const s = sensitiveWriteTarget(`${dir.replace(/\/+$/, '')}/${probe}`);
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

function writeRules(seg: SimpleCommand, label: string, flag: Flag): void {
  for (const w of extraWrites(seg)) {
    const sens = w.dir ? sensitiveDirectory(w.path) : sensitiveWriteTarget(w.path);
    if (sens !== null) flag(`${label}: ${w.how} ${quote(w.path)} (${sens})`);
  }
  if (seg.program === 'git') {
    const ops = operands(seg.argv.slice(1));
    if ((ops[0] === 'clone' || ops[0] === 'init') && seg.argv.some((a) => /^--template(?:=|$)/.test(a)))
      flag(`${label}: git ${ops[0]} --template installs hooks from a template (they run on later git commands)`);
  }
}

// ---- finger itself -----------------------------------------------------------------------------

/** What finger's processes look like to pkill: the process name, and a full command line (`-f`). */
const FINGER_NAMES = ['node', 'myfinger', 'finger'];
const FINGER_COMMAND_LINES = [
  'node /usr/lib/node_modules/finger/packages/cli/bin/myfinger.js daemon start --foreground',
  'myfinger daemon start',
  // the interpreter by its full path, as `ps -o args` shows it when started from a unit file
  '/usr/bin/node /usr/lib/node_modules/finger/packages/cli/bin/myfinger.js daemon start --foreground',
  '/usr/local/bin/node /usr/local/lib/node_modules/finger/packages/cli/bin/myfinger.js daemon start',
];
/** pkill / pgrep options that take a value. */
const PKILL_ARG =
  /^-[a-zA-Z]*[dgGPstuUFe]$|^--(?:delimiter|pgroup|group|parent|session|terminal|euid|uid|pidfile|ns|nslist|signal|runstates|cgroup|env)$/;

/** Whether `pkill ARGS` (or killall) may signal finger's daemon: its pattern matches it, or it picks by user/terminal only. */
function pkillHitsFinger(args: readonly string[]): string | null {
  let full = false;
  let exact = false;
  let ignoreCase = false;
  let negate = false;
  let selectors = false;
  const patterns: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--full' || /^-[a-zA-Z]*f/.test(a)) full = true;
    if (a === '--exact' || /^-[a-zA-Z]*x/.test(a)) exact = true;
    if (a === '--ignore-case' || /^-[a-zA-Z]*i/.test(a)) ignoreCase = true;
    if (a === '--inverse' || /^-[a-zA-Z]*v/.test(a)) negate = true;
    if (/^-[a-zA-Z]*[uUgGPst]|^--(?:euid|uid|group|pgroup|parent|session|terminal)/.test(a)) selectors = true;
    if (PKILL_ARG.test(a)) i++;
    else if (!a.startsWith('-')) patterns.push(a);
  }
  if (patterns.length === 0) return selectors ? 'every process of a user, group or session' : null;
  if (negate) return `every process not matching ${quote(patterns[0] as string)}`;
  for (const pattern of patterns) {
    // a pattern that could backtrack for long (a quantified group, stacked or many quantifiers) is not tried
    if (pattern.length > 200 || /\)[*+?{]|[*+}][*+{]/.test(pattern) || (pattern.match(/[*+{]/g)?.length ?? 0) > 3)
      continue;
    let re: RegExp;
    try {
      re = new RegExp(exact ? `^(?:${pattern})$` : pattern, ignoreCase ? 'i' : '');
    } catch {
      continue;
    }
    const hit = [...FINGER_NAMES, ...(full ? FINGER_COMMAND_LINES : [])].find((n) => re.test(n));
    if (hit !== undefined) return `the pattern ${quote(pattern)} matches ${quote(hit)}`;
  }
  return null;
}

const LOOPBACK = String.raw`(?:127(?:\.\d{1,3}){0,3}|localhost|0\.0\.0\.0|0|\[?::1?\]?|\[?::ffff:127(?:\.\d{1,3}){3}\]?|2130706433|0x7f0*1)`;
/** An address of finger's daemon on this machine: `127.0.0.1:7770`, `localhost:7770`, `[::1]:7770`… */
const DAEMON_ADDRESS = new RegExp(`(?:^|[/@\\s=]|^https?://)${LOOPBACK}\\]?:${FINGER_PORT}(?!\\d)`, 'i');
const SELF_UNIT = /finger/i;
const IPTABLES = /^(?:ip6?tables(?:-legacy|-nft)?)$/;
const STOPPING_VERBS =
  /^(?:stop|kill|mask|disable|restart|try-restart|reload-or-restart|freeze|isolate|unload|bootout|remove)$/;

function fingerRules(seg: SimpleCommand, label: string, flag: Flag): void {
  const p = seg.program;
  const args = seg.argv.slice(1);
  if (p === 'pkill' || p === 'pgrep') {
    if (p === 'pkill') {
      const hit = pkillHitsFinger(args);
      if (hit !== null) flag(`${label}: pkill may stop finger itself (${hit})`);
    }
  } else if (p === 'killall') {
    const regex = args.some((a) => a === '-r' || a === '--regexp');
    const byUser = args.some((a) => /^-[a-zA-Z]*u$|^--user/.test(a));
    // the value of -u / --user / -s / -o / -y is no process name
    const names = operands(
      args.filter(
        (_, k) => !/^-[a-zA-Z]*[usoyn]$|^--(?:user|signal|older-than|younger-than|ns)$/.test(args[k - 1] ?? ''),
      ),
    );
    const hit = regex
      ? pkillHitsFinger(['-f', ...names])
      : (names.find((n) => FINGER_NAMES.includes(n.replace(/^.*\//, ''))) ?? null);
    if (hit !== null || (byUser && names.length === 0))
      flag(`${label}: killall may stop finger itself (${hit ?? 'every process of a user'})`);
  } else if (p === 'systemctl' || p === 'service' || p === 'launchctl') {
    const ops = operands(args);
    const verb = p === 'service' ? ops[1] : ops[0];
    const units = p === 'service' ? ops.slice(0, 1) : ops.slice(1);
    if (verb !== undefined && STOPPING_VERBS.test(verb) && units.some((u) => SELF_UNIT.test(u)))
      flag(`${label}: ${p} ${verb} stops finger itself`);
  } else if (p === 'fuser') {
    if (
      args.some((a) => /^-[a-zA-Z]*k/.test(a)) &&
      args.some((a) => a === String(FINGER_PORT) || a.startsWith(`${FINGER_PORT}/`))
    )
      flag(`${label}: fuser -k kills what listens on finger's port ${FINGER_PORT}`);
  } else if (p === 'kill') {
    const stop = args.findIndex(
      (a, k) =>
        /^-(?:SIG)?STOP$|^-19$/i.test(a) ||
        (/^(?:-s|-n|--signal)$/.test(args[k - 1] ?? '') && /^(?:SIG)?STOP$|^19$/i.test(a)),
    );
    if (stop >= 0) flag(`${label}: kill -STOP freezes a process (finger itself, unnoticed)`);
    const parent = args.find((a) => /\$\{?PPID\b|\bppid\b/.test(a));
    if (parent !== undefined)
      flag(`${label}: kill signals the shell's parent (${quote(parent)}), which may be finger itself`);
  } else if (IPTABLES.test(p) || p === 'nft') {
    if (
      args.some((a) => a === String(FINGER_PORT) || PORT_WORD.test(a)) &&
      args.some((a) => /^(?:-[AIR]|--append|--insert|--replace|add|insert)$/.test(a))
    )
      flag(`${label}: ${p} adds a rule for finger's port ${FINGER_PORT} (cuts finger off)`);
  } else if (p === 'sqlite3' || p === 'sqlite') {
    const db = operands(args)[0];
    const sens = db === undefined ? null : sensitiveWriteTarget(db);
    if (sens !== null && !args.includes('-readonly'))
      flag(`${label}: ${p} opens ${quote(db as string)} for writing (${sens})`);
  } else if (p === 'myfinger' && !args.every((a) => a === '--help' || a === '-h' || a === '--version' || a === '-V')) {
    flag(`${label}: myfinger talks to finger's daemon (an agent must not steer its own firewall)`);
  }
}

/** A request to finger's own daemon (`curl -X POST http://127.0.0.1:7770/v1/policy/reset`), from any program. */
export function daemonRequestRule(seg: SimpleCommand, label: string, flag: Flag): void {
  if (!seg.argv.some((a, i) => i > 0 && a.includes(String(FINGER_PORT)))) return;
  const addr = seg.argv.find((a, i) => i > 0 && DAEMON_ADDRESS.test(a));
  if (addr !== undefined) flag(`${label}: ${seg.program} sends a request to finger's own daemon (${quote(addr)})`);
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
export function escalationRules(seg: SimpleCommand, label: string, flag: Flag): void {
  privilegeRules(seg, label, flag);
  laterRules(seg, label, flag);
  writeRules(seg, label, flag);
  fingerRules(seg, label, flag);
}

const KILLERS: ReadonlySet<string> = new Set(['kill', 'pkill', 'killall', 'skill', 'fuser']);
/** An argument naming finger's port (`:7770`, `7770/tcp`, `tcp:7770`, `sport = :7770`). */
const PORT_WORD = new RegExp(`(?:^|[:=\\s])${FINGER_PORT}(?:/tcp)?$|:${FINGER_PORT}(?!\\d)`);

/**
 * Findings over the whole command: a request to finger's daemon from any program, and a process
 * killed in a command that looks up what listens on finger's port (`kill $(lsof -ti :7770)`).
 */
export function fingerModelRules(model: CommandModel, flag: Flag): void {
  let killer = -1;
  let port = -1;
  model.segments.forEach((seg, i) => {
    daemonRequestRule(seg, `segment ${i + 1}`, flag);
    if (KILLERS.has(seg.program) && killer < 0) killer = i;
    if (port < 0 && seg.argv.some((a, k) => k > 0 && PORT_WORD.test(a))) port = i;
  });
  if (killer >= 0 && port >= 0 && model.segments[killer]?.program !== 'fuser')
    flag(
      `segment ${killer + 1}: ${model.segments[killer]?.program} may stop what listens on finger's port ${FINGER_PORT} (segment ${port + 1})`,
    );
  if (killer >= 0) {
    const ps = model.segments.some((s) => s.program === 'ps');
    const source = model.segments.findIndex((s, i) => i !== killer && fingerPidSource(s, ps));
    if (source >= 0)
      flag(
        `segment ${killer + 1}: ${model.segments[killer]?.program} may stop finger itself (segment ${source + 1} looks up its process)`,
      );
  }
  direnvRule(model.segments, flag);
  // a bare `> /var/log/wtmp` has no program for the segment rules
  model.segments.forEach((seg, i) => logRedirectRule(seg, `segment ${i + 1}`, flag));
}

/** A directory that may be finger's home: a registered one (sensitive to write) or `~/.finger` (a credential store). */
function fingerPlace(dir: string): boolean {
  return sensitiveWriteTarget(dir) !== null || secretPath(dir) !== null;
}

/** Words that name finger's processes in a process listing filtered by grep or awk. */
const FINGER_WORD = /finger|\bnode\b/i;

/**
 * Whether a segment looks up finger's process id: `pgrep -f finger`, `pidof node`, `cat
 * <finger_home>/daemon.pid`, `ps -o ppid=` (the shell's parent), or a `ps` listing (`ps`: the command has one) filtered for
 * finger or node.
 */
function fingerPidSource(seg: SimpleCommand, ps: boolean): boolean {
  const p = seg.program;
  const args = seg.argv.slice(1);
  if (p === 'pgrep') return pkillHitsFinger(args) !== null;
  if (p === 'pidof') return operands(args).some((n) => FINGER_NAMES.includes(n.replace(/^.*\//, '')));
  if (p === 'ps') return args.some((a) => /ppid/i.test(a));
  if (p === 'grep' || p === 'egrep' || p === 'awk' || p === 'gawk' || p === 'mawk')
    return ps && args.some((a) => FINGER_WORD.test(a));
  if (p === 'cat' || p === 'head' || p === 'tail' || p === 'read')
    return [...operands(args), ...seg.redirects.filter((r) => !r.is_write).map((r) => r.target)].some(
      (f) => /\.pid$/.test(f) && fingerPlace(f.replace(/\/[^/]*$/, '') || '/'),
    );
  return false;
}
