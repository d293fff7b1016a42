import type { HubCall, Interceptor } from './hub-types.js';

/**
 * Runs `call` through `interceptors` in order, ending in `final`. Each interceptor may call
 * `next()` once, answer in its place, or throw to stop the call.
 */
export function runInterceptors(
  interceptors: readonly Interceptor[],
  call: HubCall,
  final: () => Promise<unknown>,
): Promise<unknown> {
  const step = (i: number): Promise<unknown> => {
    if (i === interceptors.length) return final();
    let called = false;
    return interceptors[i]!(call, () => {
      if (called) return Promise.reject(new Error(`interceptor ${i} called next() twice`));
      called = true;
      return step(i + 1);
    });
  };
  return step(0);
}
