// git's options: its global options before the subcommand, then the subcommand's own table
// (only `git push` and `git config` matter to deny rules and risk).

import { addOption, type ParsedArgs, parseWithSpec } from './option-parser.js';
import { type CommandSpec, lookup, same } from './option-spec.js';

const GIT_GLOBAL_ARG: Record<string, string> = { C: 'C', c: 'config' };
/** git's global long options that take the next word as their value (when not joined with `=`). */
export const GIT_GLOBAL_LONG_ARG: ReadonlySet<string> = new Set([
  'git-dir',
  'work-tree',
  'namespace',
  'config-env',
  'super-prefix',
  'list-cmds',
  'attr-source',
]);

const GIT_PUSH: CommandSpec = {
  short: { f: 'force', u: 'set-upstream', d: 'delete', n: 'dry-run', v: 'verbose', q: 'quiet', 4: 'ipv4', 6: 'ipv6' },
  shortArg: { o: 'push-option' },
  long: {
    ...same(
      'force',
      'set-upstream',
      'delete',
      'dry-run',
      'verbose',
      'quiet',
      'mirror',
      'all',
      'tags',
      'prune',
      'atomic',
      'follow-tags',
      'no-verify',
      'force-if-includes',
    ),
    'force-with-lease': 'force',
    branches: 'all',
  },
  longArg: { 'push-option': 'push-option', repo: 'repo', 'receive-pack': 'receive-pack', exec: 'receive-pack' },
  gnuPrefix: true,
};

/** The read actions of `git config` (old syntax: `--get`…; `list`/`get` are also subcommands since 2.46). */
export const GIT_CONFIG_READS: ReadonlySet<string> = new Set([
  'get',
  'get-all',
  'get-regexp',
  'get-urlmatch',
  'get-color',
  'get-colorbool',
  'list',
]);
/** The write actions of `git config` (old syntax). */
export const GIT_CONFIG_WRITES: ReadonlySet<string> = new Set([
  'replace-all',
  'add',
  'unset',
  'unset-all',
  'rename-section',
  'remove-section',
  'edit',
]);

/** git config, both syntaxes (`git config --get k`, `git config get k`, git ≥ 2.46). */
export const GIT_CONFIG: CommandSpec = {
  short: { l: 'list', e: 'edit', z: 'null' },
  shortArg: { f: 'file' },
  long: same(
    'global',
    'system',
    'local',
    'worktree',
    ...GIT_CONFIG_READS,
    ...GIT_CONFIG_WRITES,
    'fixed-value',
    'bool',
    'int',
    'bool-or-int',
    'path',
    'expiry-date',
    'no-type',
    'null',
    'name-only',
    'show-origin',
    'show-scope',
    'show-names',
    'includes',
    'no-includes',
    'all',
    'regexp',
    'append',
  ),
  longArg: same('file', 'blob', 'type', 'default', 'comment', 'value', 'url'),
  gnuPrefix: true,
};

/**
 * Sections of git's configuration whose values may be credentials: `http.<url>.extraHeader`
 * (actions/checkout's `AUTHORIZATION: basic <token>`), `credential.*`, `url.<base>.insteadOf`
 * (a token in the URL), `sendemail.smtpPass`, forges' tokens (`github.token`, `hub.oauthtoken`).
 */
const CREDENTIAL_SECTIONS: ReadonlySet<string> = new Set([
  'http',
  'credential',
  'url',
  'sendemail',
  'github',
  'gitlab',
  'hub',
]);
/** Key names that say they hold a secret, in any section. */
const CREDENTIAL_NAME = /token|pass|secret|extraheader|auth|cookie/i;
/** Sections a `--get-regexp '^section\.'` may read (none of them holds credentials). */
const PLAIN_SECTIONS: ReadonlySet<string> = new Set(
  // prettier-ignore
  ['user', 'core', 'alias', 'remote', 'branch', 'color', 'diff', 'merge', 'pull', 'push', 'fetch', 'init', 'log',
    'format', 'commit', 'tag', 'rebase', 'status', 'submodule', 'advice', 'gc', 'pager', 'help', 'safe', 'include',
    'includeif', 'pack', 'grep', 'blame', 'column', 'rerere', 'worktree', 'maintenance', 'feature', 'gpg'],
);

/** Whether a configuration key (`http.https://x/.extraheader`, `credential.helper`) may hold a credential. */
export function isCredentialConfigKey(key: string): boolean {
  const dot = key.indexOf('.');
  const section = (dot < 0 ? key : key.slice(0, dot)).toLowerCase();
  return CREDENTIAL_SECTIONS.has(section) || (dot >= 0 && CREDENTIAL_NAME.test(key.slice(key.lastIndexOf('.') + 1)));
}

/** Whether a `--get-regexp` pattern can only match keys of one plain section (`^user\.`, `^alias\..*`). */
function plainSectionPattern(pattern: string): boolean {
  if (pattern.includes('|')) return false;
  const m = /^\^([A-Za-z0-9-]+)(?:\\?\.|$)/.exec(pattern);
  return m !== null && PLAIN_SECTIONS.has((m[1] as string).toLowerCase());
}

/**
 * Whether a read of `git config` (parsed with {@link GIT_CONFIG}) names a credential: a regexp read
 * (`--get-regexp`, `get --regexp`) that prints values beyond one plain section, or a read of a
 * credential key (`--get credential.helper`, `--get-urlmatch http.extraheader URL`,
 * `get url.x.insteadof`). Names only (`--name-only`) are no credential. A listing (`--list`,
 * `list`) is left to the safe list (it prints every key, the credential ones included).
 */
export function gitConfigShowsCredential(p: ParsedArgs): boolean {
  const names = p.options;
  if (names.has('list') || p.positionals[0] === 'list') return false;
  const ops = p.positionals[0] === 'get' ? p.positionals.slice(1) : p.positionals;
  const nameOnly = names.has('name-only');
  const key = ops[0];
  if (key === undefined) return true;
  if (names.has('get-regexp') || names.has('regexp')) return !nameOnly && !plainSectionPattern(key);
  return isCredentialConfigKey(key);
}

const GIT_SUBCOMMANDS: Record<string, CommandSpec> = { push: GIT_PUSH, config: GIT_CONFIG };

/** Parses git's argv from `start`: global options, the subcommand (first operand), its options. */
export function parseGit(argv: readonly string[], start: number, out: ParsedArgs): void {
  let i = start;
  for (; i < argv.length; i++) {
    const w = argv[i] as string;
    if (!w.startsWith('-') || w === '-') break;
    if (w.startsWith('--')) {
      const eq = w.indexOf('=');
      const name = eq < 0 ? w.slice(2) : w.slice(2, eq);
      if (eq >= 0) addOption(out, name, w.slice(eq + 1));
      else if (GIT_GLOBAL_LONG_ARG.has(name)) addOption(out, name, argv[++i] ?? '');
      else addOption(out, name === 'paginate' ? 'p' : name === 'no-pager' ? 'P' : name, '');
      continue;
    }
    const letter = w[1] as string;
    const withArg = lookup(GIT_GLOBAL_ARG, letter);
    if (withArg !== undefined) addOption(out, withArg, w.length > 2 ? w.slice(2) : (argv[++i] ?? ''));
    else for (let k = 1; k < w.length; k++) addOption(out, w[k] as string, '');
  }
  if (i >= argv.length) return;
  const sub = argv[i] as string;
  out.positionals.push(sub);
  out.positionalIndex.push(i);
  parseWithSpec(lookup(GIT_SUBCOMMANDS, sub) ?? {}, argv, i + 1, out, false);
  if (sub === 'push' && out.positionals.slice(1).some((p) => p.startsWith('+'))) addOption(out, 'force', '+refspec');
}
