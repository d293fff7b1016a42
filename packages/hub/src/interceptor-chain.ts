import type { Envelope } from '@finger/protocol';
import { FingerError } from '@finger/protocol';

import type { HubCall, Interceptor, ResolvedTarget } from './hub-types.js';

/**
 * One pass of a call through the chain. The run is itself the {@link HubCall} the interceptors
 * see, so a call costs one object and one `next` closure; its stepping state lives in `#private`
 * fields an interceptor cannot reach. Subclasses say what the end of the chain does.
 */
export abstract class InterceptorRun implements HubCall {
  readonly #list: readonly Interceptor[];
  #i = 0;
  #dispatched = false;
  /** Goes on to the next interceptor, or to {@link final} after the last one (at most once). */
  readonly next = (): Promise<unknown> => this.#step();

  constructor(
    list: readonly Interceptor[],
    readonly envelope: Envelope,
    readonly resolved: ResolvedTarget,
    readonly direct: boolean,
  ) {
    this.#list = list;
  }

  /** What runs after the last interceptor called `next()`. */
  protected abstract final(): Promise<unknown>;

  /**
   * True while {@link run} is still on the stack: `final()` called then means no interceptor
   * awaited anything, so a time read before the chain is still current.
   */
  protected synchronous = false;

  /** Starts the run at the first interceptor. */
  run(): Promise<unknown> {
    this.synchronous = true;
    const out = this.#step(); // never throws: #step turns a throw into a rejection
    this.synchronous = false;
    return out;
  }

  #step(): Promise<unknown> {
    const i = this.#i;
    const list = this.#list;
    if (i >= list.length) {
      // the guard that matters: the call reaches its module at most once
      if (this.#dispatched) return Promise.reject(new FingerError('E_INTERNAL', 'an interceptor called next() twice'));
      this.#dispatched = true;
      return this.final();
    }
    this.#i = i + 1;
    try {
      return list[i]!(this, this.next);
    } catch (e) {
      return Promise.reject(e);
    }
  }
}

/** A run whose end is a function. */
class FunctionRun extends InterceptorRun {
  constructor(
    list: readonly Interceptor[],
    call: HubCall,
    private readonly end: () => Promise<unknown>,
  ) {
    super(list, call.envelope, call.resolved, call.direct);
  }

  protected override final(): Promise<unknown> {
    return this.end();
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
  return new FunctionRun(interceptors, call, final).run();
}
