import { FingerError } from '@finger/protocol';

import type { HubCall, Interceptor } from './hub-types.js';

/** One pass of a call through the chain: one object and one `next` closure per call. */
class ChainRun {
  private i = 0;
  private dispatched = false;
  readonly next = (): Promise<unknown> => this.step();

  constructor(
    private readonly list: readonly Interceptor[],
    private readonly call: HubCall,
    private readonly final: () => Promise<unknown>,
  ) {}

  step(): Promise<unknown> {
    const i = this.i;
    if (i >= this.list.length) {
      // the guard that matters: the call reaches its module at most once
      if (this.dispatched) return Promise.reject(new FingerError('E_INTERNAL', 'an interceptor called next() twice'));
      this.dispatched = true;
      return this.final();
    }
    this.i = i + 1;
    try {
      return this.list[i]!(this.call, this.next);
    } catch (e) {
      return Promise.reject(e);
    }
  }
}

/**
 * Runs `call` through `interceptors` in order, ending in `final`. Each interceptor may call
 * `next()`, answer in its place, or throw (sync or async) to stop the call; `final` runs at most
 * once whatever the interceptors do.
 */
export function runInterceptors(
  interceptors: readonly Interceptor[],
  call: HubCall,
  final: () => Promise<unknown>,
): Promise<unknown> {
  return new ChainRun(interceptors, call, final).step();
}
