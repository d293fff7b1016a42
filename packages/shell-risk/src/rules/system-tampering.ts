// System-wide damage that is no `rm -rf ~`: accounts given root (`useradd -o -u 0`, `usermod -aG
// sudo`, `chpasswd`, `passwd -d`), kernel modules loaded or security modules removed, privilege
// droppers run as root (`gosu root`), security controls turned off (firewall flushed or opened,
// SELinux permissive, AppArmor torn down, audit rules deleted, ASLR off), logs wiped, broad system
// data deleted (`/var/lib`, `/var/log`, `/srv/x`), disks, volumes and firmware wiped, file systems
// unmounted or made read-only, and the disk filled (`fallocate -l 500G`, unbounded `dd`, `yes > f`).

import type { SimpleCommand } from '../command-model.js';
import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { normalizePath, sensitiveWriteTarget } from '../knowledge/places/paths.js';

/** Adds a dangerous finding. */
export type Flag = (reason: string) => void;

function quote(s: string): string {
  return `'${s.length > 80 ? `${s.slice(0, 77)}…` : s}'`;
}

const operands = (args: readonly string[]): string[] => args.filter((a) => !a.startsWith('-'));
const hasShort = (args: readonly string[], letter: string): boolean =>
  args.some((a) => new RegExp(`^-[a-zA-Z0-9]*${letter}`).test(a) && !a.startsWith('--'));

/** The values given to an option (`-u 0`, `-u0`, `--uid 0`, `--uid=0`); the short letter must end a cluster to take the next word. */
function optionValues(args: readonly string[], short: string | null, long: string | null): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (long !== null && a === `--${long}`) out.push(args[i + 1] ?? '');
    else if (long !== null && a.startsWith(`--${long}=`)) out.push(a.slice(long.length + 3));
    else if (short !== null && /^-[a-zA-Z]+/.test(a) && !a.startsWith('--')) {
      const at = a.indexOf(short);
      if (at < 1) continue;
      out.push(at === a.length - 1 ? (args[i + 1] ?? '') : a.slice(at + 1).replace(/^=/, ''));
    }
  }
  return out;
}

// ---- accounts, kernel, privilege ---------------------------------------------------------------

const ROOT_ID = /^(?:0+|root)(?::(?:0+|root)?)?$/;
const PRIVILEGED_GROUPS =
  /^(?:0|root|sudo|wheel|admin|adm|docker|lxd|lxc|libvirt|disk|shadow|kmem|systemd-journal|staff|podman)$/;
const SECURITY_MODULES =
  /^(?:apparmor|selinux|yama|lockdown|tomoyo|smack|landlock|loadpin|audit|ip_tables|ip6_tables|iptable_\w+|ip6table_\w+|x_tables|nf_tables|nft_\w+|nf_conntrack\w*|xt_\w+|br_netfilter)$/;

function accountRule(seg: SimpleCommand, label: string, flag: Flag): void {
  const p = seg.program;
  const args = seg.argv.slice(1);
  if (p === 'useradd' || p === 'usermod' || p === 'adduser' || p === 'luseradd') {
    if (optionValues(args, 'u', 'uid').some((u) => ROOT_ID.test(u)))
      flag(`${label}: ${p} gives an account user id 0 (a second root)`);
    const groups = [...optionValues(args, 'G', 'groups'), ...optionValues(args, 'g', 'gid')]
      .concat(p === 'adduser' && operands(args).length === 2 ? [operands(args)[1] as string] : [])
      .flatMap((g) => g.split(','));
    const g = groups.find((x) => PRIVILEGED_GROUPS.test(x.trim()));
    if (g !== undefined) flag(`${label}: ${p} puts an account in the group ${quote(g)} (root's powers)`);
    if (optionValues(args, 'p', 'password').some((v) => v !== ''))
      flag(`${label}: ${p} sets an account's password hash`);
  } else if (p === 'gpasswd' || p === 'groupmems' || p === 'addgroup') {
    const ops = operands(args);
    const g = [...ops, ...optionValues(args, 'g', 'group'), ...optionValues(args, 'M', 'members')].find((x) =>
      PRIVILEGED_GROUPS.test(x),
    );
    if (g !== undefined && (p !== 'addgroup' || ops.length === 2))
      flag(`${label}: ${p} changes the members of the group ${quote(g)} (root's powers)`);
  } else if (p === 'chpasswd' || p === 'chgpasswd' || p === 'newusers') {
    flag(`${label}: ${p} sets account passwords from its input`);
  } else if (p === 'passwd') {
    if (args.some((a) => a === '--delete' || /^-[a-zA-Z]*d/.test(a) || a === '--stdin'))
      flag(`${label}: passwd ${args.find((a) => a.startsWith('-'))} removes or sets a password without asking`);
  } else if (p === 'insmod') {
    flag(`${label}: insmod loads a kernel module (code in the kernel)`);
  } else if (p === 'rmmod' || (p === 'modprobe' && args.some((a) => a === '--remove' || /^-[a-zA-Z]*r/.test(a)))) {
    const m = operands(args).find((x) => SECURITY_MODULES.test(x.replace(/-/g, '_')));
    if (m !== undefined) flag(`${label}: ${p} removes the security module ${quote(m)}`);
  } else if (p === 'gosu' || p === 'su-exec' || p === 'chpst' || p === 'setuidgid') {
    const who = p === 'chpst' ? optionValues(args, 'u', null)[0] : operands(args)[0];
    if (who !== undefined && ROOT_ID.test(who)) flag(`${label}: ${p} runs a command as root`);
  }
}

// ---- security controls and logs ----------------------------------------------------------------

const SECURITY_UNITS =
  /^(?:firewalld|ufw|nftables|iptables|ip6tables|netfilter-persistent|apparmor|auditd|audit|fail2ban|rsyslog|syslog|syslog-ng|systemd-journald|falco|osqueryd|wazuh-agent|falcon-sensor|crowdsec|clamav-daemon|selinux|aide)(?:\.service|\.socket)?$/;
const UNIT_STOPPERS = /^(?:stop|kill|mask|disable|freeze)$/;
const SECURITY_SYSCTL =
  /^(?:kernel\.(?:randomize_va_space|yama\.\w+|kptr_restrict|dmesg_restrict|perf_event_paranoid|unprivileged_\w+|core_pattern|modprobe|modules_disabled|kexec_load_disabled|sysrq)|fs\.(?:protected_\w+|suid_dumpable)|net\.core\.bpf_jit_harden|user\.max_user_namespaces)$/;
const IPTABLES = /^(?:ip6?tables(?:-legacy|-nft)?|ebtables|arptables)$/;

function controlRule(seg: SimpleCommand, label: string, flag: Flag, homes: KnownHomes): void {
  const p = seg.program;
  const args = seg.argv.slice(1);
  const ops = operands(args);
  if (IPTABLES.test(p)) {
    if (args.some((a) => a === '--flush' || a === '--delete-chain' || /^-[a-zA-Z]*[FX]/.test(a)))
      flag(`${label}: ${p} flushes firewall rules`);
    if (args.some((a) => a === '--policy' || /^-[a-zA-Z]*P/.test(a)))
      flag(`${label}: ${p} -P changes a chain's default policy`);
  } else if (p === 'nft') {
    if (/^(?:flush|delete|destroy)$/.test(ops[0] ?? '') && /^(?:ruleset|table|chain)$/.test(ops[1] ?? ''))
      flag(`${label}: nft ${ops[0]} ${ops[1]} removes firewall rules`);
    else if (args.some((a) => a === '-f' || a === '--file')) return;
  } else if (p === 'ufw') {
    if (ops[0] === 'disable' || ops[0] === 'reset') flag(`${label}: ufw ${ops[0]} turns the firewall off`);
  } else if (p === 'systemctl' || p === 'service' || p === 'rc-service') {
    const verb = p === 'systemctl' ? ops[0] : ops[1];
    const units = p === 'systemctl' ? ops.slice(1) : ops.slice(0, 1);
    const unit = units.find((u) => SECURITY_UNITS.test(u));
    if (verb !== undefined && UNIT_STOPPERS.test(verb) && unit !== undefined)
      flag(`${label}: ${p} ${verb} ${unit} turns a security control off`);
  } else if (p === 'setenforce') {
    if (/^(?:0|permissive)$/i.test(ops[0] ?? '')) flag(`${label}: setenforce ${ops[0]} turns SELinux enforcement off`);
  } else if (p === 'aa-teardown' || p === 'aa-disable' || p === 'aa-complain') {
    flag(`${label}: ${p} turns AppArmor confinement off`);
  } else if (p === 'apparmor_parser' && args.some((a) => a === '--remove' || /^-[a-zA-Z]*R/.test(a))) {
    flag(`${label}: apparmor_parser -R removes AppArmor profiles`);
  } else if (p === 'auditctl') {
    if (hasShort(args, 'D') || optionValues(args, 'e', null).some((v) => v === '0'))
      flag(`${label}: auditctl ${hasShort(args, 'D') ? '-D' : '-e 0'} turns auditing off`);
  } else if (p === 'sysctl') {
    for (const a of args) {
      const eq = a.indexOf('=');
      const key = (eq < 0 ? '' : a.slice(0, eq)).replace(/\//g, '.');
      if (SECURITY_SYSCTL.test(key)) flag(`${label}: sysctl ${key}=… weakens a kernel protection`);
    }
  } else if (p === 'journalctl') {
    const v = args.find((a) => a.startsWith('--vacuum-'));
    if (v !== undefined) flag(`${label}: journalctl ${v.split('=')[0]} deletes the system journal`);
  } else if (p === 'truncate') {
    for (const t of ops) if (isSystemLog(t, homes)) flag(`${label}: truncate empties the system log ${quote(t)}`);
  }
}

/** A system log (`/var/log/…`, the login records). */
function isSystemLog(word: string, homes: KnownHomes): boolean {
  const n = normalizePath(word, homes);
  return n !== null && /^\/var\/log\/.|^\/(?:var\/)?run\/utmp$|^\/var\/(?:adm|audit)\//.test(n);
}

/** `> /var/log/wtmp`, `cat /dev/null > /var/log/auth.log`: a system log emptied (not `>>`). */
export function logRedirectRule(seg: SimpleCommand, label: string, flag: Flag, homes: KnownHomes): void {
  for (const r of seg.redirects)
    if (r.is_write && r.op !== '>>' && r.op !== '&>>' && !r.dynamic && isSystemLog(r.target, homes))
      flag(`${label}: redirect ${r.op} empties the system log ${quote(r.target)}`);
}

// ---- system data, disks, mounts ----------------------------------------------------------------

/** Directories that hold a machine's data (the directory itself or one level below it; `…/data`, `…/backups` deeper). */
const DATA_ROOTS =
  /^\/(?:var\/(?:lib|log|mail|spool|backups|opt|www|db)|srv|mnt|media|opt|data|backup|backups)(?=\/|$)/;

/** Whether deleting a path removes a machine's data: a data root, a child of it, or a data directory below it. */
export function isSystemData(word: string, homes: KnownHomes): boolean {
  const n = normalizePath(word.replace(/(?:\/\*?)+$/, '') || '/', homes);
  if (n === null) return false;
  const m = DATA_ROOTS.exec(n);
  if (m === null) return false;
  const rest = n
    .slice(m[0].length)
    .split('/')
    .filter((x) => x !== '');
  return rest.length <= 1 || /^(?:data|db|database|backups?|storage|volumes)$/i.test(rest[rest.length - 1] as string);
}

function dataRule(
  seg: SimpleCommand,
  label: string,
  flag: Flag,
  isBroad: (w: string) => boolean,
  homes: KnownHomes,
): void {
  const p = seg.program;
  const args = seg.argv.slice(1);
  if (p === 'rm' && args.some((a) => a === '--recursive' || /^-[a-zA-Z]*[rR]/.test(a))) {
    for (const t of operands(args))
      if (isSystemData(t, homes)) flag(`${label}: rm -r deletes the system data in ${quote(t)}`);
  } else if (p === 'git' && args[0] === 'clean' && args.some((a) => /^-[a-zA-Z]*f/.test(a) || a === '--force')) {
    for (const t of operands(args.slice(1))) {
      const n = normalizePath(t, homes);
      if (n !== null && n !== '.' && n !== '*' && isBroad(t))
        flag(`${label}: git clean deletes files under ${quote(t)}`);
    }
  }
}

/** Disk, volume and firmware tools, by program: the subcommands or options that wipe. */
const WIPERS: ReadonlyMap<string, (args: readonly string[], ops: readonly string[]) => boolean> = new Map([
  ['nvme', (_a, o) => /^(?:format|sanitize|delete-ns|detach-ns)$/.test(o[0] ?? '')],
  [
    'hdparm',
    (a) =>
      a.some((x) =>
        /^--(?:security-erase|security-erase-enhanced|trim-sector-ranges|make-bad-sector|write-sector|dco-restore|fwdownload)/.test(
          x,
        ),
      ),
  ],
  ['cryptsetup', (_a, o) => /^(?:luksFormat|erase|luksErase|luksKillSlot|reencrypt)$/i.test(o[0] ?? '')],
  ['lvremove', (a) => a.some((x) => /^-[a-zA-Z]*[fy]|^--(?:force|yes)$/.test(x))],
  ['vgremove', (a) => a.some((x) => /^-[a-zA-Z]*[fy]|^--(?:force|yes)$/.test(x))],
  ['pvremove', (a) => a.some((x) => /^-[a-zA-Z]*[fy]|^--(?:force|yes)$/.test(x))],
  ['zpool', (_a, o) => /^(?:destroy|labelclear)$/.test(o[0] ?? '')],
  ['zfs', (a, o) => o[0] === 'destroy' && a.some((x) => /^-[a-zA-Z]*[rRf]/.test(x))],
  ['btrfs', (_a, o) => /^su(?:b(?:volume)?)?$/.test(o[0] ?? '') && /^(?:del(?:ete)?|d)$/.test(o[1] ?? '')],
  ['mdadm', (a) => a.some((x) => x === '--zero-superblock')],
  ['dmsetup', (_a, o) => /^(?:remove_all|wipe_table)$/.test(o[0] ?? '')],
  ['flashrom', (a) => a.some((x) => /^-[a-zA-Z]*[wE]|^--(?:write|erase)/.test(x))],
  ['efibootmgr', (a) => a.some((x) => /^-[a-zA-Z]*B|^--delete-bootnum$/.test(x))],
  ['sg_format', () => true],
  ['badblocks', (a) => a.some((x) => /^-[a-zA-Z]*w/.test(x))],
]);

function diskRule(
  seg: SimpleCommand,
  label: string,
  flag: Flag,
  isBroad: (w: string) => boolean,
  homes: KnownHomes,
): void {
  const p = seg.program;
  const args = seg.argv.slice(1);
  const wipes = WIPERS.get(p);
  if (wipes !== undefined) {
    if (wipes(args, operands(args))) flag(`${label}: ${p} wipes or destroys disks, volumes or firmware`);
    return;
  }
  if (p === 'mount') {
    const opts = [...optionValues(args, 'o', 'options')].join(',');
    const ops = operands(
      args.filter((a, k) => !/^-[a-zA-Z]*[otOL]$|^--(?:options|types|label|uuid)$/.test(args[k - 1] ?? '')),
    );
    const target = ops[ops.length - 1];
    if (/(?:^|,)remount(?:,|$)/.test(opts) && /(?:^|,)ro(?:,|$)/.test(opts) && target !== undefined && isBroad(target))
      flag(`${label}: mount -o remount,ro makes ${quote(target)} read-only`);
    else if (ops.length >= 2 && target !== undefined) {
      const sens = mountOver(target, homes);
      if (sens !== null) flag(`${label}: mount hides ${quote(target)} under another file system (${sens})`);
    } else if (
      ops.length === 1 &&
      target !== undefined &&
      args.some((a) => /^--(?:r?bind|move)$|^-[a-zA-Z]*[BM]$/.test(a))
    ) {
      const sens = mountOver(target, homes);
      if (sens !== null) flag(`${label}: mount hides ${quote(target)} (${sens})`);
    }
  } else if (p === 'umount') {
    for (const t of operands(args)) {
      const n = normalizePath(t, homes);
      if (n !== null && (isBroad(t) || mountOver(t, homes) !== null))
        flag(`${label}: umount takes ${quote(t)} away from everything that uses it`);
    }
  }
}

/** What mounting over a directory hides: a sensitive place, or finger's own home (its config, audit…). */
function mountOver(target: string, homes: KnownHomes): string | null {
  const n = normalizePath(target, homes);
  if (n === null || n === '') return null;
  if (n === '/' || n === '~') return n === '/' ? 'the root directory' : 'the home directory';
  return (
    sensitiveWriteTarget(target, homes) ??
    (sensitiveWriteTarget(`${n}/audit`, homes) === null ? null : `finger's home ${quote(target)}`)
  );
}

// ---- disk fill ---------------------------------------------------------------------------------

const UNITS = 'KMGTPEZY';
/** Bytes of a size such as `500G`, `1.5TiB`, `10GB` (1024-based; near enough), or NaN. */
function sizeOf(text: string): number {
  const m = /^(\d{1,15}(?:\.\d{1,6})?)([KMGTPEZY])?(?:i?B)?$/i.exec(text);
  if (m === null) return NaN;
  const unit = m[2] === undefined ? 0 : UNITS.indexOf(m[2].toUpperCase()) + 1;
  return Number(m[1]) * 1024 ** unit;
}
/** A file this large fills most disks (10 GiB). */
const FILL = 10 * 1024 ** 3;
const ENDLESS = /^\/dev\/(?:zero|u?random|full)$/;

function fillRule(seg: SimpleCommand, label: string, flag: Flag): void {
  const p = seg.program;
  const args = seg.argv.slice(1);
  // a pipeline's redirect is on each of its segments: only the last one writes the file
  const last = seg.pipeline === null || seg.pipeline.index === seg.pipeline.length - 1;
  const redirected = last && seg.redirects.some((r) => r.is_write && !/^\/dev\/(?:null|std|fd\/)/.test(r.target));
  if (p === 'fallocate' || p === 'xfs_mkfile' || p === 'mkfile') {
    const sizes = p === 'fallocate' ? optionValues(args, 'l', 'length') : operands(args).slice(0, 1);
    const big = sizes.find((s) => sizeOf(s) >= FILL);
    if (big !== undefined) flag(`${label}: ${p} allocates ${big} (fills the disk)`);
  } else if (p === 'dd') {
    const input = args.find((a) => a.startsWith('if='))?.slice(3) ?? '';
    const output = args.find((a) => a.startsWith('of='))?.slice(3);
    const counted = args.some((a) => /^(?:count|iflag=count_bytes)=/.test(a) || a.startsWith('count='));
    if (ENDLESS.test(input) && !counted && (output !== undefined ? !output.startsWith('/dev/') : redirected))
      flag(`${label}: dd copies ${input} without a count (fills the disk)`);
  } else if (
    (p === 'yes' && redirected) ||
    (p === 'cat' && redirected && operands(args).some((a) => ENDLESS.test(a)))
  ) {
    flag(`${label}: ${p} writes without end into a file (fills the disk)`);
  }
}

// ---- entry -------------------------------------------------------------------------------------

/** Account, kernel, security-control, log, data, disk and disk-fill findings of one segment. */
export function systemTamperingRules(
  seg: SimpleCommand,
  label: string,
  flag: Flag,
  isBroad: (w: string) => boolean,
  homes: KnownHomes,
): void {
  accountRule(seg, label, flag);
  controlRule(seg, label, flag, homes);
  dataRule(seg, label, flag, isBroad, homes);
  diskRule(seg, label, flag, isBroad, homes);
  fillRule(seg, label, flag);
}
