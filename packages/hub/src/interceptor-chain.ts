import { FingerError } from '@finger/protocol';

import type { HubCall, Interceptor } from './hub-types.js';

/**
 * The `next` of one pass of `call` through `list` (from `start`): each call of it runs the next interceptor, and
 * after the last one `end(call)` — at most once whatever the interceptors do (a second `next()`
 * after the end rejects with E_INTERNAL). A throw (sync or async) stops the call as a rejection.
 * The stepping state lives in the closure, where no interceptor can reach it.
 *
 * Hot path (one per intercepted call): a closure and its context are the whole cost. An earlier
 * run class with `#private` state and a subclass per kind of end cost the hub more than a
 * firewall evaluation (measured with bench/firewall's isolated rows).
 */
export function chainStep<C extends HubCall>(
  list: readonly Interceptor[],
  call: C,
  end: (call: C) => Promise<unknown>,
  start = 0,
): () => Promise<unknown> {
  let i = start;
  const next = (): Promise<unknown> => {
    const at = i;
    if (at < 0 || at >= list.length) {
      // the guard that matters: the call reaches its module at most once
      if (at < 0) return Promise.reject(new FingerError('E_INTERNAL', 'an interceptor called next() twice'));
      i = -1;
      return end(call);
    }
    i = at + 1;
    try {
      return list[at]!(call, next);
    } catch (e) {
      return Promise.reject(e);
    }
  };
  return next;
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
  return chainStep(interceptors, call, final)();
}
