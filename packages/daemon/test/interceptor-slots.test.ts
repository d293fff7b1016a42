import { describe, expect, it } from 'vitest';

import type { HubCall, Interceptor } from '@finger/hub';
import { isFingerError } from '@finger/protocol';

import { declareInterceptorChain, INTERCEPTOR_CHAIN } from '../src/interceptor-slots.js';

const call = {} as HubCall;

function declared() {
  const used: Interceptor[] = [];
  const chain = declareInterceptorChain({ use: (i: Interceptor) => void used.push(i) });
  return { used, chain };
}

describe('the interceptor chain declared as data', () => {
  it('installs one slot per part, in the order [safety, grants, firewall]', () => {
    expect(INTERCEPTOR_CHAIN).toEqual(['safety', 'grants', 'firewall']);
    expect(declared().used).toHaveLength(3);
  });

  it('a slot not filled yet refuses the call with E_PROVIDER_CLOSED (nothing runs before the chain is complete)', async () => {
    const { used, chain } = declared();
    chain.fill('safety', (_c, next) => next());
    let reached = false;
    const e = await used[2]!(call, () => {
      reached = true;
      return Promise.resolve('ran');
    }).catch((err: unknown) => err);
    expect(isFingerError(e) && e.code).toBe('E_PROVIDER_CLOSED');
    expect(reached).toBe(false);
    expect(used[2]!.pass?.(call)).toBe(false);
  });

  it('a filled slot runs its interceptor and forwards its fast path (pass)', async () => {
    const { used, chain } = declared();
    const firewall = ((_c: HubCall, next: () => Promise<unknown>) =>
      next().then((r) => `checked ${String(r)}`)) as Interceptor;
    firewall.pass = () => true;
    chain.fill('firewall', firewall);
    expect(await used[2]!(call, () => Promise.resolve('ran'))).toBe('checked ran');
    expect(used[2]!.pass?.(call)).toBe(true);
    expect(() => chain.fill('firewall', firewall)).toThrow(/interceptor slot firewall is already filled/);
  });
});
