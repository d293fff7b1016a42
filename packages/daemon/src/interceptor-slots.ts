// The hub's interceptor chain, declared once as data — `[safety, grants, firewall]`, outermost first
// — before any module loads, instead of following the order of statements in `build`. Each slot is
// filled when its part is built (the firewall's needs the modules' tools to load its policy); a
// call that reaches an empty slot is refused, so nothing can run before the chain is complete.

import type { HubCall, Interceptor, MessageHub } from '@finger/hub';
import { FingerError } from '@finger/protocol';

/** The daemon's chain, in the order a call passes it. */
export const INTERCEPTOR_CHAIN = ['safety', 'grants', 'firewall'] as const;
export type InterceptorSlot = (typeof INTERCEPTOR_CHAIN)[number];

/** Installs one slot per name of {@link INTERCEPTOR_CHAIN} on `hub`; `fill` sets each once. */
export function declareInterceptorChain(hub: Pick<MessageHub, 'use'>): {
  fill(slot: InterceptorSlot, interceptor: Interceptor): void;
} {
  const filled = new Map<InterceptorSlot, Interceptor>();
  for (const slot of INTERCEPTOR_CHAIN) {
    const run = ((call: HubCall, next: () => Promise<unknown>) => {
      const i = filled.get(slot);
      if (i === undefined)
        return Promise.reject(
          new FingerError('E_PROVIDER_CLOSED', `the daemon is still starting: its ${slot} check is not ready`),
        );
      return i(call, next);
    }) as Interceptor;
    // the hub's fast path: a slot passes a call only when its interceptor says so
    run.pass = (call) => filled.get(slot)?.pass?.(call) ?? false;
    hub.use(run);
  }
  return {
    fill(slot, interceptor) {
      if (filled.has(slot)) throw new Error(`interceptor slot ${slot} is already filled`);
      filled.set(slot, interceptor);
    },
  };
}
