import { lstatSync, realpathSync } from 'node:fs';
import { isAbsolute, join, normalize } from 'node:path';

/**
 * The usual credential places of a user's home, masked in every sandbox (relative to the home of
 * the user the daemon runs as). This is the one list: docs/operations.md ("Sandbox") names the
 * same entries. A path missing when the sandbox starts is not masked (bubblewrap cannot mount over
 * nothing without creating it on the real file system); one created later by the sandboxed program
 * itself is its own.
 */
export const CREDENTIAL_PATHS: readonly string[] = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.kube',
  '.docker/config.json',
  '.config/gcloud',
  '.config/gh',
  '.config/hub',
  '.config/finger',
  '.netrc',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  '.cargo/credentials.toml',
  '.cargo/credentials',
  '.gem/credentials',
  '.vault-token',
  '.password-store',
  '.local/share/keyrings',
  '.terraform.d/credentials.tfrc.json',
  '.finger',
];

/** A path hidden inside the sandbox: an empty tmpfs over a directory, /dev/null over a file. */
export interface SandboxMask {
  path: string;
  kind: 'dir' | 'file';
}

/**
 * Resolves the paths to mask: each absolute path (symlinks resolved, so the mask lands on what the
 * link points to; the link itself is masked too when it differs) that exists now, as a directory or
 * file mask. Missing paths are left out, and so are other kinds (sockets, devices). Duplicates go.
 */
export function resolveMasks(paths: readonly string[]): SandboxMask[] {
  const out = new Map<string, SandboxMask>();
  const add = (p: string) => {
    let st;
    try {
      st = lstatSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) out.set(p, { path: p, kind: 'dir' });
    else if (st.isFile()) out.set(p, { path: p, kind: 'file' });
  };
  for (const raw of paths) {
    if (!isAbsolute(raw)) continue;
    const p = normalize(raw);
    let real: string | undefined;
    try {
      real = realpathSync(p);
    } catch {
      continue;
    }
    add(real);
    // a symlink (or a path through one) is masked at both ends: bubblewrap mounts on the target
    if (real !== p) {
      try {
        if (lstatSync(p).isSymbolicLink()) continue; // the target's mask hides what it reaches
      } catch {
        continue;
      }
      add(p);
    }
  }
  return [...out.values()];
}

/** The credential places of {@link CREDENTIAL_PATHS} below `userHome`, as absolute paths. */
export function credentialPaths(userHome: string | undefined): string[] {
  if (userHome === undefined || !isAbsolute(userHome)) return [];
  return CREDENTIAL_PATHS.map((p) => join(userHome, p));
}
