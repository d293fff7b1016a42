// Options whose value is a file the program opens and reads (a list of names, patterns, a script,
// a config, a password): `file -f LIST`, `du --files0-from=LIST`, `tar -T LIST`, `grep -f PATTERNS`,
// `curl -K CONFIG`, `git commit -F MSG`, `jq --rawfile NAME FILE`… A program is read-only only
// together with its options: such a value is judged as a read of that file (classify.ts: the
// credential check a `cat` of it gets, also for programs that otherwise print no content), and
// it is a path word like any other for finger's home (forbidden.ts) and the read roots
// (read-words.ts). One table; a program not in it has its words judged as written.

import { lookup } from './option-spec.js';

/** A program's file-reading options: short letters and long names (a GNU abbreviation of 3+ letters counts). */
interface FileOptions {
  readonly short?: string;
  readonly long?: readonly string[];
  /** long options whose file is the second word after them (`jq --rawfile NAME FILE`) */
  readonly second?: readonly string[];
  /** every `-word` is one option (find primaries) */
  readonly whole?: readonly string[];
}

const GREP: FileOptions = { short: 'f', long: ['file', 'exclude-from'] };
const AWK: FileOptions = { short: 'f', long: ['file', 'include', 'load'] };
const SED: FileOptions = { short: 'f', long: ['file'] };
const FILES0: FileOptions = { long: ['files0-from'] };
const SUMS: FileOptions = { long: ['files0-from'] };

/** The table, by program name. */
const FILE_READING_OPTIONS: Readonly<Record<string, FileOptions>> = {
  file: { short: 'fm', long: ['files-from', 'magic-file'] },
  du: { short: 'X', long: ['files0-from', 'exclude-from'] },
  wc: FILES0,
  sort: { long: ['files0-from', 'random-source'] },
  shuf: { long: ['random-source'] },
  tar: { short: 'TXF', long: ['files-from', 'exclude-from', 'info-script', 'new-volume-script'] },
  bsdtar: { short: 'TX', long: ['files-from', 'exclude-from'] },
  cpio: { short: 'EF', long: ['pattern-file', 'file'] },
  xargs: { short: 'a', long: ['arg-file'] },
  grep: GREP,
  egrep: GREP,
  fgrep: GREP,
  zgrep: GREP,
  rg: { short: 'f', long: ['file', 'ignore-file'] },
  ag: { short: 'p', long: ['path-to-ignore'] },
  rsync: {
    long: [
      'files-from',
      'exclude-from',
      'include-from',
      'filter-from',
      'password-file',
      'read-batch',
      'only-write-batch',
    ],
  },
  curl: {
    short: 'KTbE',
    long: ['config', 'upload-file', 'cookie', 'cert', 'key', 'cacert', 'netrc-file', 'json', 'data', 'data-binary'],
  },
  wget: {
    short: 'i',
    long: ['input-file', 'config', 'load-cookies', 'post-file', 'body-file', 'certificate', 'private-key'],
  },
  git: { short: 'F', long: ['file', 'pathspec-from-file'] },
  sed: SED,
  gsed: SED,
  awk: AWK,
  gawk: AWK,
  mawk: AWK,
  nawk: AWK,
  jq: { short: 'f', long: ['from-file'], second: ['rawfile', 'slurpfile'] },
  yq: { long: ['from-file'] },
  diff: { short: 'X', long: ['from-file', 'to-file', 'exclude-from'] },
  comm: FILES0,
  join: FILES0,
  paste: FILES0,
  cut: FILES0,
  md5sum: SUMS,
  sha1sum: SUMS,
  sha256sum: SUMS,
  sha512sum: SUMS,
  b2sum: SUMS,
  cksum: SUMS,
  ls: { long: ['hide-from'] },
  tree: { long: ['fromfile', 'fromtabfile', 'gitfile', 'infofile'] },
  find: { whole: ['-files0-from', '-newer', '-anewer', '-cnewer', '-samefile', '-fls', '-fprint'] },
  patch: { short: 'i', long: ['input'] },
  gpg: { long: ['passphrase-file', 'options'] },
  openssl: { whole: ['-in', '-inkey', '-passin', '-config', '-kfile', '-CAfile'] },
  ssh: { short: 'iFE' },
  scp: { short: 'iF' },
  sftp: { short: 'iFb' },
  'ssh-keygen': { short: 'f' },
  make: { short: 'f', long: ['file', 'makefile'] },
  m4: { long: ['include', 'reload-state'] },
  hexdump: { short: 'f', long: ['format-file'] },
  node: { short: 'r', long: ['require', 'import', 'env-file', 'env-file-if-exists', 'experimental-loader', 'loader'] },
  bash: { long: ['rcfile', 'init-file'] },
  psql: { short: 'f', long: ['file'] },
  mysql: { long: ['defaults-file', 'defaults-extra-file'] },
  sqlite3: { long: ['init'] },
  docker: { long: ['env-file', 'file', 'password-stdin', 'config'] },
  kubectl: { short: 'f', long: ['filename', 'kubeconfig', 'from-file', 'from-env-file'] },
  npm: { long: ['userconfig', 'globalconfig'] },
  gh: { short: 'F', long: ['input', 'body-file', 'notes-file'] },
};

/**
 * The files a segment's options name for it to read, as written: `-f LIST` → the next word,
 * `-fLIST` / `--file=LIST` → the value in that word.
 */
export function fileReadingValues(program: string, argv: readonly string[]): string[] {
  const spec = lookup(FILE_READING_OPTIONS, program);
  if (spec === undefined) return [];
  const out: string[] = [];
  const short = spec.short ?? '';
  for (let i = 1; i < argv.length; i++) {
    const w = argv[i] as string;
    if (w === '--') break;
    if (spec.whole?.includes(w)) {
      if (i + 1 < argv.length) out.push(argv[i + 1] as string);
      continue;
    }
    if (w.startsWith('--')) {
      const eq = w.indexOf('=');
      const name = w.slice(2, eq < 0 ? undefined : eq);
      if (name === '') continue;
      const known = (list: readonly string[] | undefined): boolean =>
        list !== undefined && list.some((n) => n === name || (name.length >= 3 && n.startsWith(name)));
      if (known(spec.long)) {
        if (eq >= 0) out.push(w.slice(eq + 1));
        else if (i + 1 < argv.length) out.push(argv[i + 1] as string);
      } else if (known(spec.second) && i + 2 < argv.length) out.push(argv[i + 2] as string);
      continue;
    }
    if (!w.startsWith('-') || w.length < 2 || short === '') continue;
    // a cluster: the first letter that takes a file takes the rest of the word, or the next word
    for (let k = 1; k < w.length; k++) {
      if (!short.includes(w[k]!)) continue;
      const rest = w.slice(k + 1);
      if (rest !== '') out.push(rest.startsWith('=') ? rest.slice(1) : rest);
      else if (i + 1 < argv.length) out.push(argv[i + 1] as string);
      break;
    }
  }
  return out;
}
