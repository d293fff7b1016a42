// "The governed cannot govern": commands that would steer or stop finger itself — a request to
// the daemon's own address (daemon-address.ts), running the `myfinger` CLI (but for its help and
// version), signalling the daemon (`kill <its pid>`, `kill $PPID`, `kill -9 -1`, `pkill node`,
// `killall myfinger`, `fuser -k 7770/tcp`, `kill $(lsof -ti :7770)`, `kill $(pgrep -f finger)`),
// stopping its service unit, or cutting its port off with a firewall rule. Each finding is
// forbidden: DENY for an agent whatever the policy says (forbidden.ts).

import type { CommandModel, SimpleCommand } from '../../command-model.js';
import type { KnownHomes } from '../places/known-homes.js';
import { secretPath, sensitiveWriteTarget } from '../places/paths.js';
import { daemonAddressIn, daemonPairIn } from './daemon-address.js';
import type { FingerSelf } from './finger-self.js';

/** Records one forbidden finding. */
export type Forbid = (reason: string) => void;

function quote(s: string): string {
  return `'${s.length > 80 ? `${s.slice(0, 77)}…` : s}'`;
}

const operands = (args: readonly string[]): string[] => args.filter((a) => !a.startsWith('-'));

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
export function pkillHitsFinger(args: readonly string[]): string | null {
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

const SELF_UNIT = /finger/i;
const IPTABLES = /^(?:ip6?tables(?:-legacy|-nft)?)$/;
const STOPPING_VERBS =
  /^(?:stop|kill|mask|disable|restart|try-restart|reload-or-restart|freeze|isolate|unload|bootout|remove)$/;

/** `myfinger`, its script, or its package, as a program or a runner's operand. */
const MYFINGER =
  /(?:^|\/)(?:myfinger(?:\.[cm]?js)?|@finger\/cli(?:@[^/]*)?)$|\/cli\/(?:dist\/main|bin\/myfinger)\.[cm]?js$/;
/** Programs that run a package's or a script's command (`npx myfinger`, `node …/myfinger.js`). */
const RUNNERS = new Set(['npx', 'npm', 'pnpm', 'yarn', 'bunx', 'bun', 'node', 'nodejs', 'deno', 'tsx', 'ts-node']);
/** What `myfinger` may run with: help and version only (nothing that reads its token or calls the daemon). */
const MYFINGER_READ_ONLY = new Set(['--help', '-h', '--version', '-V', 'help']);

/** The arguments `myfinger` gets in this segment (after its own word), or null when it does not run it. */
function myfingerArgs(seg: SimpleCommand): string[] | null {
  if (MYFINGER.test(seg.path) || /myfinger/.test(seg.argv[0] ?? '')) return seg.argv.slice(1);
  if (!RUNNERS.has(seg.program)) return null;
  const at = seg.argv.findIndex((w, i) => i > 0 && MYFINGER.test(w));
  return at < 0 ? null : seg.argv.slice(at + 1);
}

/** The process ids `kill` signals (its signal option skipped), as written. */
function killTargets(args: readonly string[]): string[] {
  const out: string[] = [];
  let signal = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--') {
      out.push(...args.slice(i + 1));
      break;
    }
    if (a === '-s' || a === '-n' || a === '--signal') {
      i++;
      signal = true;
    } else if (a === '-l' || a === '-L' || a === '--list' || a === '--table') return [];
    else if (a.startsWith('-') && !signal && !/^-\d+$/.test(a)) signal = true;
    else if (/^-\d+$/.test(a) && !signal && i + 1 < args.length) signal = true;
    else out.push(a);
  }
  return out;
}

function killRule(seg: SimpleCommand, label: string, self: FingerSelf, forbid: Forbid): void {
  const args = seg.argv.slice(1);
  const parent = args.find((a) => /\$\{?PPID\b|\bppid\b/.test(a));
  if (parent !== undefined)
    forbid(`${label}: kill signals the shell's parent (${quote(parent)}), which may be finger itself`);
  for (const t of killTargets(args)) {
    const n = /^-?\d+$/.test(t) ? Math.abs(Number(t)) : NaN;
    if (self.pids.includes(n)) forbid(`${label}: kill signals finger's daemon (pid ${n})`);
    else if (t === '-1') forbid(`${label}: kill -1 signals every process, finger's daemon among them`);
    else if (t === '0' || t === '-0')
      forbid(`${label}: kill 0 signals the whole process group, finger's daemon may be in it`);
  }
}

/** Findings of one segment. */
function segmentRules(seg: SimpleCommand, label: string, self: FingerSelf, forbid: Forbid): void {
  const p = seg.program;
  const args = seg.argv.slice(1);
  const port = (a: string): boolean => self.ports.some((n) => a === String(n) || a.startsWith(`${n}/`));
  if (p === 'pkill') {
    const hit = pkillHitsFinger(args);
    if (hit !== null) forbid(`${label}: pkill may stop finger itself (${hit})`);
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
      forbid(`${label}: killall may stop finger itself (${hit ?? 'every process of a user'})`);
  } else if (p === 'systemctl' || p === 'service' || p === 'launchctl') {
    const ops = operands(args);
    const verb = p === 'service' ? ops[1] : ops[0];
    const units = p === 'service' ? ops.slice(0, 1) : ops.slice(1);
    if (verb !== undefined && STOPPING_VERBS.test(verb) && units.some((u) => SELF_UNIT.test(u)))
      forbid(`${label}: ${p} ${verb} stops finger itself`);
  } else if (p === 'fuser') {
    const hit = args.find(port);
    if (args.some((a) => /^-[a-zA-Z]*k/.test(a)) && hit !== undefined)
      forbid(`${label}: fuser -k kills what listens on finger's port ${hit.replace(/\/.*$/, '')}`);
  } else if (p === 'kill') {
    killRule(seg, label, self, forbid);
  } else if (IPTABLES.test(p) || p === 'nft') {
    const hit = args.find((a) => port(a) || portWord(self).test(a));
    if (hit !== undefined && args.some((a) => /^(?:-[AIR]|--append|--insert|--replace|add|insert)$/.test(a)))
      forbid(`${label}: ${p} adds a rule for finger's port ${hit} (cuts finger off)`);
  }
  const cli = myfingerArgs(seg);
  if (cli !== null && !cli.every((a) => MYFINGER_READ_ONLY.has(a)))
    forbid(`${label}: myfinger talks to finger's daemon (an agent must not steer its own firewall)`);
}

/** An argument naming one of finger's ports (`:7770`, `7770/tcp`, `tcp:7770`, `sport = :7770`). */
function portWord(self: FingerSelf): RegExp {
  const ports = self.ports.join('|');
  return new RegExp(`(?:^|[:=\\s])(?:${ports})(?:/tcp)?$|:(?:${ports})(?!\\d)`);
}

const KILLERS: ReadonlySet<string> = new Set(['kill', 'pkill', 'killall', 'skill', 'fuser']);
/** Programs that connect a host and a port given as separate words, or in the code they run. */
const CLIENTS = new Set([
  'nc',
  'ncat',
  'netcat',
  'telnet',
  'socat',
  'openssl',
  'python',
  'python3',
  'python2',
  'node',
  'nodejs',
  'deno',
  'bun',
  'perl',
  'ruby',
  'php',
  'lua',
  'tclsh',
  'awk',
  'gawk',
  'bash',
  'sh',
  'zsh',
  'ksh',
  'dash',
  'busybox',
  'websocat',
  'wscat',
  'grpcurl',
  'http',
  'https',
  'xh',
  'curl',
  'wget',
]);

/** A directory that may be finger's home: a registered one (sensitive to write) or `~/.finger` (a credential store). */
function fingerPlace(dir: string, homes: KnownHomes): boolean {
  return sensitiveWriteTarget(dir, homes) !== null || secretPath(dir, homes) !== null;
}

/** Words that name finger's processes in a process listing filtered by grep or awk. */
const FINGER_WORD = /finger|\bnode\b/i;

/**
 * Whether a segment looks up finger's process id: `pgrep -f finger`, `pidof node`, `cat
 * <finger_home>/daemon.pid`, `ps -o ppid=` (the shell's parent), or a `ps` listing (`ps`: the command has one) filtered for
 * finger or node.
 */
function fingerPidSource(seg: SimpleCommand, ps: boolean, homes: KnownHomes): boolean {
  const p = seg.program;
  const args = seg.argv.slice(1);
  if (p === 'pgrep') return pkillHitsFinger(args) !== null;
  if (p === 'pidof') return operands(args).some((n) => FINGER_NAMES.includes(n.replace(/^.*\//, '')));
  if (p === 'ps') return args.some((a) => /ppid/i.test(a));
  if (p === 'grep' || p === 'egrep' || p === 'awk' || p === 'gawk' || p === 'mawk')
    return ps && args.some((a) => FINGER_WORD.test(a));
  if (p === 'cat' || p === 'head' || p === 'tail' || p === 'read')
    return [...operands(args), ...seg.redirects.filter((r) => !r.is_write).map((r) => r.target)].some(
      (f) => /\.pid$/.test(f) && fingerPlace(f.replace(/\/[^/]*$/, '') || '/', homes),
    );
  return false;
}

/**
 * Every finding of the command (see the file comment): per segment, a request to the daemon's
 * address in any word, redirect or assignment (`raw`: the command's text, for code strings the
 * model splits), and a process killed in a command that looks up finger's port or process;
 * `homes`: the judging assessor's (a pid file in its finger home).
 */
export function selfGovernanceRules(
  model: CommandModel,
  raw: string,
  self: FingerSelf,
  forbid: Forbid,
  homes: KnownHomes,
): void {
  let killer = -1;
  let port = -1;
  let named = false;
  const ports = portWord(self);
  model.segments.forEach((seg, i) => {
    const label = `segment ${i + 1}`;
    segmentRules(seg, label, self, forbid);
    const texts = [...seg.argv.slice(1), ...seg.redirects.map((r) => r.target), ...seg.assignments.map((a) => a.value)];
    for (const t of texts) {
      const addr = daemonAddressIn(t, self);
      if (addr !== null) {
        named = true;
        forbid(`${label}: ${seg.program || 'the shell'} sends a request to finger's own daemon (${quote(t)})`);
        break;
      }
    }
    if (CLIENTS.has(seg.program)) {
      const pair = daemonPairIn(seg.argv.slice(1), self);
      if (pair !== null) named = true;
      if (pair !== null) forbid(`${label}: ${seg.program} connects to finger's own daemon (${quote(pair)})`);
    }
    if (KILLERS.has(seg.program) && killer < 0) killer = i;
    if (port < 0 && seg.argv.some((a, k) => k > 0 && ports.test(a))) port = i;
  });
  for (const loop of model.loop_variables ?? []) {
    const addr = loop.words.map((w) => daemonAddressIn(w, self)).find((a) => a !== null);
    if (addr != null) named = true;
    if (addr != null) forbid(`the loop over '$${loop.name}' names finger's own daemon (${quote(addr)})`);
  }
  // what the model splits apart (a here-document, a code string): the text as written
  const addr = named ? null : daemonAddressIn(raw, self);
  if (addr !== null) forbid(`the command names finger's own daemon (${quote(addr)})`);
  if (killer >= 0 && port >= 0 && model.segments[killer]?.program !== 'fuser')
    forbid(
      `segment ${killer + 1}: ${model.segments[killer]?.program} may stop what listens on finger's port ${self.ports.join(', ')} (segment ${port + 1})`,
    );
  if (killer >= 0) {
    const ps = model.segments.some((s) => s.program === 'ps');
    const source = model.segments.findIndex((s, i) => i !== killer && fingerPidSource(s, ps, homes));
    if (source >= 0)
      forbid(
        `segment ${killer + 1}: ${model.segments[killer]?.program} may stop finger itself (segment ${source + 1} looks up its process)`,
      );
  }
}
