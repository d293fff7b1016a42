// What inline interpreter code does that a person must see by name (script-code.ts judges the
// deletes, argv lists and writes of five languages; this file covers every interpreter and names
// the danger): a reverse shell ("python3 code opens a reverse shell to 10.0.0.1:4242"), a bind
// shell, a start-up file written, a credential file sent, code downloaded and run.
// The code is found wherever the interpreter takes it: `-c` / `-e` / `-E` / `-r` / `--eval` /
// `-p` words (also joined, `ruby -e'…'`), `deno eval CODE`, `pwsh -Command …`, a here-document or
// here-string (`python3 - <<'EOF'`), static text piped in (`echo '…' | python3 -`, `| tclsh`),
// and a file the same command line writes with static text and then runs (`echo '…' > t.go && go
// run t.go`). Detection is by tables of API shapes, not a parser: a socket that connects (or
// listens) together with a shell spawned, descriptors duplicated onto it, or a command run from
// what it reads.

import type { CommandModel, SimpleCommand } from '../command-model.js';
import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { secretPath } from '../knowledge/places/paths.js';
import { startupFile } from '../knowledge/places/startup-files.js';
import { staticOutput } from '../parse/script-text.js';
import { runsFile, scriptKey } from './download-run.js';
import { type NetworkEnd, showEnd } from './remote-shells.js';

/** Inline code longer than this is scanned only up to here. */
const MAX_CODE = 16384;

/** The interpreters, and the options that take their code. */
const CODE_OPTIONS: readonly (readonly [RegExp, RegExp])[] = [
  [/^(?:python[0-9.]*|pypy[0-9.]*)$/, /^-c$/],
  [/^(?:node|nodejs|bun)$/, /^(?:-e|--eval|-p|--print)$/],
  [/^deno$/, /^eval$/],
  [/^perl$/, /^-[a-zA-Z]*[eE]$/],
  [/^ruby$/, /^-[a-zA-Z]*e$/],
  [/^php$/, /^-r$/],
  [/^(?:lua[0-9.]*|luajit)$/, /^-e$/],
  [/^(?:jrunscript|jjs)$/, /^-e$/],
  [/^(?:pwsh|powershell)$/, /^-(?:c|command|Command|EncodedCommand)$/i],
];
/** Interpreters that join the code option's value to it (`ruby -e'…'`, `perl -e'…'`). */
const JOINED = /^(?:perl|ruby|lua[0-9.]*|luajit)$/;
/** Interpreters that read code from stdin with no operand or `-`. */
const STDIN_CODE =
  /^(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|perl|ruby|php|lua[0-9.]*|luajit|tclsh[0-9.]*|wish|jrunscript)$/;
/** `go run F`, `python3 F`, `node F`…: runs the file F. */
const FILE_RUNNERS =
  /^(?:python[0-9.]*|pypy[0-9.]*|node|nodejs|bun|deno|perl|ruby|php|lua[0-9.]*|luajit|tclsh[0-9.]*|go)$/;

function codeOption(program: string): RegExp | null {
  for (const [p, o] of CODE_OPTIONS) if (p.test(program)) return o;
  return null;
}

/** The code words a segment's own argv holds. */
function argvCode(seg: SimpleCommand): string[] {
  const option = codeOption(seg.program);
  if (option === null) return [];
  const a = seg.argv;
  const out: string[] = [];
  for (let i = 1; i < a.length; i++) {
    const w = a[i] as string;
    if (option.test(w) && i + 1 < a.length && !seg.dynamic.includes(i + 1)) {
      // pwsh -Command takes the rest of the line
      out.push(/^(?:pwsh|powershell)$/.test(seg.program) ? a.slice(i + 1).join(' ') : (a[++i] as string));
    } else if (JOINED.test(seg.program) && /^-[a-zA-Z]*e./.test(w) && !w.startsWith('--') && !seg.dynamic.includes(i)) {
      out.push(w.slice(w.indexOf('e') + 1));
    }
  }
  return out;
}

/** Whether the interpreter takes its code from stdin (no code option, no script operand but `-`). */
function readsStdinCode(seg: SimpleCommand): boolean {
  if (!STDIN_CODE.test(seg.program) || argvCode(seg).length > 0) return false;
  const operands = seg.argv.slice(1).filter((w) => !w.startsWith('-') || w === '-');
  return operands.length === 0 || operands[0] === '-';
}

/** The text the previous stage of seg's pipeline writes, when static (`echo '…' | python3 -`). */
function pipedText(segs: readonly SimpleCommand[], i: number): string | null {
  const seg = segs[i] as SimpleCommand;
  const at = seg.pipeline;
  if (at === null || at.index === 0) return null;
  for (let j = i - 1; j >= 0; j--) {
    const s = segs[j] as SimpleCommand;
    if (s.pipeline?.id === at.id && s.pipeline.index === at.index - 1 && !s.wrapper) return staticOutput(s);
  }
  return null;
}

/** Every piece of code segment i runs (see the file comment). */
function codesOf(segs: readonly SimpleCommand[], i: number, written: ReadonlyMap<string, string>): string[] {
  const seg = segs[i] as SimpleCommand;
  const out = argvCode(seg);
  if (readsStdinCode(seg)) {
    for (const r of seg.redirects) if (/^<<[-<]?$/.test(r.op) && !r.dynamic) out.push(r.target);
    const piped = pipedText(segs, i);
    if (piped !== null) out.push(piped);
  }
  if (FILE_RUNNERS.test(seg.program)) {
    for (const w of seg.argv.slice(1)) {
      const text = written.get(w.replace(/^\.\//, ''));
      if (text !== undefined) out.push(text);
    }
  }
  return out.map((c) => c.slice(0, MAX_CODE));
}

/** Sockets that connect out, by API (python, node / deno / bun, perl, ruby, php, lua, tcl, java, go, .NET). */
const CONNECT =
  /\.connect\s*\(|\bcreate_connection\s*\(|\bnet\.(?:connect|createConnection|Socket)\b|\bDeno\.connect\b|\bBun\.connect\b|\bIO::Socket(?:::INET)?\b|\bTCPSocket\.(?:new|open)\b|\bSocket\.tcp\b|\bfsockopen\s*\(|\bstream_socket_client\s*\(|\bsocket_connect\s*\(|\bsocket\.tcp\s*\(|(?:^|[[;\s])socket\s+(?!-server)[\w.$-]+\s+\w+|\bjava\.net\.Socket\b|\bcreateConnection\s*\(|\bnet\.Dial\s*\(|\bSockets\.TCPClient\b|(?<![\w.])connect\s*\(\s*\w+\s*,\s*sockaddr_in\b/;
/** Sockets that listen, by API. */
const LISTEN =
  /\.bind\s*\(|(?<![\w.])(?:bind|listen)\s*\(\s*[A-Z]\w*\s*,|\.listen\s*\(|\bcreateServer\s*\(|\bTCPServer\.(?:new|open)\b|\bLocalPort\s*=>|\bsocket_bind\s*\(|\bstream_socket_server\s*\(|\bsocket\s+-server\b|\bServerSocket\b|\bnet\.Listen\s*\(|\bDeno\.listen\b/;
/** A shell started by name: a string literal naming one, or a pty. */
const SHELL =
  /["'`](?:\/bin\/|\/usr\/bin\/)?(?:ba|z|da|k|c|tc|fi|)sh(?:\s+-[il]+)?(?:\s[^"'`]{0,40})?["'`]|\bcmd\.exe\b|\bpty\.spawn\b|\bexec\s+["']?\/bin\/(?:ba)?sh\b/;
/** The socket's descriptors put on a process's stdio, or the socket piped to one. */
const WIRED =
  /\bdup2\s*\(|\bfdopen\s*\(|open\s*\(\s*STD(?:IN|OUT|ERR)\s*,\s*["']?[<>]&|\[\s*:in\s*,\s*:out|\.pipe\s*\(\s*\w+\.stdin\b|\bstdin\s*[:=]\s*\w*\.?(?:fileno|c\b|s\b|sock)|<&%d|<&3|\.Stdin\s*=|\bredirectErrorStream\b/;
/** A command run from what the socket reads (`IO.popen(cmd)`, `system$_ while<>`, `io.popen(l)`, `iex $data`). */
const RUNS_INPUT =
  /\b(?:IO\.popen|io\.popen|popen|os\.execute|os\.system|system|exec|shell_exec|passthru|subprocess\.\w+)\s*(?:\(?\s*["']?\$?(?:_|\w+)\b(?!["'])|\(\s*"\$\w+")|\biex\s+\$|\bInvoke-Expression\s+\$|\beval\s+\$\w/;
/** Network APIs that send (for credential files read by the same code). */
const NETWORK =
  /\b(?:urlopen|urllib|requests\.|http\.client|httpx|aiohttp|socket|fetch\s*\(|https?\.request|https?\.get|request\s*\(|net\.connect|XMLHttpRequest|axios|Net::HTTP|TCPSocket|IO::Socket|LWP|HTTP::Tiny|curl_exec|fsockopen|socket\.tcp)|require\(\s*["'](?:node:)?(?:https?|net)["']\s*\)/;
/** Code fetched over HTTP and run in the same process. */
const FETCH =
  /\b(?:https?\.get|fetch|urlopen|requests\.get|URI\.open|iwr|irm|Invoke-WebRequest|Invoke-RestMethod|DownloadString|file_get_contents|get)\s*\(?\s*["']?https?:/i;
const EVAL = /(?<![\w.])(?:eval|exec|Function|iex|Invoke-Expression)\b/;
/** Writes a file (a mode that writes or appends, or a write call). */
const WRITES =
  /\b(?:open|io\.open|fopen|File\.open|codecs\.open)\s*\([^;]*?,\s*["'](?:[wa]|r\+|>>?)|\b(?:write|writeFile|writeFileSync|appendFile|appendFileSync|file_put_contents|binwrite|write_text|outputFileSync)\s*\(|\bopen\s*\(?\s*\w+\s*,\s*["']>>?|\bopen\s+\S+\s+[wa]\b/;
const STRING = /(["'])((?:\\.|(?!\1)[^\\\n]){1,300})\1/g;
const HOST =
  /^(?:\d{1,3}(?:\.\d{1,3}){3}|\[?[0-9a-f]*:[0-9a-f:]+\]?|(?=[^/]*[a-z])[a-z0-9-]+(?:\.[a-z0-9-]+)+)(?::(\d{1,5}))?$/i;
/** A port-like number: two to five digits, not a descriptor 0-2. */
const NUMBER = /(?<![\w.])["']?(\d{2,5})["']?(?![\w.])/g;

function quote(s: string): string {
  return `'${s.length > 60 ? `${s.slice(0, 57)}…` : s}'`;
}

/** The string literals of code, with `"/.bashrc"` after a home expression read as `~/.bashrc`. */
function literals(code: string): string[] {
  const out: string[] = [];
  for (const m of code.matchAll(STRING)) {
    const v = m[2] as string;
    if (v.startsWith('/.')) out.push(`~${v}`);
    out.push(v);
    if (/^~?\/?\$(?:ENV\{HOME\}|HOME)\//.test(v)) out.push(v.replace(/^~?\/?\$(?:ENV\{HOME\}|HOME)/, '~'));
  }
  return out;
}

/** Where connecting code connects: the first host-like literal and the port beside it. */
function connectEnd(code: string): NetworkEnd {
  for (const m of code.matchAll(STRING)) {
    const v = m[2] as string;
    const h = HOST.exec(v);
    if (h === null || /\.(?:py|js|rb|pl|php|sh|service|so|json|txt|pem)$/i.test(v)) continue;
    if (h[1] !== undefined) return { listen: false, host: v.slice(0, v.lastIndexOf(':')), port: h[1] };
    const at = m.index;
    const near = `${code.slice(Math.max(0, at - 30), at)} ${code.slice(at + m[0].length, at + m[0].length + 30)}`;
    const port = [...near.matchAll(NUMBER)].map((n) => n[1] as string).find((n) => Number(n) > 0 && Number(n) < 65536);
    return { listen: false, host: v, ...(port === undefined ? {} : { port }) };
  }
  return { listen: false };
}

/** The port listening code binds: the first port-like number after the bind or listen call. */
function listenEnd(code: string): NetworkEnd {
  const m = LISTEN.exec(code);
  const after = m === null ? code : code.slice(m.index);
  const port = [...after.matchAll(NUMBER)].map((n) => n[1] as string).find((n) => Number(n) > 0 && Number(n) < 65536);
  return { listen: true, ...(port === undefined ? {} : { port }) };
}

/** The dangerous findings of one piece of code run by segment `label`. */
function scan(code: string, label: string, add: (reason: string) => void, homes: KnownHomes): void {
  const shell = SHELL.test(code) || WIRED.test(code) || RUNS_INPUT.test(code);
  if (shell && LISTEN.test(code) && /accept\s*\(|\.listen\s*\(|\bTCPServer\b|\bsocket\s+-server\b|LocalPort/.test(code))
    add(`${label} ${showEnd(listenEnd(code))} (a listening socket with a shell on it)`);
  else if (shell && CONNECT.test(code)) add(`${label} ${showEnd(connectEnd(code))} (a socket with a shell on it)`);
  const strings = literals(code);
  if (WRITES.test(code)) {
    for (const s of strings) {
      const why = startupFile(s, homes);
      if (why !== null) {
        add(`${label} writes the start-up file ${quote(s)} (${why})`);
        break;
      }
    }
  }
  if (NETWORK.test(code)) {
    for (const s of strings) {
      if (/\.pub$/.test(s) || secretPath(s, homes) === null) continue;
      add(`${label} sends the credential file ${quote(s)} over the network (exfiltration)`);
      break;
    }
  }
  if (FETCH.test(code) && EVAL.test(code)) add(`${label} runs code it downloads at run time`);
}

/** Files written with static text by a segment's redirect (`echo '…' > t.go`), by path as written. */
function writtenTexts(segs: readonly SimpleCommand[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const s of segs) {
    const target = s.redirects.find((r) => (r.op === '>' || r.op === '>>') && !r.dynamic)?.target;
    if (target === undefined) continue;
    const text = staticOutput(s);
    if (text !== null) out.set(target.replace(/^\.\//, ''), text);
  }
  return out;
}

/** A download to a file in code: `urlretrieve(URL, PATH)`, php `copy(URL, PATH)`, `download_file(URL, PATH)`. */
const DOWNLOAD_TO =
  /\b(?:urlretrieve|copy|download_file|downloadFile|download)\s*\(\s*["']https?:[^"']*["']\s*,\s*["']([^"']+)["']/g;

/** Adds the dangerous findings of the code every interpreter segment runs (see the file comment). */
export function codeShellRules(model: CommandModel, add: (reason: string) => void, homes: KnownHomes): void {
  const segs = model.segments;
  const written = writtenTexts(segs);
  const downloaded = new Map<string, number>();
  segs.forEach((seg, i) => {
    if (seg.wrapper || seg.unknown_program) return;
    const ran = downloaded.size === 0 ? null : runsFile(seg, downloaded);
    if (ran !== null)
      add(
        `segment ${i + 1}: ${seg.program} runs ${quote(ran)}, which ${(segs[downloaded.get(scriptKey(ran)) as number] as SimpleCommand).program} code (segment ${(downloaded.get(scriptKey(ran)) as number) + 1}) downloads`,
      );
    for (const code of codesOf(segs, i, written)) {
      scan(code, `segment ${i + 1}: ${seg.program} code`, add, homes);
      for (const m of code.matchAll(DOWNLOAD_TO)) downloaded.set(scriptKey(m[1] as string), i);
    }
  });
}
