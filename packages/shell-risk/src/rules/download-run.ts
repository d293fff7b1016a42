// Download, then run: a file a fetcher writes (`curl -o f URL`, `curl -O URL/x.sh`,
// `wget URL/x.sh`, `curl URL > f`, `curl URL | tee f`) run later in the same command line by a
// shell or interpreter (`sh f`, `bash ./f`, `python3 f`, `. f`, `sh < f`) or as a program
// (`chmod +x f && ./f`): the same as `curl URL | sh`.

import { type CommandModel, pipesInto, type SimpleCommand } from '../command-model.js';
import { FETCHERS, isInterpreter, readsScriptFromStdin, SHELLS } from '../knowledge/programs/programs.js';
import { parseArgs } from '../options/options.js';

/** The basename of a URL's path ('' for none); a URL without a scheme is read as curl does (`host/path`). */
function urlFile(url: string): string {
  const m = /^(?:[a-z][a-z0-9+.-]*:\/\/)?[^/?#]+(\/[^?#]*)?/i.exec(url);
  if (m === null) return '';
  const path = m[1] ?? '';
  return path.slice(path.lastIndexOf('/') + 1);
}

/** A path as compared here: without a leading `./` and repeated slashes. */
export function scriptKey(path: string): string {
  return path.replace(/\/{2,}/g, '/').replace(/^(?:\.\/)+/, '');
}

/** `dir/file`, or `file` when there is no directory. */
function inDir(dir: string, file: string): string {
  return dir === '' ? file : `${dir.replace(/\/+$/, '')}/${file}`;
}

/**
 * The files curl or wget writes, with their options parsed by the option tables
 * (network-command-options.ts): clustered (`-sSLo f`, `-qO f`), joined (`-of`, `--output=f`),
 * abbreviated (`--out f`); the remote name (`-O`, `--remote-name-all`, wget without `-O`) of
 * every URL, in `--output-dir` / `-P`.
 */
function parsedFetchFiles(seg: SimpleCommand): string[] {
  const p = seg.program;
  const args = parseArgs(p, seg.argv);
  const urls = [...args.positionals, ...(args.options.get('url') ?? [])];
  const out: string[] = [];
  if (p === 'curl') {
    const dir = args.options.get('output-dir')?.at(-1) ?? '';
    for (const o of args.options.get('output') ?? []) out.push(o.startsWith('/') ? o : inDir(dir, o));
    if (args.options.has('remote-name') || args.options.has('remote-name-all'))
      for (const u of urls) out.push(inDir(dir, urlFile(u)));
    return out;
  }
  const dir = args.options.get('directory-prefix')?.at(-1) ?? '';
  const named = args.options.get('output-document') ?? [];
  out.push(...named);
  if (named.length === 0) for (const u of urls) out.push(inDir(dir, urlFile(u) || 'index.html'));
  return out;
}

/** The files a fetcher segment writes (its output option, the URL's name, its write redirects). */
export function fetchedFiles(seg: SimpleCommand): string[] {
  const a = seg.argv;
  const p = seg.program;
  const out: string[] = [];
  if (p === 'curl' || p === 'wget') out.push(...parsedFetchFiles(seg));
  else if (p === 'lwp-download') {
    // lwp-download URL [FILE]: the URL's name when no file is given
    const [url, file] = a.slice(1).filter((w) => !w.startsWith('-'));
    if (url !== undefined) out.push(file ?? urlFile(url));
  } else if (p === 'aria2c' || p === 'fetch') {
    let dir = '';
    let named = false;
    for (let i = 1; i < a.length; i++) {
      const w = a[i] as string;
      const next = (): string => a[++i] ?? '';
      if (w === '-o' || w === '-O' || w === '--out') {
        out.push(next());
        named = true;
      } else if (/^--out=/.test(w)) {
        out.push(w.slice(w.indexOf('=') + 1));
        named = true;
      } else if (/^-[oO]./.test(w)) {
        out.push(w.slice(2));
        named = true;
      } else if (w === '-d' || w === '--dir') dir = next();
      else if (/^--dir=/.test(w)) dir = w.slice(6);
    }
    if (!named)
      for (const u of a.slice(1).filter((w) => /^[a-z][a-z0-9+.-]*:\/\//i.test(w)))
        out.push(inDir(dir, urlFile(u) || 'index.html'));
  }
  for (const r of seg.redirects) if (r.is_write) out.push(r.target);
  return out.filter((f) => f !== '' && f !== '-' && !f.startsWith('/dev/'));
}

/** The script file a shell, interpreter or `source` runs (its first operand), or null. */
function scriptFile(seg: SimpleCommand): string | null {
  const p = seg.program;
  if (p === 'source' || p === '.') return seg.argv[1] ?? null;
  if (!SHELLS.has(p) && !isInterpreter(p)) return null;
  for (let j = 1; j < seg.argv.length; j++) {
    const w = seg.argv[j] as string;
    if (/^-[a-zA-Z]*[cemE]$/.test(w) || w === '--eval' || w === '--command') return null;
    if (w === '-o' || w === '-O' || w === '+o' || w === '+O') {
      j++;
      continue;
    }
    if (!w.startsWith('-') && !w.startsWith('+')) return w;
  }
  return null;
}

/** What segment `seg` runs of the files in `files` (as a script, its input, or a program), or null. */
export function runsFile(seg: SimpleCommand, files: ReadonlyMap<string, number>): string | null {
  if (seg.wrapper || seg.argv.length === 0) return null;
  const script = scriptFile(seg);
  if (script !== null && files.has(scriptKey(script))) return script;
  if ((SHELLS.has(seg.program) || isInterpreter(seg.program)) && script === null) {
    const input = seg.redirects.find((r) => r.op === '<' && files.has(scriptKey(r.target)));
    if (input !== undefined) return input.target;
  }
  if (seg.path.includes('/') && files.has(scriptKey(seg.path))) return seg.path;
  return null;
}

/** At most this many shells in a `>(…)` are traced to their fetcher (each walk is linear). */
const MAX_SUBSTITUTION_SHELLS = 32;

function isPrefix(prefix: readonly string[], of: readonly string[]): boolean {
  return prefix.length <= of.length && prefix.every((v, i) => of[i] === v);
}

/**
 * The fetcher whose output reaches the process substitution `>(…)` segment i runs in
 * (`curl URL > >(sh)`, `curl -o >(sh) URL`, `curl URL | tee >(sh)`), or -1: the command whose
 * words hold it (the first segment after it at its own depth), or an earlier stage of that
 * command's pipeline.
 */
function substitutionSource(segs: readonly SimpleCommand[], i: number, fetchers: readonly number[]): number {
  const via = (segs[i] as SimpleCommand).via;
  const k = via.lastIndexOf('>(…)');
  const base = via.slice(0, k);
  for (let j = i + 1; j < segs.length; j++) {
    const s = segs[j] as SimpleCommand;
    if (!isPrefix(base, s.via)) return -1;
    if (s.via.length !== base.length || s.wrapper) continue;
    if (FETCHERS.has(s.program)) return j;
    return fetchers.find((m) => m < j && pipesInto((segs[m] as SimpleCommand).pipeline, s.pipeline)) ?? -1;
  }
  return -1;
}

/** Adds a dangerous finding for each later segment that runs a file an earlier fetcher downloaded. */
export function downloadRunRules(model: CommandModel, add: (reason: string) => void): void {
  const segs = model.segments;
  const written = new Map<string, number>();
  let fetchers: number[] | null = null;
  let substitutions = MAX_SUBSTITUTION_SHELLS;
  segs.forEach((seg, i) => {
    if (substitutions > 0 && readsScriptFromStdin(seg) && seg.via.includes('>(…)')) {
      substitutions--;
      fetchers ??= segs.flatMap((s, j) => (!s.wrapper && FETCHERS.has(s.program) ? [j] : []));
      const src = fetchers.length > 0 ? substitutionSource(segs, i, fetchers) : -1;
      if (src >= 0)
        add(
          `segment ${i + 1}: ${seg.program} runs what ${(segs[src] as SimpleCommand).program} (segment ${src + 1}) downloads, through a process substitution`,
        );
    }
    if (!seg.wrapper && FETCHERS.has(seg.program)) {
      for (const f of fetchedFiles(seg)) written.set(scriptKey(f), i);
    }
    // `curl URL | tee f`: tee writes what the fetcher downloads
    if (seg.program === 'tee' && seg.pipeline !== null) {
      const src = segs.findIndex((s, j) => j < i && FETCHERS.has(s.program) && pipesInto(s.pipeline, seg.pipeline));
      if (src >= 0) for (const f of seg.argv.slice(1).filter((w) => !w.startsWith('-'))) written.set(scriptKey(f), src);
    }
    if (written.size === 0) return;
    const ran = runsFile(seg, written);
    if (ran === null) return;
    const from = written.get(scriptKey(ran)) as number;
    if (from === i) return;
    add(
      `segment ${i + 1}: ${seg.program} runs ${ran.startsWith("'") ? ran : `'${ran}'`}, which ${(segs[from] as SimpleCommand).program} (segment ${from + 1}) downloads`,
    );
  });
}
