import type { Envelope, EventType, Principal } from '@finger/protocol';
import { FingerError } from '@finger/protocol';

/**
 * What the grant check needs of a hub call. The hub's `HubCall` satisfies it structurally, so
 * the firewall depends on `protocol` only (STYLE: `protocol ← firewall`; the daemon wires the
 * interceptor into the hub).
 */
export interface GrantCall {
  readonly envelope: Pick<
    Envelope,
    'source' | 'request_id' | 'correlation_id' | 'session_id' | 'workflow_id' | 'target'
  >;
  readonly resolved: {
    readonly tool_id: string;
    readonly module: { readonly id: string; readonly grants?: readonly string[] };
  };
}

/** An interceptor in the hub's `(call, next) => …` shape, assignable to `@finger/hub`'s `Interceptor`. */
export type GrantInterceptor = (call: GrantCall, next: () => Promise<unknown>) => Promise<unknown>;

/** Where verdicts go: the hub's EventBus satisfies it. */
export interface VerdictEvents {
  emit(
    type: EventType,
    correlation: {
      request_id?: string;
      correlation_id?: string;
      session_id?: string;
      workflow_id?: string;
      target?: string;
    },
    data?: Record<string, unknown>,
  ): unknown;
}

/** The part of a ToolGrantProfile the check uses. */
export interface GrantChecker {
  isGranted(role: string, tool_id: string, module_grants?: readonly string[]): boolean;
}

/** Outcome of the permission check for one call. */
export type GrantDecision = { allowed: true } | { allowed: false; role: string; reason: string };

/** Human roles that may call any tool; `viewer` may call none. */
const HUMAN_CALLERS = new Set(['admin', 'operator']);

/** The grant roles a principal acts as: `agent:<r>` → `r`; for modules also `module:<id>`. */
function grantRolesOf(p: Principal): string[] {
  const roles = p.roles.map((r) => (r.startsWith('agent:') ? r.slice(6) : r));
  if (p.kind === 'module') roles.push(`module:${p.id}`);
  return roles;
}

/**
 * The permission decision (pure): `system` is allowed; a human needs `admin` or `operator`;
 * an agent (or a module acting on its own) needs a role granted the tool — by a glob of the
 * profile or by the module manifest's `grants`.
 */
export function decideGrant(
  checker: GrantChecker,
  principal: Principal,
  tool_id: string,
  module_grants?: readonly string[],
): GrantDecision {
  switch (principal.kind) {
    case 'system':
      return { allowed: true };
    case 'human': {
      if (principal.roles.some((r) => HUMAN_CALLERS.has(r))) return { allowed: true };
      const role = principal.roles[0] ?? '(none)';
      return {
        allowed: false,
        role,
        reason: `human "${principal.id}" with role ${role} may not call tools (admin or operator needed)`,
      };
    }
    default: {
      const roles = grantRolesOf(principal);
      for (const r of roles) if (checker.isGranted(r, tool_id, module_grants)) return { allowed: true };
      const role = roles[0] ?? '(none)';
      return {
        allowed: false,
        role,
        reason:
          roles.length === 0
            ? `${principal.kind} "${principal.id}" has no role, so no tool grants`
            : `role ${roles.map((r) => `"${r}"`).join(', ')} has no grant for "${tool_id}"`,
      };
    }
  }
}

/**
 * The permission layer's grant check as a hub interceptor: a call whose principal may not call
 * the tool is refused with E_FORBIDDEN (details `{role, tool}`) before dispatch, and a
 * FIREWALL_VERDICT event `{action: 'deny', layer: 'permission', reasons}` is emitted. Direct
 * `/hub` dispatches get no exemption from grants.
 */
export function createGrantInterceptor(profile: GrantChecker, events?: VerdictEvents): GrantInterceptor {
  return (call, next) => {
    const tool = call.resolved.tool_id;
    const d = decideGrant(profile, call.envelope.source, tool, call.resolved.module.grants);
    if (d.allowed) return next();
    const env = call.envelope;
    events?.emit(
      'FIREWALL_VERDICT',
      {
        request_id: env.request_id,
        correlation_id: env.correlation_id,
        session_id: env.session_id,
        workflow_id: env.workflow_id,
        target: env.target,
      },
      {
        action: 'deny',
        level: 'DENY',
        layer: 'permission',
        tool,
        role: d.role,
        principal: { kind: env.source.kind, id: env.source.id },
        reasons: [d.reason],
      },
    );
    return Promise.reject(new FingerError('E_FORBIDDEN', d.reason, { role: d.role, tool }));
  };
}
