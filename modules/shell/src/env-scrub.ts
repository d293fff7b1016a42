import { FingerError, type ValidationIssue } from '@finger/protocol';

/** A compiled deny list: `denies(name)` answers whether a variable name is kept from children. */
export interface EnvDenyList {
  readonly globs: readonly string[];
  denies(name: string): boolean;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Variables of the daemon's environment never inherited, whatever the deny list: they change what
 * a shell does beyond the command the firewall judged — `BASH_ENV` / `ENV` name a script the shell
 * runs first, `CDPATH` sends a relative `cd` elsewhere (`cd .ssh` into `~/.ssh`). A caller may
 * still pass them in `env`, which the policy judges.
 */
const NEVER_INHERITED: ReadonlySet<string> = new Set(['BASH_ENV', 'ENV', 'CDPATH']);

function globToRegExp(glob: string): RegExp {
  let src = '';
  for (const ch of glob) {
    if (ch === '*') src += '.*';
    else if (ch === '?') src += '.';
    else src += ch.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${src}$`, 'i');
}

/**
 * Compiles name globs (`*` any run of characters, `?` one, matched case-insensitively against
 * the whole name) into one matcher. Built once per module, used on every call.
 */
export function compileEnvDeny(globs: readonly string[]): EnvDenyList {
  const res = globs.map(globToRegExp);
  return {
    globs: [...globs],
    denies: (name) => res.some((re) => re.test(name)),
  };
}

/**
 * The child's environment: every variable of `base` (the daemon's environment) whose name the
 * deny list does not match, except {@link NEVER_INHERITED}, then the caller's `requested`
 * variables on top. A requested name on the deny list, an invalid name, or a value with a NUL
 * byte fails the whole call with E_INVALID_ARGS listing every offending variable
 * (`details.issues`), so a secret can neither leak from the daemon nor be smuggled in under a
 * denied name.
 */
export function buildChildEnv(
  base: Record<string, string | undefined>,
  deny: EnvDenyList,
  requested: Record<string, string> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) {
    if (v !== undefined && !deny.denies(k) && !NEVER_INHERITED.has(k)) out[k] = v;
  }
  if (requested === undefined) return out;
  const issues: ValidationIssue[] = [];
  for (const [k, v] of Object.entries(requested)) {
    const at = `$.env${NAME.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`}`;
    if (!NAME.test(k)) issues.push({ path: at, message: 'must be a variable name ([A-Za-z_][A-Za-z0-9_]*)' });
    else if (deny.denies(k))
      issues.push({ path: at, message: `"${k}" is on the environment deny list (secrets are not passed to commands)` });
    else if (typeof v !== 'string') issues.push({ path: at, message: 'must be a string' });
    else if (v.includes('\0')) issues.push({ path: at, message: 'must not contain a NUL byte' });
  }
  if (issues.length > 0) {
    throw new FingerError('E_INVALID_ARGS', `env: ${issues.map((i) => `${i.path} ${i.message}`).join('; ')}`, {
      issues,
    });
  }
  return Object.assign(out, requested);
}
