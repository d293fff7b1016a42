import { createRequire } from 'node:module';

import { FingerError } from '@finger/protocol';

type Matcher = (input: string) => boolean;
type Picomatch = (glob: string, options?: { nobrace?: boolean; noextglob?: boolean; nonegate?: boolean }) => Matcher;

// picomatch is CommonJS without bundled types; its posix build keeps `\` literal on every platform.
const picomatch = createRequire(import.meta.url)('picomatch/posix') as Picomatch;

/**
 * Characters a grant glob may hold: those of tool ids plus `*`, `?`, `{a,b}` and `[…]`. No `!`
 * or extglobs: a negated grant would quietly grant everything else.
 */
export const GRANT_GLOB_PATTERN = /^[A-Za-z0-9_.*?{},[\]-]{1,200}$/;

/** Role names: `supervisor`, `executor`, `reviewer`, any other `[a-z][a-z0-9_-]*`, or `module:<id>`. */
export const GRANT_ROLE_PATTERN = /^[a-z][a-z0-9_-]{0,63}(:[a-z0-9][a-z0-9_.-]{0,127})?$/;

/**
 * Normalises a role as grants store it: `agent:executor` (a principal's role) → `executor`.
 * Throws E_INVALID_ARGS for anything that is not a role name.
 */
export function grantRole(role: string): string {
  const r = role.startsWith('agent:') ? role.slice('agent:'.length) : role;
  if (!GRANT_ROLE_PATTERN.test(r))
    throw new FingerError('E_INVALID_ARGS', `bad role ${JSON.stringify(role)}: expected a name like "executor"`, {
      issues: [{ path: '$.role', message: `must match ${GRANT_ROLE_PATTERN.source}` }],
    });
  return r;
}

/** Throws E_INVALID_ARGS unless `glob` is a valid grant glob; returns it. */
export function checkGrantGlob(glob: string): string {
  if (typeof glob !== 'string' || !GRANT_GLOB_PATTERN.test(glob))
    throw new FingerError(
      'E_INVALID_ARGS',
      `bad tool glob ${JSON.stringify(glob)}: use tool-id characters with *, ?, {a,b} or [..] (e.g. "fs.*", "mcp.files.*", "**")`,
      { issues: [{ path: '$.tool', message: `must match ${GRANT_GLOB_PATTERN.source}` }] },
    );
  return glob;
}

const toSegments = (s: string): string => s.replace(/\./g, '/');

/**
 * Compiles a grant glob over tool ids with picomatch, the dots of ids acting as path separators:
 * `*` matches within one segment (`fs.*` matches `fs.write`, not `fsx.write` nor `fs.a.b`),
 * `**` across segments (`mcp.**`, or `**` for every tool). Throws E_INVALID_ARGS for a bad glob.
 */
export function compileGrantGlob(glob: string): Matcher {
  const m = picomatch(toSegments(checkGrantGlob(glob)), { noextglob: true, nonegate: true });
  return (tool_id) => m(toSegments(tool_id));
}
