/**
 * What a failed run in the workspace-write sandbox most likely lacked, read from its output: the
 * network (a name that does not resolve, a refused or unreachable connection) or a place to write
 * outside the workspace (a read-only file system). The run is never repeated outside the sandbox:
 * the hint tells the agent (and the person reading the result) why it failed.
 */

/** The `sandbox` part of a shell result when the call ran in a stricter profile. */
export interface SandboxReport {
  profile: 'workspace-write';
  /** Set when the run failed and its output says what the sandbox withheld. */
  hint?: string;
}

const NETWORK =
  /ENOTFOUND|EAI_AGAIN|ENETUNREACH|ECONNREFUSED|getaddrinfo|Could not resolve host|Temporary failure in name resolution|Name or service not known|[Nn]etwork is unreachable|Connection refused|Failed to connect|failed to lookup address|dial tcp|no such host|Could not connect|unable to access 'https?:|spurious network error/;
const READ_ONLY = /EROFS|Read-only file system/;

/** The hint for a run that ended with `exit_code` and printed `output`; undefined when it succeeded or nothing points at the sandbox. */
export function sandboxHint(exit_code: number | null, output: string): string | undefined {
  if (exit_code === 0) return undefined;
  if (NETWORK.test(output))
    return 'network is off in the workspace sandbox: this command needs it, so it failed there (it is not re-run outside; a person can run it as a held call)';
  if (READ_ONLY.test(output))
    return 'only the workspace is writable in the workspace sandbox: this command wrote elsewhere, so it failed there (it is not re-run outside)';
  return undefined;
}
