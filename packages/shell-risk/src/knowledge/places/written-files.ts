// Which files a command writes with what it reads (besides its redirects): the destination of a
// copy (cp, mv, install, ln, rsync, dd of=), an archive (tar, zip, 7z…), tee's files, the output
// option of an encoder or compressor (`openssl … -out f`, `gpg -o f`, `sort -o f`). Lexical only:
// a path is what the command line says, relative paths stay relative.

import type { SimpleCommand } from '../../command-model.js';
import { ARCHIVERS } from '../../flow/exfiltration.js';
import { parseArgs } from '../../options/options.js';
import { isNullSink } from './paths.js';

/** A file a command writes. */
export interface WrittenFile {
  /** as written in the command (de-quoted) */
  path: string;
  /** a directory tree may be copied there: what is under it is written too */
  tree: boolean;
  /** the write replaces what the file held (a copy, `>`), rather than appending to it */
  replaces: boolean;
  /** the word may be an input as well (an archiver's operands: which one is the archive is not worked out) */
  read: boolean;
}

/** Copy commands: every operand but the last (or all, with -t DIR) is copied to the last. */
export const COPIERS: ReadonlySet<string> = new Set(['cp', 'mv', 'install', 'ln', 'rsync', 'ditto', 'gcp', 'gmv']);
/** Programs whose `-o FILE` / `--output FILE` / `-out FILE` is where what they read ends up. */
const OUTPUT_OPTION: ReadonlySet<string> = new Set([
  'openssl',
  'gpg',
  'gpg2',
  'age',
  'base64',
  'base32',
  'basenc',
  'sort',
  'zstd',
  'xz',
  'lz4',
  'brotli',
  'uuencode',
  'sops',
]);
const RECURSIVE = /^-[a-zA-Z]*[rRa]|^--(?:recursive|archive)$/;
/** Programs the {@link writtenFiles} rules cover: a cheap first test. */
export const FILE_WRITERS: ReadonlySet<string> = new Set([
  ...COPIERS,
  ...ARCHIVERS,
  ...OUTPUT_OPTION,
  'tee',
  'sponge',
  'dd',
  'xxd',
]);

function basename(p: string): string {
  const t = p.replace(/\/+$/, '');
  const k = t.lastIndexOf('/');
  return k < 0 ? t : t.slice(k + 1);
}

/** The files a segment writes from what it reads, beside its redirects (empty for most commands). */
export function writtenFiles(seg: SimpleCommand): WrittenFile[] {
  const p = seg.program;
  if (seg.wrapper || !FILE_WRITERS.has(p)) return [];
  const rest = seg.argv.slice(1);
  const operands = (): string[] => {
    const out: string[] = [];
    let options = true;
    for (const w of rest) {
      if (options && w === '--') options = false;
      else if (!options || !w.startsWith('-') || w === '-') out.push(w);
    }
    return out;
  };
  const files = (paths: string[], tree: boolean, replaces: boolean, read = false): WrittenFile[] =>
    paths.filter((x) => x !== '' && x !== '-' && !isNullSink(x)).map((path) => ({ path, tree, replaces, read }));
  if (COPIERS.has(p)) {
    const parsed = parseArgs(p, seg.argv);
    const tree = rest.some((w) => RECURSIVE.test(w));
    const target = parsed.options.get('target-directory')?.at(-1);
    const ops = parsed.positionals;
    const dest = target ?? ops.at(-1);
    if (dest === undefined || /^[^/]*:/.test(dest)) return []; // host:path is a network copy
    const sources = target === undefined ? ops.slice(0, -1) : ops;
    return files([dest, ...sources.map((s) => `${dest.replace(/\/+$/, '')}/${basename(s)}`)], tree, true);
  }
  if (ARCHIVERS.has(p)) {
    // every operand that is not read may be the archive (`tar czf out.tgz dir`, `zip -r out.zip dir`)
    const named = rest.flatMap((w) => (/^--(?:file|output)=/.test(w) ? [w.slice(w.indexOf('=') + 1)] : []));
    return [...files(operands(), false, true, true), ...files(named, false, true)];
  }
  if (p === 'tee') return files(operands(), false, !rest.some((w) => /^-[a-zA-Z]*a|^--append$/.test(w)));
  if (p === 'sponge') return files(operands(), false, !rest.includes('-a'));
  if (p === 'dd')
    return files(
      rest.filter((w) => w.startsWith('of=')).map((w) => w.slice(3)),
      false,
      true,
    );
  if (p === 'xxd') return files(operands().slice(1, 2), false, true);
  const out: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i] as string;
    if (w === '-o' || w === '-out' || w === '--output' || w === '--out' || w === '--outfile') out.push(rest[++i] ?? '');
    else if (/^--(?:output|out|outfile)=/.test(w)) out.push(w.slice(w.indexOf('=') + 1));
    else if (/^-o./.test(w) && p !== 'openssl') out.push(w.slice(2));
  }
  return files(out, false, true);
}
