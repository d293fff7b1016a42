// Which words of a network command name a file it sends: the word itself, an option's value, a
// `name@file` / `name=<file` field; and which name a file it only authenticates with (`ssh -i key`,
// `curl --cert c`), which is read but not sent.

import type { SimpleCommand } from './command-model.js';

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
