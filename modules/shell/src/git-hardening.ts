/** Git settings every child of the shell tools runs with (`key`, `value`). */
const GIT_SETTINGS: readonly (readonly [string, string])[] = [
  // git never takes a plain directory holding `HEAD`, `config` and `objects/` for a bare
  // repository: an agent that can write files (fs.write, tar, unzip) could otherwise plant one
  // whose config (core.fsmonitor, core.pager, …) runs a command when a harmless-looking
  // `git status` in it — classified AUTO — reads it. A bare repository stays usable with
  // `--git-dir`/`GIT_DIR`, which the firewall sees. (git ≥ 2.38; older versions ignore it.)
  ['safe.bareRepository', 'explicit'],
];

/**
 * `env` with {@link GIT_SETTINGS} appended as `GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>` after
 * the entries `GIT_CONFIG_COUNT` already names (git ≥ 2.31 reads them as `git -c`; a later entry
 * wins, so a caller's own entries cannot undo these). A `GIT_CONFIG_COUNT` that is not a small
 * number is replaced: the caller's entries are then dropped, ours kept.
 */
export function withGitHardening(env: Record<string, string>): Record<string, string> {
  const given = env.GIT_CONFIG_COUNT;
  let n = given !== undefined && /^\d{1,3}$/.test(given) ? Number(given) : 0;
  for (const [key, value] of GIT_SETTINGS) {
    env[`GIT_CONFIG_KEY_${n}`] = key;
    env[`GIT_CONFIG_VALUE_${n}`] = value;
    n++;
  }
  env.GIT_CONFIG_COUNT = String(n);
  return env;
}
