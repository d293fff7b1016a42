// Option normalisation: `-rf` = `-fr` = `-r -f` = `-R -f` = `--recursive --force` = `--rec --forc`.
// For the commands whose options matter to deny rules and risk (rm, chmod, chown, cp, mv, git
// push, curl, wget, sed, find) each spelling maps to one canonical name; any other command's
// options stay as written (`-x` per letter of a cluster, `--name` for a long option).

import { FILE_COMMAND_SPECS } from './file-command-options.js';
import { parseGit } from './git-options.js';
import { NETWORK_COMMAND_SPECS } from './network-command-options.js';
import { type ParsedArgs, parseWithSpec } from './option-parser.js';
import { type CommandSpec, lookup } from './option-spec.js';

export type { ParsedArgs } from './option-parser.js';

const SPECS: Record<string, CommandSpec> = { ...FILE_COMMAND_SPECS, ...NETWORK_COMMAND_SPECS };

/** Programs whose first operand is a subcommand (a deny pattern anchors it: `git push` is not `git log push`). */
export const SUBCOMMAND_PROGRAMS: ReadonlySet<string> = new Set([
  'git',
  'npm',
  'yarn',
  'pnpm',
  'bun',
  'deno',
  'docker',
  'podman',
  'kubectl',
  'helm',
  'cargo',
  'go',
  'systemctl',
  'apt',
  'apt-get',
  'brew',
  'pip',
  'pip3',
  'gh',
  'terraform',
  'aws',
  'gcloud',
  'az',
  'poetry',
  'uv',
  'dotnet',
  'conda',
  'snap',
  'flatpak',
  'launchctl',
  'service',
  'ip',
  'nmcli',
  'openssl',
  'dnf',
  'yum',
  'pacman',
  'zypper',
  'rustup',
]);

/**
 * Normalises the options of `argv` (argv[0] is the program) as the program `program` reads them.
 * Used by deny patterns (the pattern and the command go through the same function) and by the
 * risk rules.
 */
export function parseArgs(program: string, argv: readonly string[], start = 1): ParsedArgs {
  const out: ParsedArgs = { options: new Map(), positionals: [], positionalIndex: [] };
  if (program === 'git') parseGit(argv, start, out);
  else parseWithSpec(lookup(SPECS, program) ?? {}, argv, start, out, false);
  return out;
}
