import type { ModuleManifest, PermissionLevel, RiskLevel, ToolSpec } from '@finger/protocol';

const RISK_ORDER: readonly RiskLevel[] = ['low', 'medium', 'high', 'critical'];
/** Permission levels a serve host may ask for: only ones that hold a call at least as long as the default. */
const STRICT_PERMISSIONS: ReadonlySet<PermissionLevel> = new Set(['CONFIRM', 'APPROVE']);

function atLeastMedium(r: RiskLevel | undefined): RiskLevel {
  const i = r === undefined ? -1 : RISK_ORDER.indexOf(r);
  return i > 1 ? r! : 'medium';
}

function distrustTool(t: ToolSpec): ToolSpec {
  const { permission, ...rest } = t;
  return {
    ...rest,
    risk_level: atLeastMedium(t.risk_level),
    capability_level: 'L2',
    side_effects: true,
    idempotent: false,
    ...(permission !== undefined && STRICT_PERMISSIONS.has(permission) ? { permission } : {}),
  };
}

/**
 * The manifest a daemon imports for a module that only `module serve` hosts announce. A serve
 * host holds the serve key, not the cluster key: it may answer calls, but what it says of its
 * tools must not make the daemon's firewall hold them less. Its claims may only raise the risk:
 * risk at least `medium`, capability `L2`, side effects, not idempotent (the firewall's defaults
 * for a tool that says nothing), a `permission` kept only when it is CONFIRM or APPROVE, and no
 * `grants`. An admin relaxes them on the daemon by policy; a module a daemon announces (a holder of
 * the cluster key) is imported as announced.
 */
export function distrustServeAnnounced(m: ModuleManifest): ModuleManifest {
  const { grants: _grants, ...rest } = m;
  return { ...rest, tools: m.tools.map(distrustTool) };
}
