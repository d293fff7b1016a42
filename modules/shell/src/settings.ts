import path from 'node:path';

/** Environment-variable name globs never passed to a child (case-insensitive; `*` any run, `?` one char). */
export const DEFAULT_ENV_DENY: readonly string[] = [
  '*_TOKEN',
  '*_KEY',
  '*_SECRET',
  '*SECRET*',
  '*PASSWORD*',
  '*PASSWD*',
  '*CREDENTIAL*',
  'AWS_*',
  'AZURE_*',
  'GOOGLE_*',
  'GCP_*',
  'GITHUB_*',
  'NPM_TOKEN',
  'OPENAI_*',
  'ANTHROPIC_*',
  'FINGER_*',
  'SSH_AUTH_SOCK',
  'DATABASE_URL',
];

/** Limits of `shell.run_code` (settings key `run_code`). */
export interface RunCodeSettings {
  /** RLIMIT_CPU soft limit in seconds (SIGXCPU); the hard limit is one second more (SIGKILL). */
  cpu_seconds: number;
  /** RLIMIT_AS for python snippets, MiB. */
  address_space_mib: number;
  /** RLIMIT_AS for node snippets, MiB: V8 reserves far more address space than it uses. */
  node_address_space_mib: number;
  /** `--max-old-space-size` for node snippets, MiB: the real memory bound of a node snippet. */
  node_heap_mib: number;
  /** RLIMIT_NPROC (counted per user, threads included; not enforced for root). */
  max_processes: number;
  /** RLIMIT_FSIZE: largest file a snippet may write, bytes. */
  max_file_bytes: number;
  /** Python interpreter (looked up on the child's PATH when not absolute). */
  python: string;
  /** Node interpreter; default the daemon's own `process.execPath`. */
  node: string;
  /** The `prlimit` binary (util-linux). */
  prlimit: string;
  /** How many run directories under `.finger/run/` are kept; older ones are removed. */
  keep_runs: number;
  /** Most files listed in a result (`files_truncated` says when there were more). */
  max_files_listed: number;
}

/** The module's settings with every default applied. */
export interface ShellSettings {
  /** Absolute workspace roots; the first is the default cwd and holds `.finger/run/`. */
  workspace_roots: string[];
  default_timeout_ms: number;
  max_timeout_ms: number;
  /** Cap of stdout and of stderr each, bytes (the head is kept). */
  max_output_bytes: number;
  /** Between SIGTERM and SIGKILL to the process group, ms. */
  kill_grace_ms: number;
  /** While a child runs, the call's lease is extended by 3× this period, every period (ms). */
  lease_heartbeat_ms: number;
  /** Shell for the `command` form (`<shell> -c <command>`). */
  shell: string;
  /** Deny globs (replaces {@link DEFAULT_ENV_DENY} when set) plus `env_deny_extra`. */
  env_deny: string[];
  run_code: RunCodeSettings;
}

const MIB = 1024 * 1024;

function bad(key: string, want: string): never {
  throw new Error(`shell settings: "${key}" must be ${want}`);
}

function int(src: Record<string, unknown>, key: string, dflt: number, min: number, prefix = ''): number {
  const v = src[key];
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) bad(prefix + key, `an integer >= ${min}`);
  return v;
}

function str(src: Record<string, unknown>, key: string, dflt: string, prefix = ''): string {
  const v = src[key];
  if (v === undefined) return dflt;
  if (typeof v !== 'string' || v.length === 0) bad(prefix + key, 'a non-empty string');
  return v;
}

function strList(src: Record<string, unknown>, key: string, dflt: readonly string[]): string[] {
  const v = src[key];
  if (v === undefined) return [...dflt];
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' && x.length > 0)) {
    bad(key, 'an array of non-empty strings');
  }
  return [...(v as string[])];
}

/**
 * Reads the operator settings the daemon hands the factory (`home`, `workspace_roots`, … plus
 * `modules.settings.shell` of the config) and applies the defaults. Throws a plain Error naming
 * the key on a bad value (the runtime reports it as a failed module start).
 */
export function parseSettings(raw: Record<string, unknown>): ShellSettings {
  const roots = strList(raw, 'workspace_roots', []);
  if (roots.length === 0) bad('workspace_roots', 'a non-empty array of absolute paths');
  for (const r of roots) if (!path.isAbsolute(r)) bad('workspace_roots', `absolute paths (got "${r}")`);
  const max_timeout_ms = int(raw, 'max_timeout_ms', 600_000, 1);
  const default_timeout_ms = int(raw, 'default_timeout_ms', Math.min(30_000, max_timeout_ms), 1);
  if (default_timeout_ms > max_timeout_ms) bad('default_timeout_ms', `<= max_timeout_ms (${max_timeout_ms})`);
  const rc = raw.run_code ?? {};
  if (typeof rc !== 'object' || rc === null || Array.isArray(rc)) bad('run_code', 'an object');
  const r = rc as Record<string, unknown>;
  const p = 'run_code.';
  return {
    workspace_roots: roots.map((x) => path.resolve(x)),
    default_timeout_ms,
    max_timeout_ms,
    max_output_bytes: int(raw, 'max_output_bytes', MIB, 1),
    kill_grace_ms: int(raw, 'kill_grace_ms', 2000, 0),
    lease_heartbeat_ms: int(raw, 'lease_heartbeat_ms', 5000, 10),
    shell: str(raw, 'shell', '/bin/sh'),
    env_deny: [...strList(raw, 'env_deny', DEFAULT_ENV_DENY), ...strList(raw, 'env_deny_extra', [])],
    run_code: {
      cpu_seconds: int(r, 'cpu_seconds', 10, 1, p),
      address_space_mib: int(r, 'address_space_mib', 512, 16, p),
      node_address_space_mib: int(r, 'node_address_space_mib', 4096, 16, p),
      node_heap_mib: int(r, 'node_heap_mib', 512, 16, p),
      max_processes: int(r, 'max_processes', 256, 1, p),
      max_file_bytes: int(r, 'max_file_bytes', 16 * MIB, 1, p),
      python: str(r, 'python', 'python3', p),
      node: str(r, 'node', process.execPath, p),
      prlimit: str(r, 'prlimit', 'prlimit', p),
      keep_runs: int(r, 'keep_runs', 50, 1, p),
      max_files_listed: int(r, 'max_files_listed', 1000, 1, p),
    },
  };
}
