// Download, then run: a file a fetcher writes (`curl -o f URL`, `curl -O URL/x.sh`,
// `wget URL/x.sh`, `curl URL > f`, `curl URL | tee f`) run later in the same command line by a
// shell or interpreter (`sh f`, `bash ./f`, `python3 f`, `. f`, `sh < f`) or as a program
// (`chmod +x f && ./f`): the same as `curl URL | sh`.

import { type CommandModel, pipesInto, type SimpleCommand } from './command-model.js';
import { FETCHERS, isInterpreter, SHELLS } from './programs.js';

/** The basename of a URL's path ('' for none). */
function urlFile(url: string): string {
  const m = /^[a-z][a-z0-9+.-]*:\/\/[^/]+(\/[^?#]*)?/i.exec(url);
  if (m === null) return '';
  const path = m[1] ?? '';
  return path.slice(path.lastIndexOf('/') + 1);
}

/** A path as compared here: without a leading `./` and repeated slashes. */
function key(path: string): string {
  return path.replace(/\/{2,}/g, '/').replace(/^(?:\.\/)+/, '');
}

/** The files a fetcher segment writes (its output option, the URL's name, its write redirects). */
function fetchedFiles(seg: SimpleCommand): string[] {
  const a = seg.argv;
  const p = seg.program;
  const out: string[] = [];
  const urls = a.slice(1).filter((w) => /^[a-z][a-z0-9+.-]*:\/\//i.test(w));
  let dir = '';
  let named = false;
  let remoteName = false;
  for (let i = 1; i < a.length; i++) {
    const w = a[i] as string;
    const next = (): string => a[++i] ?? '';
    if (p === 'curl') {
      if (w === '-o' || w === '--output') out.push(next());
      else if (w.startsWith('--output=')) out.push(w.slice(9));
      else if (/^-[a-zA-Z]*o./.test(w) && !w.startsWith('--')) out.push(w.slice(w.indexOf('o') + 1));
      else if (w === '--output-dir') dir = next();
      else if (/^-[a-zA-Z]*O[a-zA-Z]*$/.test(w) || w === '--remote-name' || w === '--remote-name-all')
        remoteName = true;
    } else if (p === 'wget' || p === 'aria2c' || p === 'fetch') {
      if (w === '-O' || w === '--output-document' || (p !== 'wget' && w === '-o')) {
        out.push(next());
        named = true;
      } else if (/^--output-document=/.test(w) || /^--out=/.test(w)) {
        out.push(w.slice(w.indexOf('=') + 1));
        named = true;
      } else if (/^-O./.test(w)) {
        out.push(w.slice(2));
        named = true;
      } else if (w === '-P' || w === '--directory-prefix' || w === '-d' || w === '--dir') dir = next();
      else if (/^--directory-prefix=/.test(w)) dir = w.slice(19);
    }
  }
  if (remoteName || ((p === 'wget' || p === 'aria2c' || p === 'fetch') && !named)) {
    for (const u of urls) {
      const f = urlFile(u) || 'index.html';
      out.push(dir === '' ? f : `${dir.replace(/\/+$/, '')}/${f}`);
    }
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
function runsFile(seg: SimpleCommand, files: ReadonlyMap<string, number>): string | null {
  if (seg.wrapper || seg.argv.length === 0) return null;
  const script = scriptFile(seg);
  if (script !== null && files.has(key(script))) return script;
  if ((SHELLS.has(seg.program) || isInterpreter(seg.program)) && script === null) {
    const input = seg.redirects.find((r) => r.op === '<' && files.has(key(r.target)));
    if (input !== undefined) return input.target;
  }
  if (seg.path.includes('/') && files.has(key(seg.path))) return seg.path;
  return null;
}

/** Adds a dangerous finding for each later segment that runs a file an earlier fetcher downloaded. */
export function downloadRunRules(model: CommandModel, add: (reason: string) => void): void {
  const segs = model.segments;
  const written = new Map<string, number>();
  segs.forEach((seg, i) => {
    if (!seg.wrapper && FETCHERS.has(seg.program)) {
      for (const f of fetchedFiles(seg)) written.set(key(f), i);
    }
    // `curl URL | tee f`: tee writes what the fetcher downloads
    if (seg.program === 'tee' && seg.pipeline !== null) {
      const src = segs.findIndex((s, j) => j < i && FETCHERS.has(s.program) && pipesInto(s.pipeline, seg.pipeline));
      if (src >= 0) for (const f of seg.argv.slice(1).filter((w) => !w.startsWith('-'))) written.set(key(f), src);
    }
    if (written.size === 0) return;
    const ran = runsFile(seg, written);
    if (ran === null) return;
    const from = written.get(key(ran)) as number;
    if (from === i) return;
    add(
      `segment ${i + 1}: ${seg.program} runs ${ran.startsWith("'") ? ran : `'${ran}'`}, which ${(segs[from] as SimpleCommand).program} (segment ${from + 1}) downloads`,
    );
  });
}
