// Archive extraction judged by the directory it writes into: `tar -xf x.tar` (also `x`, `--extract`,
// `--get`; gtar, bsdtar), `unzip x.zip`, `cpio -i` (and `cpio -p DIR`), `7z x` / `7z e`, `pax -r`.
// An archive may hold `.bashrc` or `.ssh/authorized_keys`: extracting it into a home directory (or
// /etc, ~/.ssh…) writes them. The directory is the one named (`-C DIR`, `--directory=DIR`, `-d DIR`,
// `-D DIR`, `-oDIR`), else the one the command runs in (cwd-paths.ts: the starting directory
// followed through `cd`s), so `cd ~ && tar -xf x.tar` is judged as `tar -C ~ -xf x.tar` is.

import type { SimpleCommand } from '../command-model.js';
import type { Directories } from '../knowledge/places/cwd-paths.js';
import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { tarDirectoryOptions } from '../options/directory-options.js';
import { type Flag, sensitiveDirectory } from './escalation.js';

/** Programs {@link extractionRule} looks at. */
export const EXTRACTORS: ReadonlySet<string> = new Set([
  'tar',
  'gtar',
  'bsdtar',
  'unzip',
  'cpio',
  '7z',
  '7za',
  '7zr',
  'pax',
]);

/** Where an extraction writes: the directories named, or (none named) the one it runs in. */
interface Extraction {
  named: string[];
  /** members keep their absolute names (`tar -P`): they may land anywhere */
  anywhere?: true;
}

function quote(s: string): string {
  return `'${s.length > 80 ? `${s.slice(0, 77)}…` : s}'`;
}

function tar(argv: readonly string[]): Extraction | null {
  const first = argv[1] ?? '';
  const extract =
    (!first.startsWith('--') && /^-?[a-zA-Z]*x/.test(first)) ||
    argv.some((a, i) => i > 0 && /^-[a-zA-Z]*x|^--extract$|^--get$/.test(a));
  if (!extract) return null;
  const x: Extraction = { named: tarDirectoryOptions(argv).map((o) => o.dir) };
  // -P / --absolute-names: a member named /etc/… or /root/.bashrc is written there
  const clustered = first.startsWith('--') ? '' : first.replace(/^-/, '');
  if (
    /P/.test(clustered) ||
    argv.some(
      (a, i) =>
        i > 0 &&
        (/^-[a-zA-Z]*P[a-zA-Z]*$/.test(a) ||
          /^--abs(?:o(?:l(?:u(?:t(?:e(?:-(?:n(?:a(?:m(?:e(?:s)?)?)?)?)?)?)?)?)?)?)?$/.test(a)),
    )
  )
    x.anywhere = true;
  return x;
}

function unzip(argv: readonly string[]): Extraction | null {
  const named: string[] = [];
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i] as string;
    if (!a.startsWith('-') || a === '-' || a.startsWith('--')) continue;
    // -l -t -v -z -p -Z list, test, show or print to stdout: nothing is written
    if (/^-[a-zA-Z]*[ltvzpZ]/.test(a) && !/^-[a-zA-Z]*d/.test(a)) return null;
    const d = a.indexOf('d');
    if (d < 0) continue;
    if (d + 1 < a.length) named.push(a.slice(d + 1));
    else if (i + 1 < argv.length) named.push(argv[++i] as string);
  }
  return { named };
}

function cpio(argv: readonly string[]): Extraction | null {
  let mode: 'i' | 'p' | null = null;
  const named: string[] = [];
  const operands: string[] = [];
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--extract' || a === '--pass-through') mode = a === '--extract' ? 'i' : 'p';
    else if (a.startsWith('--directory=')) named.push(a.slice(12));
    else if (a === '--directory' || a === '-D') {
      if (i + 1 < argv.length) named.push(argv[++i] as string);
    } else if (/^-[a-zA-Z]+$/.test(a)) {
      if (/^-[a-zA-Z]*i/.test(a)) mode = 'i';
      else if (/^-[a-zA-Z]*p/.test(a)) mode = 'p';
      if (/D$/.test(a) && i + 1 < argv.length) named.push(argv[++i] as string);
    } else if (!a.startsWith('-')) operands.push(a);
  }
  if (mode === null) return null;
  // pass-through copies into its directory operand
  if (mode === 'p') return { named: [...named, ...operands.slice(0, 1)] };
  return { named };
}

function sevenZip(argv: readonly string[]): Extraction | null {
  if (argv[1] !== 'x' && argv[1] !== 'e') return null;
  return { named: argv.filter((a, i) => i > 1 && a.startsWith('-o') && a.length > 2).map((a) => a.slice(2)) };
}

function pax(argv: readonly string[]): Extraction | null {
  const modes = argv.filter((a, i) => i > 0 && /^-[a-zA-Z]+$/.test(a)).join('');
  // -r alone extracts here; -rw copies into its last operand (a path word the writers judge)
  return modes.includes('r') && !modes.includes('w') ? { named: [] } : null;
}

function extraction(seg: SimpleCommand): Extraction | null {
  switch (seg.program) {
    case 'tar':
    case 'gtar':
    case 'bsdtar':
      return tar(seg.argv);
    case 'unzip':
      return unzip(seg.argv);
    case 'cpio':
      return cpio(seg.argv);
    case '7z':
    case '7za':
    case '7zr':
      return sevenZip(seg.argv);
    case 'pax':
      return pax(seg.argv);
    default:
      return null;
  }
}

/** Dangerous: an extraction into a sensitive directory (named, or `dirs`: where the segment runs). */
export function extractionRule(
  seg: SimpleCommand,
  label: string,
  dirs: Directories,
  flag: Flag,
  homes: KnownHomes,
): void {
  if (!EXTRACTORS.has(seg.program) || seg.wrapper) return;
  const x = extraction(seg);
  if (x === null) return;
  const p = seg.program;
  if (x.anywhere === true)
    flag(`${label}: ${p} extracts members by their absolute names: they may be written anywhere`);
  for (const d of x.named) {
    const sens = sensitiveDirectory(d, homes);
    if (sens !== null) flag(`${label}: ${p} extracts into ${quote(d)} (${sens})`);
  }
  if (x.named.length > 0) return;
  for (const d of dirs.list) {
    const sens = d === '' ? null : sensitiveDirectory(d, homes);
    if (sens !== null) {
      flag(`${label}: ${p} extracts into the directory it runs in, ${quote(d)} (${sens})`);
      return;
    }
  }
}
