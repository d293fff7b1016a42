// Remote code installed or run, judged like `curl | sh`:
// - a package manager given a URL, a git source or another index (`pip install git+https://…`,
//   `pip install https://…/x.tar.gz`, `pip install --index-url https://evil/simple x`,
//   `npm install https://…tgz`, `npm install github:…`, `go run github.com/…@latest`,
//   `cargo install --git …`, `deno run https://…`), and the one-shot runners that fetch a package
//   and run it (`npx -y PKG`, `bunx`, `uvx`, `pipx run`, `pnpm dlx`, `yarn dlx`). A plain
//   `npm install`, `pip install -r requirements.txt` or `pip install requests` (the default index)
//   is not judged here;
// - fetchers not in programs.ts's FETCHERS (`aws s3 cp s3://… -`, `gsutil cat`, `rclone cat`,
//   `gh gist view`, `gh api`, DNS TXT lookups, `wget2`, `lynx -source`, `redis-cli`, a container
//   running a fetcher, inline code using the network) piped into a shell, and consumers that run
//   their input but are not in readsScriptFromStdin (`dc`, `m4`, `make -f -`, `sqlite3`,
//   `expect`, `ed`) fed by any fetcher or decoder;
// - download, then run by another route: a downloaded package installed (`dpkg -i x.deb`), a
//   downloaded archive unpacked and a program from it run (`curl … | tar xz && ./x/install`), a
//   cloned repository's script or makefile run (`git clone URL && cd x && ./install.sh`,
//   `git clone URL /tmp/x && make -C /tmp/x`).

import { type CommandModel, pipesInto, type SimpleCommand } from '../command-model.js';
import { isStandardProgramPath } from '../knowledge/places/paths.js';
import { FETCHERS, isDecoder, isInterpreter, readsScriptFromStdin, SHELLS } from '../knowledge/programs/programs.js';
import { fetchedFiles, scriptKey } from './download-run.js';
import { EXTRACTORS } from './extraction.js';

const URL = /^(?:[a-z][a-z0-9+.-]*:\/\/|git@|git\+|github:|gitlab:|bitbucket:|gist:)/i;
/** Hosts of the default package indexes (a `--index-url` there is the default). */
const DEFAULT_INDEX =
  /^https?:\/\/(?:pypi\.org|files\.pythonhosted\.org|registry\.npmjs\.org|registry\.yarnpkg\.com)(?:[/:]|$)/i;
const PIP = /^pip[0-9.]*$/;
/** At most this many clones are remembered, and extractors and stdin consumers traced, per command line. */
const MAX_TREES = 16;
const MAX_TRACED = 64;
const NODE_PMS = new Set(['npm', 'pnpm', 'yarn', 'bun', 'cnpm']);

function quote(s: string): string {
  return `'${s.length > 60 ? `${s.slice(0, 57)}…` : s}'`;
}

/** The value of `--name=v` / `--name v` / `-x v` options among `argv`, in order. */
function optionValues(argv: readonly string[], names: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const w = argv[i] as string;
    for (const n of names) {
      if (w === n && argv[i + 1] !== undefined) out.push(argv[i + 1] as string);
      else if (n.startsWith('--') && w.startsWith(`${n}=`)) out.push(w.slice(n.length + 1));
      else if (!n.startsWith('--') && w.startsWith(n) && w.length > n.length && n.length === 2) out.push(w.slice(2));
    }
  }
  return out;
}

/** The words after the first positional equal to one of `subs` (the subcommand), or null. */
function afterSub(argv: readonly string[], subs: readonly string[], from = 1): string[] | null {
  for (let i = from; i < argv.length; i++) {
    const w = argv[i] as string;
    if (subs.includes(w)) return argv.slice(i + 1);
    if (!w.startsWith('-')) return null;
  }
  return null;
}

/** A pip install from a URL, a VCS source or another index. */
/** A Python package spec that is not a name on the default index: a URL, git, a local archive. */
const PY_REMOTE = /^(?:git\+|https?:\/\/|git@|[\w.-]+\s*@\s*(?:git\+|https?:))/i;

function pipRemote(rest: readonly string[]): string | null {
  for (const v of optionValues(rest, ['--index-url', '-i', '--extra-index-url', '--find-links', '-f']))
    if (/^https?:\/\//i.test(v) && !DEFAULT_INDEX.test(v)) return v;
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i] as string;
    if (
      /^-(?:r|c|e|i|f)$|^--(?:requirement|constraint|editable|index-url|extra-index-url|find-links|target|prefix|root)$/.test(
        w,
      )
    ) {
      i++;
      continue;
    }
    if (URL.test(w) || /^\S+\s*@\s*(?:https?|git\+)/.test(w)) return w;
  }
  return null;
}

/** An npm-style install from a URL, git or a GitHub `user/repo` shorthand, or with another registry. */
function nodeRemote(rest: readonly string[]): string | null {
  for (const v of optionValues(rest, ['--registry'])) if (/^https?:\/\//i.test(v) && !DEFAULT_INDEX.test(v)) return v;
  for (const w of rest) {
    if (w.startsWith('-')) continue;
    if (URL.test(w) || /^[\w.-]+\/[\w.-]+(?:#\S*)?$/.test(w)) return w;
  }
  return null;
}

/** Why a segment installs or runs remote code, or null. */
function remoteCode(seg: SimpleCommand): string | null {
  const p = seg.program;
  const a = seg.argv;
  if (PIP.test(p) || ((p === 'uv' || p === 'pipx') && a[1] === 'pip')) {
    const rest = afterSub(a, ['install', 'download', 'wheel'], p === 'uv' ? 2 : 1);
    const r = rest === null ? null : pipRemote(rest);
    return r === null ? null : `${p} installs from ${quote(r)}`;
  }
  if (isInterpreter(p) && p.startsWith('py')) {
    const m = a.findIndex((w) => w === '-m');
    if (m > 0 && a[m + 1] === 'pip') {
      const rest = afterSub(a, ['install', 'download'], m + 2);
      const r = rest === null ? null : pipRemote(rest);
      return r === null ? null : `${p} -m pip installs from ${quote(r)}`;
    }
    return null;
  }
  if (NODE_PMS.has(p)) {
    const rest = afterSub(a, ['install', 'i', 'add', 'isntall', 'in', 'ins', 'inst', 'insta', 'instal']);
    if (rest !== null) {
      const r = nodeRemote(rest);
      if (r !== null) return `${p} installs from ${quote(r)}`;
    }
    if (afterSub(a, ['dlx']) !== null) return `${p} dlx fetches a package and runs it`;
    const ex = afterSub(a, ['exec', 'x']);
    if (ex !== null && ex.some((w) => w === '-y' || w === '--yes'))
      return `${p} exec --yes fetches a package and runs it`;
    return null;
  }
  if (p === 'npx') {
    if (a.some((w) => w === '-y' || w === '--yes')) return 'npx -y fetches a package and runs it';
    const r = nodeRemote(
      a
        .slice(1)
        .filter((w) => !w.startsWith('-'))
        .slice(0, 1),
    );
    return r === null ? null : `npx runs ${quote(r)}`;
  }
  // like npx without -y: a package from the default index may be the project's own tool (CONFIRM);
  // one from a URL, git or another index is code from anywhere
  if (p === 'bunx' || p === 'pnpx') {
    const r = nodeRemote(a.slice(1));
    return r === null ? null : `${p} runs ${quote(r)}`;
  }
  const pyRun =
    p === 'uvx'
      ? a.slice(1)
      : p === 'pipx'
        ? afterSub(a, ['run'])
        : p === 'uv' && a[1] === 'tool' && a[2] === 'run'
          ? a.slice(3)
          : null;
  if (pyRun !== null) {
    const r = pipRemote(pyRun) ?? optionValues(pyRun, ['--from', '--spec', '--with']).find((v) => PY_REMOTE.test(v));
    return r === null || r === undefined ? null : `${p} runs ${quote(r)}`;
  }
  if (p === 'go') {
    const rest = afterSub(a, ['run']);
    const pkg = rest?.find((w) => !w.startsWith('-'));
    if (pkg !== undefined && (/@/.test(pkg) || /^[a-z0-9-]+(?:\.[a-z0-9-]+)+\//i.test(pkg)))
      return `go run builds and runs the remote package ${quote(pkg)}`;
    return null;
  }
  if (p === 'cargo') {
    const rest = afterSub(a, ['install']);
    const git = rest === null ? [] : optionValues(rest, ['--git', '--index', '--registry']);
    return git.length > 0 ? `cargo install builds ${quote(git[0] as string)}` : null;
  }
  if (p === 'deno' || p === 'bun') {
    const rest = afterSub(a, ['run', 'x', 'install', 'i']) ?? (p === 'deno' ? null : a.slice(1));
    const url = rest?.find((w) => /^https?:\/\//i.test(w) || /^(?:npm|jsr):/.test(w));
    return url === undefined ? null : `${p} runs ${quote(url)}`;
  }
  if (p === 'gem' || p === 'cpanm') {
    const rest = afterSub(a, ['install']) ?? (p === 'cpanm' ? a.slice(1) : null);
    const r =
      rest === null ? undefined : [...optionValues(rest, ['--source', '--mirror']), ...rest].find((w) => URL.test(w));
    return r === undefined ? null : `${p} installs from ${quote(r)}`;
  }
  return null;
}

/** A segment that prints data fetched from elsewhere (not in FETCHERS), or null. */
function remoteSource(seg: SimpleCommand): string | null {
  const p = seg.program;
  const a = seg.argv;
  if (FETCHERS.has(p)) return p;
  if (p === 'aws' && a.includes('s3') && a.includes('cp') && a.includes('-')) return 'aws s3 cp … -';
  if (p === 'gsutil' && a.includes('cat')) return 'gsutil cat';
  if (p === 'gcloud' && a.includes('storage') && a.includes('cat')) return 'gcloud storage cat';
  if (p === 'rclone' && a.includes('cat')) return 'rclone cat';
  if (p === 'az' && a.includes('download')) return 'az … download';
  if (p === 'gh' && (a[1] === 'api' || (a[1] === 'gist' && a[2] === 'view') || a[1] === 'release' || a[1] === 'run'))
    return `gh ${a[1]}`;
  if (p === 'glab' && a[1] === 'api') return 'glab api';
  if (['dig', 'nslookup', 'host', 'drill', 'kdig', 'delv', 'resolvectl'].includes(p)) return p;
  if (
    [
      'wget2',
      'lynx',
      'links',
      'elinks',
      'w3m',
      'curlie',
      'httpx',
      'ftp',
      'tftp',
      'smbclient',
      'redis-cli',
      'memcached-tool',
    ].includes(p)
  )
    return p;
  if (
    (p === 'docker' || p === 'podman' || p === 'kubectl' || p === 'nerdctl') &&
    a.some((w, k) => k > 1 && FETCHERS.has(w))
  )
    return `${p} (running a fetcher)`;
  if (
    isInterpreter(p) &&
    a.some((w) =>
      /\b(?:urlopen|requests\.get|fetch\(|https?\.get|Net::HTTP|LWP|file_get_contents\(\s*['"]https?:|URI\.open)/.test(
        w,
      ),
    )
  )
    return `${p} (with network code)`;
  return null;
}

/** Consumers not in readsScriptFromStdin that run what they read. */
function runsInput(seg: SimpleCommand): boolean {
  if (seg.wrapper || seg.unknown_program) return false;
  const p = seg.program;
  const ops = seg.argv.slice(1).filter((w) => !w.startsWith('-') || w === '-');
  switch (p) {
    case 'dc':
    case 'm4':
    case 'ed':
    case 'red':
    case 'sqlite3':
      return !seg.argv.slice(1).some((w) => w === '-e' || w === '--expression' || w === '-f' || w === '--file');
    case 'expect':
      return ops.length === 0 || ops[0] === '-';
    case 'make':
    case 'gmake': {
      const f = seg.argv.findIndex((w) => w === '-f' || w === '--file' || w === '--makefile');
      const v =
        f < 0
          ? seg.argv.find((w) => /^-f.|^--(?:file|makefile)=/.test(w))?.replace(/^-f|^--\w+=/, '')
          : seg.argv[f + 1];
      return v === '-' || v === '/dev/stdin';
    }
    default:
      return false;
  }
}

const INSTALLERS: Readonly<Record<string, RegExp>> = {
  dpkg: /^(?:-i|--install|-[a-zA-Z]*i)$/,
  apt: /^(?:install|reinstall)$/,
  'apt-get': /^(?:install|reinstall)$/,
  rpm: /^(?:-[a-zA-Z]*[iUF][a-zA-Z]*|--install|--upgrade|--freshen)$/,
  dnf: /^(?:install|localinstall|reinstall)$/,
  yum: /^(?:install|localinstall|reinstall)$/,
  zypper: /^(?:install|in)$/,
  pacman: /^-[a-zA-Z]*U/,
  snap: /^install$/,
  flatpak: /^install$/,
  installer: /^-pkg$/,
  gem: /^install$/,
  pip: /^install$/,
  pip3: /^install$/,
  npm: /^(?:install|i)$/,
  apk: /^add$/,
};

/** The basename of a URL's path, less a `.git` ending. */
function cloneDir(url: string): string {
  const m = /([^/:]+?)(?:\.git)?\/*$/.exec(url);
  return m === null ? '' : (m[1] as string);
}

/** Whether `path` is `dir` or under it. */
function under(path: string, dir: string): boolean {
  const p = scriptKey(path);
  const d = scriptKey(dir).replace(/\/+$/, '');
  return d !== '' && (p === d || p.startsWith(`${d}/`));
}

/** The file a shell, interpreter or `source` runs (its first operand), or null. */
function scriptOperand(seg: SimpleCommand): string | null {
  const p = seg.program;
  if (!SHELLS.has(p) && !isInterpreter(p) && p !== 'source' && p !== '.') return null;
  for (let j = 1; j < seg.argv.length; j++) {
    const w = seg.argv[j] as string;
    if (/^-[a-zA-Z]*[cemE]$/.test(w)) return null;
    if (!w.startsWith('-')) return w;
  }
  return null;
}

/** Directories a segment's `make` / `cd` / program path enters (`make -C d`, `-Cd`, `--directory=d`). */
function makeDir(seg: SimpleCommand): string | null {
  const a = seg.argv;
  for (let i = 1; i < a.length; i++) {
    const w = a[i] as string;
    if ((w === '-C' || w === '--directory') && a[i + 1] !== undefined) return a[i + 1] as string;
    if (/^-C./.test(w)) return w.slice(2);
    if (w.startsWith('--directory=')) return w.slice(12);
  }
  return null;
}

/** Download (or clone), then run by another route: install a fetched package, run a program from a fetched archive or clone. */
function downloadThenRun(segs: readonly SimpleCommand[], add: (reason: string) => void): void {
  const fetched = new Map<string, number>();
  /** directories holding fetched code (a clone, an archive unpacked): dir → segment */
  const trees = new Map<string, number>();
  /** a tree entered with cd: relative programs and a bare `make` run from it */
  let inside: number | null = null;
  let extractedHere: number | null = null;
  /** extractors traced to a fetcher (each trace is a linear walk) */
  let extractions = MAX_TRACED;
  segs.forEach((seg, i) => {
    if (seg.wrapper || seg.argv.length === 0) return;
    const p = seg.program;
    const label = `segment ${i + 1}`;
    // install a downloaded package
    const inst = INSTALLERS[p];
    if (inst !== undefined && fetched.size > 0 && seg.argv.slice(1).some((w) => inst.test(w))) {
      const f = seg.argv.slice(1).find((w) => fetched.has(scriptKey(w)));
      if (f !== undefined)
        add(
          `${label}: ${p} installs ${quote(f)}, which ${(segs[fetched.get(scriptKey(f)) as number] as SimpleCommand).program} (segment ${(fetched.get(scriptKey(f)) as number) + 1}) downloads`,
        );
    }
    // run from a fetched tree
    if (trees.size > 0 || inside !== null || extractedHere !== null) {
      const from = (path: string): number | null => {
        for (const [d, k] of trees) if (under(path, d)) return k;
        if (!path.startsWith('/') && path.includes('/') && (inside ?? extractedHere) !== null)
          return inside ?? extractedHere;
        return null;
      };
      let src: number | null = null;
      let what = '';
      if (seg.path.includes('/') && !isStandardProgramPath(seg.path)) {
        src = from(seg.path);
        what = seg.path;
      }
      const script = scriptOperand(seg);
      if (src === null && script !== null) {
        src = from(script) ?? (!script.startsWith('/') && inside !== null ? inside : null);
        what = script;
      }
      if (src === null && (p === 'make' || p === 'gmake' || p === 'cmake' || p === 'meson' || p === 'ninja')) {
        const d = makeDir(seg);
        src = d !== null ? from(d) : inside;
        what = d ?? '.';
      }
      if (src !== null && src !== i)
        add(
          `${label}: ${p} runs ${quote(what)} from what ${(segs[src] as SimpleCommand).program} (segment ${src + 1}) fetches`,
        );
    }
    if (p === 'cd' || p === 'pushd') {
      const d = seg.argv.slice(1).find((w) => !w.startsWith('-'));
      inside = d === undefined ? null : ([...trees].find(([t]) => under(d, t) || under(t, d))?.[1] ?? null);
    }
    if (FETCHERS.has(p)) for (const f of fetchedFiles(seg)) fetched.set(scriptKey(f), i);
    if (p === 'git' && seg.argv.includes('clone')) {
      const ops = seg.argv.slice(seg.argv.indexOf('clone') + 1).filter((w) => !w.startsWith('-'));
      const url = ops.find((w) => URL.test(w) || /^[\w.-]+@[\w.-]+:/.test(w));
      if (url !== undefined && trees.size < MAX_TREES) {
        const dir = ops[ops.indexOf(url) + 1] ?? cloneDir(url);
        if (dir !== '') trees.set(dir, i);
      }
    }
    if (EXTRACTORS.has(p) && extractions-- > 0) {
      const fed = segs.findIndex((s, j) => j < i && FETCHERS.has(s.program) && pipesInto(s.pipeline, seg.pipeline));
      const file = seg.argv.slice(1).find((w) => fetched.has(scriptKey(w)));
      const src = fed >= 0 ? fed : file !== undefined ? (fetched.get(scriptKey(file)) as number) : -1;
      if (src >= 0) {
        const dir = makeDirOf(seg);
        if (dir !== null) trees.set(dir, src);
        else extractedHere = src;
      }
    }
  });
}

/** An extractor's target directory (`tar -C d`, `unzip -d d`), or null for the current one. */
function makeDirOf(seg: SimpleCommand): string | null {
  const v = optionValues(seg.argv.slice(1), ['-C', '--directory', '-d']);
  return v.at(-1) ?? null;
}

/** Adds the dangerous findings of remote code installed or run, unlisted fetchers and consumers, and download-then-run routes. */
export function supplyChainRules(model: CommandModel, add: (reason: string) => void): void {
  const segs = model.segments;
  const sources: number[] = [];
  let consumers = MAX_TRACED;
  segs.forEach((seg, i) => {
    if (seg.argv.length === 0) return;
    // npx / bunx are peeled as wrappers: the runner itself fetches what it runs
    const why = remoteCode(seg);
    if (why !== null) add(`segment ${i + 1}: ${why} (remote code, like curl | sh)`);
    if (seg.wrapper) return;
    if (seg.pipeline === null) return;
    if (remoteSource(seg) !== null || isDecoder(seg)) sources.push(i);
    const extra = runsInput(seg);
    if ((!extra && !readsScriptFromStdin(seg)) || consumers-- <= 0) return;
    const src = sources.find((j) => {
      const s = segs[j] as SimpleCommand;
      // FETCHERS and decoders into a listed consumer are classify.ts's pipeline rule
      return pipesInto(s.pipeline, seg.pipeline) && (extra || !(FETCHERS.has(s.program) || isDecoder(s)));
    });
    if (src === undefined) return;
    const s = segs[src] as SimpleCommand;
    add(`segment ${i + 1}: ${seg.program} runs what ${remoteSource(s) ?? s.program} (segment ${src + 1}) fetches`);
  });
  downloadThenRun(segs, add);
}
