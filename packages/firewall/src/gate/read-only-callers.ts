// Read-only callers (a viewer's request the daemon runs for them) are never held for a person: a
// viewer cannot be "asked for", and their holds would only fill the approval queue. A call the
// firewall would hold is refused at once with E_FORBIDDEN; nothing enters the queue.

import type { Principal } from '@finger/protocol';

import type { FirewallGate } from '../engine/firewall-interceptor.js';

/** `gate`, except that a call of a principal `readOnly` names is refused (E_FORBIDDEN) instead of held. */
export function refuseHoldsOfReadOnlyCallers(gate: FirewallGate, readOnly: (p: Principal) => boolean): FirewallGate {
  return {
    hold(ev, facts) {
      if (!readOnly(facts.principal)) return gate.hold(ev, facts);
      return Promise.resolve({
        approved: false,
        code: 'E_FORBIDDEN',
        reason:
          `${facts.tool_id} would need a person's approval (${ev.level}: ${ev.reasons.join('; ') || ev.layer}), ` +
          'and a request of a read-only caller (a viewer) is never held for one: ask an operator to make it',
      });
    },
  };
}
