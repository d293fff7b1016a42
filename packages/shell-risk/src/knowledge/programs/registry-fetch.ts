// Which network needs the package-registry proxy of the workspace-write sandbox covers (config
// `sandbox.network.allow`, docs/policy.md "Package registries through a filtering proxy"): a
// package manager installing what the project's lock file or manifest already names (`npm ci`,
// `pip install -r requirements.txt`, `cargo fetch`…), or a build that fetches the dependencies it
// lacks (`cargo build`). Everything else that needs the network stays held: a named package added
// (`npm install foo`: the agent chooses what runs, typosquats included), an install from a URL, a
// path outside the project, another index or registry host, `git fetch/push`, curl, docker — and
// Go's fetches (`go mod download`, `go build` with a cold cache): Go's module mirror fetches a
// module it has not seen from any origin host, so it is not one of the registries
// (sandbox-proxy-allow.ts). Lexical and pure, deny by default: an option not known to be
// harmless, a word known only at run time or an environment change that could redirect the
// manager disqualifies the segment. The proxy enforces the hosts whatever the lock file says.

import type { CommandModel, SimpleCommand } from '../../command-model.js';
import { networkNeed } from './network-need.js';

/** Subcommands that install or check what the lock file or manifest names (no package-name operand allowed). */
const FROM_LOCK: Readonly<Record<string, ReadonlySet<string>>> = {
  npm: new Set([
    'ci',
    'clean-install',
    'install-clean',
    'install',
    'i',
    'in',
    'ins',
    'inst',
    'insta',
    'instal',
    'isnt',
    'isntal',
    'isntall',
    'install-test',
    'it',
    'install-ci-test',
    'cit',
    'outdated',
    'audit',
    'dedupe',
    'ddp',
  ]),
  pnpm: new Set(['install', 'i', 'fetch', 'outdated', 'audit', 'dedupe']),
  yarn: new Set(['install', 'outdated', 'audit']),
  bun: new Set(['install', 'i', 'outdated']),
  uv: new Set(['sync', 'lock']),
  poetry: new Set(['install', 'lock']),
  pipenv: new Set(['install', 'sync']),
  cargo: new Set(['fetch', 'generate-lockfile']),
  bundle: new Set(['install', 'outdated']),
  bundler: new Set(['install', 'outdated']),
  dotnet: new Set(['restore']),
};

/**
 * Builds and checks that fetch the dependencies the manifest names when they are missing: they
 * need no network when the cache is warm, so they are no network need of their own, but with the
 * proxy on they get it (a cold `cargo build` in the sandbox would fail otherwise).
 */
const FETCHING_BUILDS: Readonly<Record<string, ReadonlySet<string>>> = {
  cargo: new Set(['build', 'b', 'check', 'c', 'test', 't', 'run', 'r', 'clippy', 'doc', 'bench', 'tree', 'metadata']),
};

/**
 * Options that point a manager at another registry, index, source, configuration, prefix or
 * cache (names without their leading dashes): never through the proxy unseen, whatever their value.
 */
const REDIRECTING = new Set([
  'registry',
  'index-url',
  'i',
  'extra-index-url',
  'f',
  'find-links',
  'trusted-host',
  'index',
  'default-index',
  'source',
  's',
  'proxy',
  'https-proxy',
  'userconfig',
  'globalconfig',
  'config',
  'config-file',
  'c',
  'prefix',
  'global',
  'g',
  'location',
  'target',
  't',
  'root',
  'user',
  'src',
  'cache',
  'cache-dir',
  'store-dir',
  'global-dir',
  'virtual-store-dir',
  'modules-folder',
  'cwd',
  'C',
  'dir',
  'directory',
  'manifest-path',
  'path',
  'gemfile',
  'git',
  'github',
  'branch',
  'tag',
  'rev',
  'registry-url',
  'allow-insecure-host',
  'no-verify-hashes',
  'insecure',
  'packages',
  'project',
  'p',
  'w',
  'workspace',
  'filter',
  'F',
  'x',
  'Z',
]);

/** Environment names a command may set for a manager it runs through the proxy (everything else disqualifies). */
const SAFE_ENV: ReadonlySet<string> = new Set(['CI', 'NODE_ENV', 'FORCE_COLOR', 'NO_COLOR', 'RUST_BACKTRACE']);

/** Programs that change the environment of what follows them. */
const ENV_CHANGERS: ReadonlySet<string> = new Set(['export', 'declare', 'typeset', 'set', 'unset', 'source', '.']);

/** True when every option word of `words` is harmless: no redirecting name, no value that is a URL or a path off the project. */
function harmlessOptions(words: readonly string[]): boolean {
  for (const w of words) {
    // what follows `--` goes to the program the manager runs (`cargo run -- --help`)
    if (w === '--') break;
    if (!w.startsWith('-')) continue;
    if (w === '-') return false;
    const body = w.replace(/^--?/, '');
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const value = eq < 0 ? '' : body.slice(eq + 1);
    if (REDIRECTING.has(name)) return false;
    // single-dash bundles (`-gq`) may hide a redirecting letter
    if (!w.startsWith('--') && name.length > 1 && [...name].some((ch) => REDIRECTING.has(ch))) return false;
    if (/[:/\\~$`]/.test(value) || value.startsWith('.')) return false;
  }
  return true;
}

/** A local path operand inside the project (`.`, `./pkg`, `pkg/sub`): no URL, no absolute path, no `..`, no home. */
function projectPath(w: string): boolean {
  if (w === '' || w.startsWith('/') || w.startsWith('~') || w.startsWith('-')) return false;
  if (/^[a-z][a-z0-9+.-]*:/i.test(w) || w.includes('@') || w.includes('$') || w.includes('`')) return false;
  return !w.split('/').includes('..');
}

/** `pip install -r requirements.txt`, `pip install -e .`, `pip install .` (words after `install`). */
function pipFromManifest(words: readonly string[]): boolean {
  let sources = 0;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '-r' || w === '--requirement' || w === '-c' || w === '--constraint' || w === '-e' || w === '--editable') {
      const v = words[++i];
      if (v === undefined || !projectPath(v)) return false;
      if (w !== '-c' && w !== '--constraint') sources++;
      continue;
    }
    if (/^(?:--requirement|--constraint|--editable)=/.test(w)) {
      if (!projectPath(w.slice(w.indexOf('=') + 1))) return false;
      if (!w.startsWith('--constraint')) sources++;
      continue;
    }
    if (w.startsWith('-')) {
      if (!harmlessOptions([w])) return false;
      continue;
    }
    // a bare operand must be a directory of the project (`.`, `./pkg`): a name would add a package
    if (!(w === '.' || w.startsWith('./')) || !projectPath(w)) return false;
    sources++;
  }
  return sources > 0;
}

/** The words after the program that are no option, up to `--`. */
function positional(words: readonly string[]): string[] {
  const end = words.indexOf('--');
  return (end < 0 ? words : words.slice(0, end)).filter((w) => !w.startsWith('-'));
}

/**
 * True when `seg` fetches only what the project's lock file or manifest names, from the package
 * registries (see the file's comment): its subcommand is one of {@link FROM_LOCK} with no operand
 * but options known to be harmless, `pip install -r/-e/.`, `uv pip install|sync -r`, `yarn` alone, or a dependency-fetching build ({@link FETCHING_BUILDS}).
 */
export function fetchesFromManifest(seg: SimpleCommand): boolean {
  if (seg.wrapper || seg.unknown_program || seg.local_binary || seg.unknown_tail || seg.dynamic.length > 0)
    return false;
  if (seg.assignments.some((a) => a.dynamic || !SAFE_ENV.has(a.name))) return false;
  const p = seg.program;
  const words = seg.argv.slice(1);
  if ((p === 'python' || p === 'python3') && words[0] === '-m' && /^pip3?$/.test(words[1] ?? ''))
    return words[2] === 'install' && pipFromManifest(words.slice(3));
  if (p === 'pip' || p === 'pip3') return words[0] === 'install' && pipFromManifest(words.slice(1));
  if (p === 'uv' && words[0] === 'pip')
    return (words[1] === 'install' || words[1] === 'sync') && pipFromManifest(words.slice(2));
  const pos = positional(words);
  if (!harmlessOptions(words)) return false;
  // an install takes no arguments for another program: `--` there is a trick
  const plain = !words.includes('--');
  if (p === 'yarn' && pos.length === 0) return plain;
  const first = pos[0];
  if (first === undefined) return false;
  if (FROM_LOCK[p]?.has(first) === true) return plain && pos.length === 1;
  // a build names packages or targets of the project (`cargo test -p core`, `cargo run -- --help`), not new ones
  if (FETCHING_BUILDS[p]?.has(first) === true) return pos.slice(1).every((w) => !/^[a-z][a-z0-9+.-]*:/i.test(w));
  return false;
}

/** What {@link networkNeeds} finds. */
export interface NetworkNeeds {
  /** Needs the proxy does not cover: each holds the call ("needs network: npm install"). */
  held: readonly string[];
  /** Some segment fetches from the package registries through the proxy (the call gets it). */
  registries: boolean;
}

/** True when some segment sets or exports an environment name not in {@link SAFE_ENV}. */
function changesEnvironment(model: CommandModel): boolean {
  for (const seg of model.segments) {
    if (seg.assignments.some((a) => !SAFE_ENV.has(a.name))) return true;
    if (ENV_CHANGERS.has(seg.program)) return true;
    if (seg.program === 'env' && seg.argv.slice(1).some((w) => w.includes('=') || w.startsWith('-'))) return true;
  }
  return false;
}

/**
 * The network needs of a command's segments, with `registries` on (config `sandbox.network.allow`
 * set): the segments that {@link fetchesFromManifest} are covered by the proxy and no hold; a
 * command that changes the environment (where a manager could be pointed elsewhere) has none
 * covered. With `registries` off every need holds, as {@link networkNeed} says.
 */
export function networkNeeds(model: CommandModel, registries: boolean): NetworkNeeds {
  const held = new Set<string>();
  let proxied = false;
  const covered = registries && !changesEnvironment(model);
  for (const seg of model.segments) {
    const need = networkNeed(seg);
    const fetches = covered && fetchesFromManifest(seg);
    if (need !== null && !fetches) held.add(need);
    if (fetches) proxied = true;
  }
  return { held: [...held], registries: proxied && held.size === 0 };
}
