// Programs known to need the network (or to install outside the workspace), judged before they
// run: the workspace-write sandbox has no network, so such a command is held with that reason
// ("needs network: npm install") instead of being let through to fail. Lexical only, over the
// command model's segments; what a script does inside is not seen (the sandbox contains it).

import type { SimpleCommand } from '../../command-model.js';
import { NETWORK_PROGRAMS } from '../../flow/exfiltration.js';

/** Subcommands that fetch, install or publish, per package manager or VCS. */
const NEEDS_BY_SUBCOMMAND: Readonly<Record<string, ReadonlySet<string>>> = {
  npm: new Set([
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
    'add',
    'ci',
    'clean-install',
    'install-clean',
    'install-ci-test',
    'install-test',
    'it',
    'cit',
    'update',
    'up',
    'upgrade',
    'udpate',
    'publish',
    'unpublish',
    'deprecate',
    'dist-tag',
    'login',
    'logout',
    'adduser',
    'add-user',
    'audit',
    'outdated',
    'view',
    'v',
    'info',
    'show',
    'search',
    's',
    'se',
    'find',
    'init',
    'create',
    'owner',
    'access',
    'team',
    'token',
    'star',
    'unstar',
    'ping',
    'whoami',
    'link',
    'ln',
    'dedupe',
    'ddp',
    'doctor',
  ]),
  pnpm: new Set([
    'install',
    'i',
    'add',
    'update',
    'up',
    'upgrade',
    'publish',
    'dlx',
    'create',
    'audit',
    'outdated',
    'fetch',
    'login',
    'link',
    'import',
    'dedupe',
  ]),
  yarn: new Set([
    'install',
    'add',
    'upgrade',
    'up',
    'publish',
    'npm',
    'dlx',
    'create',
    'init',
    'audit',
    'outdated',
    'info',
    'login',
    'link',
    'import',
    'global',
    'dedupe',
  ]),
  bun: new Set(['install', 'i', 'add', 'a', 'update', 'upgrade', 'publish', 'create', 'link', 'outdated']),
  pip: new Set(['install', 'download', 'search', 'index', 'wheel']),
  pip3: new Set(['install', 'download', 'search', 'index', 'wheel']),
  pipx: new Set(['install', 'run', 'upgrade', 'upgrade-all', 'inject', 'reinstall', 'reinstall-all']),
  uv: new Set(['add', 'sync', 'lock', 'tool', 'python', 'publish', 'self']),
  uvx: new Set(['*']),
  poetry: new Set(['install', 'add', 'update', 'lock', 'publish', 'search', 'self', 'source']),
  pipenv: new Set(['install', 'update', 'sync', 'lock', 'upgrade']),
  conda: new Set(['install', 'create', 'update', 'upgrade', 'search']),
  mamba: new Set(['install', 'create', 'update', 'upgrade', 'search']),
  cargo: new Set([
    'add',
    'install',
    'fetch',
    'update',
    'publish',
    'search',
    'login',
    'logout',
    'owner',
    'yank',
    'generate-lockfile',
    'vendor',
    'binstall',
  ]),
  go: new Set(['get', 'install']),
  gem: new Set(['install', 'update', 'push', 'fetch', 'search', 'sources', 'signin', 'owner', 'yank']),
  bundle: new Set(['install', 'update', 'add', 'outdated', 'package', 'lock', 'cache']),
  bundler: new Set(['install', 'update', 'add', 'outdated', 'package', 'lock', 'cache']),
  composer: new Set([
    'install',
    'require',
    'update',
    'upgrade',
    'create-project',
    'global',
    'outdated',
    'search',
    'self-update',
    'selfupdate',
  ]),
  git: new Set(['fetch', 'pull', 'push', 'clone', 'ls-remote', 'send-email', 'request-pull', 'svn']),
  hg: new Set(['pull', 'push', 'clone', 'incoming', 'outgoing', 'in', 'out']),
  svn: new Set(['checkout', 'co', 'update', 'up', 'commit', 'ci', 'export', 'import', 'switch']),
  deno: new Set(['install', 'add', 'upgrade', 'publish']),
  dotnet: new Set(['restore', 'add', 'tool', 'nuget', 'new']),
  nuget: new Set(['*']),
  helm: new Set(['install', 'upgrade', 'pull', 'push', 'repo', 'dependency', 'search', 'registry']),
  terraform: new Set(['init', 'apply', 'plan', 'destroy', 'import', 'refresh', 'get', 'login', 'providers']),
  ollama: new Set(['pull', 'push', 'run']),
  huggingface_cli: new Set(['download', 'upload', 'login']),
};

/** `go mod download`, `go mod tidy` (fetches what is missing): the second word after the subcommand. */
const NEEDS_BY_SUBSUBCOMMAND: Readonly<Record<string, Readonly<Record<string, ReadonlySet<string>>>>> = {
  go: { mod: new Set(['download', 'tidy']) },
  npm: { cache: new Set(['add']) },
  uv: { pip: new Set(['install', 'download', 'compile', 'sync']) },
  git: {
    remote: new Set(['update', 'prune', 'show']),
    submodule: new Set(['update', 'add', 'sync']),
    lfs: new Set(['fetch', 'pull', 'push', 'clone', 'install']),
  },
};

/** Programs that always talk to the network (clients, package managers of the system, cloud CLIs, containers). */
const ALWAYS: ReadonlySet<string> = new Set([
  ...NETWORK_PROGRAMS,
  'ssh',
  'mosh',
  'telnet',
  'ftp',
  'lftp',
  'tftp',
  'nc',
  'ncat',
  'netcat',
  'socat',
  'gh',
  'glab',
  'hub',
  'aws',
  'gcloud',
  'gsutil',
  'az',
  'kubectl',
  'docker',
  'podman',
  'docker-compose',
  'apt',
  'apt-get',
  'yum',
  'dnf',
  'apk',
  'pacman',
  'zypper',
  'brew',
  'snap',
  'flatpak',
  'ngrok',
  'cloudflared',
  'vercel',
  'netlify',
  'heroku',
  'fly',
  'flyctl',
  'firebase',
  'wrangler',
]);

/** The openssl commands that connect somewhere. */
const OPENSSL_NET: ReadonlySet<string> = new Set(['s_client', 's_server', 's_time', 'ocsp']);

/** Options of a program before its subcommand that take a value (`git -C dir`, `npm --prefix p`). */
const VALUE_OPTIONS: Readonly<Record<string, ReadonlySet<string>>> = {
  git: new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--config-env']),
  npm: new Set(['--prefix', '-w', '--workspace', '--userconfig', '--cache', '--registry']),
  pnpm: new Set(['-C', '--dir', '--filter', '-F']),
  yarn: new Set(['--cwd', '--modules-folder']),
  cargo: new Set(['-Z', '--config', '--color']),
  go: new Set([]),
};

/** The words after the program that are no option (and no option's value), in order. */
function subcommands(seg: SimpleCommand): string[] {
  const takes = VALUE_OPTIONS[seg.program];
  const out: string[] = [];
  for (let i = 1; i < seg.argv.length && out.length < 2; i++) {
    const w = seg.argv[i]!;
    if (w.startsWith('-')) {
      if (takes?.has(w) === true) i++;
      continue;
    }
    out.push(w);
  }
  return out;
}

/**
 * Why `seg` needs the network, as "needs network: npm install", or null: a network client
 * (curl, ssh, docker, gh, a system package manager, npx…), or the subcommand of a package manager
 * or VCS that fetches, installs or publishes (`npm install/ci/publish`, `pip install`, `cargo
 * add/install/fetch`, `go get`, `go mod download`, `git fetch/pull/push/clone`). `yarn` alone
 * installs. A wrapper segment is judged through what it runs (its own segment).
 */
export function networkNeed(seg: SimpleCommand): string | null {
  if (seg.wrapper || seg.program === '') return null;
  const p = seg.program === 'huggingface-cli' ? 'huggingface_cli' : seg.program;
  const subs = subcommands(seg);
  const first = subs[0];
  // openssl mostly computes locally (`rand`, `dgst`, `req`): only its clients and servers connect
  if (p === 'openssl') return first !== undefined && OPENSSL_NET.has(first) ? `needs network: openssl ${first}` : null;
  if (ALWAYS.has(p)) return `needs network: ${seg.program}`;
  if ((p === 'python' || p === 'python3') && seg.argv[1] === '-m' && /^pip3?$/.test(seg.argv[2] ?? '')) {
    const sub = seg.argv.slice(3).find((w) => !w.startsWith('-'));
    if (sub !== undefined && NEEDS_BY_SUBCOMMAND.pip!.has(sub)) return `needs network: ${seg.program} -m pip ${sub}`;
    return null;
  }
  if (p === 'yarn' && first === undefined) return 'needs network: yarn (installs)';
  const table = NEEDS_BY_SUBCOMMAND[p];
  if (table === undefined || first === undefined) return null;
  if (table.has('*') || table.has(first)) return `needs network: ${seg.program} ${first}`;
  const second = subs[1];
  if (second !== undefined && NEEDS_BY_SUBSUBCOMMAND[p]?.[first]?.has(second) === true)
    return `needs network: ${seg.program} ${first} ${second}`;
  return null;
}
