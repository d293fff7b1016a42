// Host escapes and persistence: container runs that hand the container the host (docker / podman
// / nerdctl `run|create|exec` with --privileged, host namespaces, powerful capabilities, no
// confinement, host disks, or a mount of `/`, /etc, home, the engine socket…), nsenter and chroot,
// and commands that make something run again later (installing a crontab, enabling a service);
// escalation.ts adds privilege, later runs, start-up file writes and stopping finger itself.

import type { SimpleCommand } from '../command-model.js';
import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { normalizePath, secretPath, sensitiveWriteTarget } from '../knowledge/places/paths.js';
import { ESCALATION_PROGRAMS, escalationRules } from './escalation.js';

/** Records one dangerous finding (classify.ts passes `Findings.add` bound to 'dangerous'). */
export type Flag = (reason: string) => void;

export const ENGINES: ReadonlySet<string> = new Set(['docker', 'podman', 'nerdctl']);
/** Global options of the engines that take a value (before the subcommand). */
const GLOBAL_ARG = new Set([
  'host',
  'context',
  'config',
  'log-level',
  'tlscacert',
  'tlscert',
  'tlskey',
  'url',
  'connection',
  'identity',
  'root',
  'runroot',
  'storage-driver',
  'storage-opt',
  'cgroup-manager',
  'namespace',
  'address',
  'snapshotter',
  'module',
]);
const GLOBAL_SHORT_ARG = new Set(['H', 'c', 'l', 'n', 'a']);
/**
 * Long options of run/create/exec that take no value; every other long option is read as taking
 * one (short: the letters of RUN_SHORT_ARG take one, the others — -d -i -t -P -q — do not).
 */
const RUN_BOOL = new Set([
  'detach',
  'interactive',
  'tty',
  'rm',
  'privileged',
  'init',
  'publish-all',
  'read-only',
  'no-healthcheck',
  'oom-kill-disable',
  'sig-proxy',
  'quiet',
  'help',
  'disable-content-trust',
  'use-api-socket',
  'replace',
  'rmi',
  'read-only-tmpfs',
  'tls-verify',
  'env-host',
  'no-hosts',
  'passwd',
  'http-proxy',
  'latest',
  'preserve-fds',
]);
const RUN_SHORT_ARG: ReadonlyMap<string, string> = new Map([
  ['a', 'attach'],
  ['c', 'cpu-shares'],
  ['e', 'env'],
  ['h', 'hostname'],
  ['l', 'label'],
  ['m', 'memory'],
  ['p', 'publish'],
  ['u', 'user'],
  ['v', 'volume'],
  ['w', 'workdir'],
]);
const HOST_NAMESPACES = new Set(['pid', 'network', 'net', 'ipc', 'uts', 'userns', 'cgroupns']);
const ESCAPE_CAPS = new Set([
  'ALL',
  'SYS_ADMIN',
  'SYS_PTRACE',
  'SYS_MODULE',
  'SYS_RAWIO',
  'DAC_READ_SEARCH',
  'DAC_OVERRIDE',
  'NET_ADMIN',
  'BPF',
]);
const UNCONFINED = /^(?:apparmor[=:]unconfined|seccomp[=:]unconfined|label[=:]disable|systempaths[=:]unconfined)$/i;
const HOST_DEVICE = /^\/dev\/(?:sd|hd|vd|xvd|nvme|mmcblk|dm-|loop|md|disk\/|mapper\/|mem$|kmem$|port$)/;
const ENGINE_SOCKET = /(?:^|\/)(?:docker|containerd|podman|crio|cri-dockerd|buildkitd)\.sock$/;

/** The argv index past a container engine's global options (`docker -H x run`: 3), where its subcommand is. */
export function engineGlobalsEnd(argv: readonly string[]): number {
  let i = 1;
  while (i < argv.length) {
    const w = argv[i] as string;
    if (!w.startsWith('-') || w === '-') break;
    if (w.startsWith('--')) i += !w.includes('=') && GLOBAL_ARG.has(w.slice(2)) ? 2 : 1;
    else i += w.length === 2 && GLOBAL_SHORT_ARG.has(w[1] as string) ? 2 : 1;
  }
  return i;
}

/** The subcommand (`run`, `create`, `exec`, also as `container run`) and where its options start, or null. */
function containerSubcommand(argv: readonly string[]): { sub: string; at: number } | null {
  let i = engineGlobalsEnd(argv);
  let sub = argv[i];
  if (sub === 'container') sub = argv[++i];
  if (sub !== 'run' && sub !== 'create' && sub !== 'exec') return null;
  return { sub, at: i + 1 };
}

/** The options of a run/create/exec before the image (or container) operand, as [name, value]. */
function runOptions(argv: readonly string[], from: number): [string, string][] {
  const out: [string, string][] = [];
  for (let i = from; i < argv.length; i++) {
    const w = argv[i] as string;
    if (w === '--' || !w.startsWith('-') || w === '-') break;
    if (w.startsWith('--')) {
      const eq = w.indexOf('=');
      const name = eq < 0 ? w.slice(2) : w.slice(2, eq);
      if (eq >= 0) out.push([name, w.slice(eq + 1)]);
      else if (RUN_BOOL.has(name)) out.push([name, '']);
      else out.push([name, argv[++i] ?? '']);
      continue;
    }
    for (let k = 1; k < w.length; k++) {
      const letter = w[k] as string;
      const long = RUN_SHORT_ARG.get(letter);
      if (long !== undefined) {
        // pflag also reads `-v=/:/h` as the value `/:/h`
        out.push([long, k < w.length - 1 ? w.slice(k + 1).replace(/^=/, '') : (argv[++i] ?? '')]);
        break;
      }
      out.push([`-${letter}`, '']);
    }
  }
  return out;
}

/** What a bind mount of this host path would hand the container, or null when it is harmless. */
export function hostMountRisk(src: string, homes: KnownHomes): string | null {
  const n = normalizePath(src, homes);
  if (n === null || n === '') return null;
  if (n === '/') return "the host's root file system";
  if (n === '~') return 'the home directory';
  if (n === '/home' || n === '/Users') return 'every home directory';
  if (ENGINE_SOCKET.test(n) || n === '/var/run' || n === '/run') return 'the container engine socket';
  if (n === '/var/lib/docker' || n.startsWith('/var/lib/docker/')) return "the container engine's storage";
  const secret = secretPath(n, homes);
  if (secret !== null) return `the credentials in ${secret}`;
  const sens = sensitiveWriteTarget(n, homes);
  if (sens !== null) return sens;
  return null;
}

/** The host path of a `-v src:dst[:opts]` value, or null for a named volume / anonymous volume. */
function volumeSource(value: string): string | null {
  const colon = value.indexOf(':');
  if (colon < 0) return null;
  const src = value.slice(0, colon);
  return /^[/~$.]/.test(src) ? src : null;
}

/** The host path of a `--mount type=bind,source=…` value, or null. */
function mountSource(value: string): string | null {
  let type = 'volume';
  let src: string | null = null;
  for (const kv of value.split(',')) {
    const eq = kv.indexOf('=');
    const k = (eq < 0 ? kv : kv.slice(0, eq)).trim().toLowerCase();
    const v = eq < 0 ? '' : kv.slice(eq + 1).trim();
    if (k === 'type') type = v.toLowerCase();
    else if (k === 'source' || k === 'src') src = v;
    // a named volume bound to a host path: volume-opt=device=/,volume-opt=o=bind
    else if (k === 'volume-opt' && /^device=/i.test(v)) return v.slice(7);
  }
  return type === 'bind' || (src !== null && /^[/~]/.test(src)) ? src : null;
}

function containerRule(seg: SimpleCommand, label: string, flag: Flag, homes: KnownHomes): void {
  const found = containerSubcommand(seg.argv);
  if (found === null) return;
  const what = `${seg.program} ${found.sub}`;
  for (const [name, value] of runOptions(seg.argv, found.at)) {
    if (name === 'privileged' && value !== 'false') {
      flag(`${label}: ${what} --privileged gives the container the host (container escape)`);
    } else if (HOST_NAMESPACES.has(name) && value.toLowerCase() === 'host') {
      flag(`${label}: ${what} --${name}=host shares the host's ${name} namespace (container escape)`);
    } else if (name === 'cap-add') {
      for (const cap of value.split(',')) {
        const c = cap.trim().toUpperCase().replace(/^CAP_/, '');
        if (ESCAPE_CAPS.has(c))
          flag(`${label}: ${what} --cap-add=${c} lets the container break out (container escape)`);
      }
    } else if (name === 'security-opt' && UNCONFINED.test(value)) {
      flag(`${label}: ${what} --security-opt ${value} turns off the container's confinement (container escape)`);
    } else if (name === 'device' && HOST_DEVICE.test(value.split(':')[0] as string)) {
      flag(`${label}: ${what} --device ${quote(value)} gives the container a host disk or memory (container escape)`);
    } else if (name === 'rootfs' && hostMountRisk(value, homes) !== null) {
      flag(`${label}: ${what} --rootfs ${quote(value)} runs the container on the host's files (container escape)`);
    } else if (name === 'volume' || name === 'mount') {
      const src = name === 'volume' ? volumeSource(value) : mountSource(value);
      const risk = src === null ? null : hostMountRisk(src, homes);
      if (risk !== null)
        flag(`${label}: ${what} mounts ${quote(src as string)} (${risk}) into the container (container escape)`);
    }
  }
}

function quote(s: string): string {
  return `'${s.length > 80 ? `${s.slice(0, 77)}…` : s}'`;
}

/** Programs that enable a service or job so that it starts again later, by subcommand. */
const ENABLERS: ReadonlyMap<string, RegExp> = new Map([
  ['systemctl', /^(?:enable|reenable|link|add-wants|add-requires|edit)$/],
  ['launchctl', /^(?:load|bootstrap|enable|submit)$/],
  ['update-rc.d', /^(?:defaults|enable)$/],
  ['rc-update', /^add$/],
  ['chkconfig', /^(?:on|--add)$/],
  ['loginctl', /^enable-linger$/],
]);

/** `crontab FILE`, `crontab -`, `… | crontab`: a crontab is installed unless -l/-e/-r (list, edit, remove). */
function installsCrontab(argv: readonly string[]): boolean {
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i] as string;
    if (w === '-u') {
      i++;
      continue;
    }
    if (/^-[a-zA-Z]+$/.test(w) && /[lerV]/.test(w)) return false;
    if (w === '--help' || w === '--version') return false;
  }
  return true;
}

function persistenceRule(seg: SimpleCommand, label: string, flag: Flag): void {
  const p = seg.program;
  if (p === 'crontab' && installsCrontab(seg.argv)) {
    flag(`${label}: crontab installs a new crontab (persistence: runs commands on a schedule)`);
    return;
  }
  const verbs = ENABLERS.get(p);
  if (verbs === undefined) return;
  const verb = seg.argv.slice(1).find((a) => verbs.test(a));
  if (verb !== undefined) flag(`${label}: ${p} ${verb} makes a service start at boot or login (persistence)`);
}

/** The values of `--NAME X` / `--NAME=X` (and `-S X` / `-SX` when `short` is given). */
function valuesOf(argv: readonly string[], name: string, short?: string): string[] {
  const out: string[] = [];
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === `--${name}` || (short !== undefined && a === `-${short}`)) out.push(argv[i + 1] ?? '');
    else if (a.startsWith(`--${name}=`)) out.push(a.slice(name.length + 3));
    else if (short !== undefined && a.startsWith(`-${short}`) && !a.startsWith('--'))
      out.push(a.slice(2).replace(/^=/, ''));
  }
  return out;
}

/** Writes to an engine's API: a body, a file upload or a method other than GET / HEAD. */
const API_WRITE = /^(?:-[a-zA-Z]*[dFT]|--data(?:-\w+)?|--json|--form|--upload-file)(?:=|$)/;
const KUBE_ESCAPE = /"(?:privileged|hostPID|hostNetwork|hostIPC|allowPrivilegeEscalation)"\s*:\s*true|"hostPath"\s*:/;

/**
 * Other runtimes handed the host: `docker volume create -o device=/ -o o=bind`, a POST to the
 * engine socket (`curl --unix-socket /var/run/docker.sock`), `ctr run --mount …src=/`,
 * `systemd-nspawn -D /`, `lxc config device add … source=/`, `kubectl debug node/…`, `kubectl run
 * --overrides` with a privileged or host-namespace pod.
 */
function runtimeRule(seg: SimpleCommand, label: string, flag: Flag, homes: KnownHomes): void {
  const p = seg.program;
  const argv = seg.argv;
  const ops = argv.slice(1).filter((a) => !a.startsWith('-'));
  if (ENGINES.has(p)) {
    const at = engineGlobalsEnd(argv);
    if (argv[at] === 'volume' && argv[at + 1] === 'create') {
      const dev = [...valuesOf(argv, 'opt', 'o')].find((o) => /^device=/i.test(o));
      const risk = dev === undefined ? null : hostMountRisk(dev.slice(7), homes);
      if (risk !== null)
        flag(`${label}: ${p} volume create binds ${quote(dev as string)} (${risk}) for containers (container escape)`);
    }
  } else if (p === 'curl') {
    const socket = [...valuesOf(argv, 'unix-socket'), ...valuesOf(argv, 'abstract-unix-socket')].find((s) =>
      ENGINE_SOCKET.test(s),
    );
    if (socket === undefined) return;
    const method = valuesOf(argv, 'request', 'X').find((m) => !/^(?:GET|HEAD)$/i.test(m));
    if (method !== undefined || argv.some((a) => API_WRITE.test(a)))
      flag(
        `${label}: curl sends a request that changes something to the container engine ${quote(socket)} (root on the host)`,
      );
  } else if (p === 'ctr') {
    if (argv.includes('--privileged'))
      flag(`${label}: ctr --privileged gives the container the host (container escape)`);
    for (const m of valuesOf(argv, 'mount')) {
      const src = mountSource(m.includes('type=') ? m : `type=bind,${m}`);
      const risk = src === null ? null : hostMountRisk(src, homes);
      if (risk !== null)
        flag(`${label}: ctr mounts ${quote(src as string)} (${risk}) into the container (container escape)`);
    }
  } else if (p === 'systemd-nspawn') {
    const dirs = [...valuesOf(argv, 'directory', 'D'), ...valuesOf(argv, 'image', 'i')];
    const binds = [...valuesOf(argv, 'bind'), ...valuesOf(argv, 'bind-ro')].map((b) => b.split(':')[0] as string);
    const hit = [...dirs, ...binds].find((d) => hostMountRisk(d, homes) !== null);
    if (hit !== undefined)
      flag(`${label}: systemd-nspawn runs a container on ${quote(hit)} (${hostMountRisk(hit, homes)})`);
  } else if (p === 'lxc' || p === 'incus') {
    const src = ops.find((o) => /^source=/.test(o));
    const risk = src === undefined ? null : hostMountRisk(src.slice(7), homes);
    if (ops[0] === 'config' && risk !== null)
      flag(`${label}: ${p} gives a container the host path ${quote(src as string)} (${risk})`);
    if (ops[0] === 'config' && ops.some((o) => /^security\.privileged(?:=true)?$/.test(o)) && !ops.includes('false'))
      flag(`${label}: ${p} makes a container privileged (container escape)`);
  } else if (p === 'kubectl' || p === 'oc') {
    if (ops[0] === 'debug' && ops.some((o) => /^(?:node|nodes|no)\//.test(o)))
      flag(`${label}: ${p} debug node/… runs a pod with the node's root file system and namespaces (host escape)`);
    else if (ops[0] === 'run') {
      const o = valuesOf(argv, 'overrides').find((v) => KUBE_ESCAPE.test(v));
      if (o !== undefined || argv.includes('--privileged') || argv.includes('--privileged=true'))
        flag(`${label}: ${p} run starts a privileged or host-namespace pod (host escape)`);
    }
  }
}

/** The programs {@link hostEscapeRules} looks at (a cheap first test for every segment). */
export const HOST_ESCAPE_PROGRAMS: ReadonlySet<string> = new Set([
  ...ENGINES,
  'nsenter',
  'chroot',
  'crontab',
  ...ENABLERS.keys(),
  ...ESCALATION_PROGRAMS,
  'curl',
  'ctr',
  'systemd-nspawn',
  'lxc',
  'incus',
  'kubectl',
  'oc',
]);

/** Host-escape, privilege, persistence and self-protection findings of one segment (escalation.ts: the latter). */
export function hostEscapeRules(seg: SimpleCommand, label: string, flag: Flag, homes: KnownHomes): void {
  const p = seg.program;
  if (ENGINES.has(p)) containerRule(seg, label, flag, homes);
  else if (p === 'nsenter') flag(`${label}: nsenter enters another process's namespaces (host escape)`);
  else if (p === 'chroot') flag(`${label}: chroot runs a command under another root directory (host escape)`);
  else persistenceRule(seg, label, flag);
  runtimeRule(seg, label, flag, homes);
  if (ESCALATION_PROGRAMS.has(p)) escalationRules(seg, label, flag, homes);
}
