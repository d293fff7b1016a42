// Which words of a network command name a file it sends: the word itself, an option's value, a
// `name@file` / `name=<file` field; and which name a file it only authenticates with (`ssh -i key`,
// `curl --cert c`), which is read but not sent.

import type { SimpleCommand } from '../command-model.js';

/** Options whose file only authenticates the connection (`ssh -i key`, `curl --cert c`): the file is not sent. */
const AUTH_SHORT = new Map([
  ['ssh', 'iF'],
  ['scp', 'iF'],
  ['sftp', 'iF'],
  ['curl', 'E'],
]);
const AUTH_LONG =
  /^--(?:cert|key|netrc-file|cacert|capath|proxy-cert|proxy-key|proxy-cacert|crlfile|pinnedpubkey|certificate|private-key|ca-certificate|ca-directory|crl-file)$/;
const SSH_AUTH_CONFIG = /^(?:IdentityFile|CertificateFile|UserKnownHostsFile|GlobalKnownHostsFile|IdentityAgent)\b/i;

/** argv indexes holding a file an option only authenticates with. */
export function authenticationFiles(seg: SimpleCommand): Set<number> {
  const out = new Set<number>();
  const short = AUTH_SHORT.get(seg.program) ?? '';
  const ssh = seg.program === 'ssh' || seg.program === 'scp' || seg.program === 'sftp';
  for (let i = 1; i < seg.argv.length; i++) {
    const w = seg.argv[i] as string;
    if (w.startsWith('--')) {
      if (AUTH_LONG.test(w.split('=', 1)[0] as string)) out.add(w.includes('=') ? i : i + 1);
    } else if (w.length > 1 && w.startsWith('-')) {
      const k = [...w.slice(1)].findIndex((c) => short.includes(c) || (ssh && c === 'o'));
      if (k < 0) continue;
      const attached = k + 2 < w.length;
      const at = attached ? i : i + 1;
      if (w[k + 1] === 'o' && !SSH_AUTH_CONFIG.test(attached ? w.slice(k + 2) : (seg.argv[i + 1] ?? ''))) continue;
      out.add(at);
    }
  }
  return out;
}

/**
 * The words a file path (a credential's, say) may hide in: the word, an `--option=value`'s value, a `NAME=value`'s
 * value (not for a network program's own fields: there it is text), a `name@file` / `name=<file`
 * field of a network program.
 */
export function fileCandidates(word: string, network: boolean, auth: boolean): string[] {
  const out = [word];
  const eq = word.indexOf('=');
  if (eq > 0 && (word.startsWith('-') || !network || auth)) out.push(word.slice(eq + 1));
  if (network) {
    const at = word.indexOf('@');
    if (at > 0 && word[at - 1] !== '=') out.push(word.slice(at + 1));
    const lt = word.indexOf('=<');
    if (lt > 0) out.push(word.slice(lt + 2));
  }
  return out;
}

/** The operand indexes of argv (words not starting with `-`), from `from` on. */
function operands(argv: readonly string[], from: number): number[] {
  const out: number[] = [];
  for (let i = from; i < argv.length; i++) if (!(argv[i] as string).startsWith('-')) out.push(i);
  return out;
}

/** The value index of option `names` (`--file f`, `--file=f`, `-f f`). */
function optionValues(argv: readonly string[], names: readonly string[]): number[] {
  const out: number[] = [];
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i] as string;
    if (names.includes(w)) out.push(i + 1);
    else if (names.some((n) => n.startsWith('--') && w.startsWith(`${n}=`))) out.push(i);
  }
  return out.filter((i) => i < argv.length);
}

/** Local operands before the last remote one (`cp a b s3://x/`: a and b are sent). */
function beforeRemote(argv: readonly string[], ops: number[], remote: RegExp): number[] {
  let last = -1;
  for (const i of ops) if (remote.test(argv[i] as string)) last = i;
  return last < 0 ? [] : ops.filter((i) => i < last && !remote.test(argv[i] as string));
}

/** The programs {@link cloudUpload} knows. */
export const CLOUD_CLIS: ReadonlySet<string> = new Set(['aws', 's3cmd', 'gsutil', 'gcloud', 'rclone', 'gh', 'az']);
const CLOUD_COPY = new Set(['cp', 'mv', 'sync', 'rsync', 'put']);
const RCLONE_COPY = new Set(['copy', 'copyto', 'move', 'moveto', 'sync']);

/**
 * A cloud CLI uploading local files — `aws s3 cp|mv|sync f s3://…`, `aws s3api put-object --body f`,
 * `gsutil cp f gs://…`, `gcloud storage cp f gs://…`, `s3cmd put f s3://…`, `rclone copy f remote:…`,
 * `gh gist create f`, `gh release upload tag f`, `gh issue|pr create --body-file f`,
 * `az storage blob upload --file f`: how it is named and the argv indexes of the words that may
 * be the files it sends (an option's value among them is harmless: only files are looked up); or null.
 */
export function cloudUpload(seg: SimpleCommand): { label: string; files: number[] } | null {
  const a = seg.argv;
  const p = seg.program;
  const ops = operands(a, 1);
  const word = (k: number): string => a[ops[k] ?? -1] ?? '';
  if (p === 'aws' || p === 's3cmd') {
    const at = ops.findIndex((i) => a[i] === 's3' || a[i] === 's3api' || CLOUD_COPY.has(a[i] as string));
    if (at < 0) return null;
    if (word(at) === 's3api')
      return word(at + 1) === 'put-object'
        ? { label: 'aws s3api put-object', files: optionValues(a, ['--body']) }
        : null;
    const op = p === 'aws' ? word(at + 1) : word(at);
    if (!CLOUD_COPY.has(op)) return null;
    return { label: `${p === 'aws' ? 'aws s3' : p} ${op}`, files: beforeRemote(a, ops, /^s3:\/\//) };
  }
  if (p === 'gsutil' || p === 'gcloud') {
    const at = ops.findIndex((i) => CLOUD_COPY.has(a[i] as string));
    if (at < 0 || (p === 'gcloud' && word(at - 1) !== 'storage')) return null;
    return { label: `${p === 'gcloud' ? 'gcloud storage' : p} ${word(at)}`, files: beforeRemote(a, ops, /^gs:\/\//) };
  }
  if (p === 'rclone' && RCLONE_COPY.has(word(0)))
    return { label: `rclone ${word(0)}`, files: beforeRemote(a, ops.slice(1), /^[A-Za-z0-9_.-]+:/) };
  if (p === 'gh') {
    if (word(0) === 'gist' && word(1) === 'create') return { label: 'gh gist create', files: ops.slice(2) };
    if (word(0) === 'release' && word(1) === 'upload') return { label: 'gh release upload', files: ops.slice(3) };
    if ((word(0) === 'issue' || word(0) === 'pr') && word(1) === 'create')
      return { label: `gh ${word(0)} create`, files: optionValues(a, ['--body-file', '-F']) };
    return null;
  }
  if (p === 'az' && word(0) === 'storage' && word(2)?.startsWith('upload'))
    return { label: `az storage ${word(1)} ${word(2)}`, files: optionValues(a, ['--file', '-f', '--source', '-s']) };
  return null;
}

/** A header that carries a credential for the server (`Authorization: Bearer …`, `Private-Token: …`, `X-Api-Key: …`). */
const AUTH_HEADER = /^\s*(?:proxy-)?authorization\s*:|^\s*[\w-]*(?:token|api-?key|auth|secret|password)[\w-]*\s*:/i;
/** Options whose value is a user and password or a bearer token. */
const AUTH_VALUE = /^--(?:user|proxy-user|oauth2-bearer|password|http-password|proxy-password|auth|auth-token)$/;
const HEADER_OPTION = /^--header$/;

/**
 * Whether argv[k] of a network command only authenticates it to the server: a credential header
 * (`-H "Authorization: Bearer $T"`, `--header=Private-Token:…`, httpie `Authorization:…`), a
 * user and password or token option (`-u me:$T`, `--oauth2-bearer $T`, `--password=$T`, `-a`).
 */
export function authenticationValue(seg: SimpleCommand, k: number): boolean {
  const w = seg.argv[k] as string;
  const prev = seg.argv[k - 1] ?? '';
  const p = seg.program;
  if (AUTH_HEADER.test(w) && (prev === '-H' || HEADER_OPTION.test(prev) || /^(?:http|https|httpie|xh|xhs)$/.test(p)))
    return true;
  const eq = w.indexOf('=');
  if (eq > 0 && /^--header$/.test(w.slice(0, eq))) return AUTH_HEADER.test(w.slice(eq + 1));
  if (w.startsWith('-H') && w.length > 2 && !w.startsWith('--')) return AUTH_HEADER.test(w.slice(2));
  if (eq > 0 && AUTH_VALUE.test(w.slice(0, eq))) return true;
  if (AUTH_VALUE.test(prev)) return true;
  return (prev === '-u' || prev === '-U' || prev === '-a') && p !== 'ssh' && p !== 'scp';
}
