// A call on its way through the hub's interceptor chain, and how it starts: the interceptors that
// pass it are skipped, the rest run as links of chainStep's chain, ending at the hub's `end`.

import type { Envelope } from '@finger/protocol';
import { FingerError } from '@finger/protocol';

import type { DispatchParams, HubCall, Interceptor, ResolvedTarget } from './hub-types.js';
import { chainStep } from './interceptor-chain.js';
import type { TargetEntry } from './registry/module-registry.js';

/** A call on its way through the interceptor chain: what interceptors see as the HubCall, and what the hub needs at its end. */
export interface DispatchRun extends HubCall {
  readonly envelope: Envelope;
  readonly resolved: ResolvedTarget;
  /** The hub's halt epoch when the call entered the chain. */
  readonly epoch: number;
  /** The hub clock's time when the envelope was made. */
  readonly now: number;
  readonly target: TargetEntry;
  readonly ttl: number;
  readonly params: DispatchParams;
  /** True while {@link startRun} is on the stack: reaching the end then means no interceptor awaited anything. */
  startedSynchronously: boolean;
  next: () => Promise<unknown>;
}

const NOT_STARTED = (): Promise<unknown> => Promise.reject(new FingerError('E_INTERNAL', 'the run has no chain'));

/**
 * Starts `envelope` through the interceptor chain (never throws). The run is an object literal made
 * by a plain function, not a class: when the optimizing compiler does not inline the constructor
 * into the (large) dispatch method — which varied from run to run — `new` cost a generic construct
 * stub and a map transition per field, ≈ 360 instructions per call (callgrind, bench/firewall).
 */
export function startRun(
  list: readonly Interceptor[],
  end: (run: DispatchRun) => Promise<unknown>,
  epoch: number,
  now: number,
  envelope: Envelope,
  target: TargetEntry,
  ttl: number,
  params: DispatchParams,
): Promise<unknown> {
  const run: DispatchRun = {
    envelope,
    resolved: target.resolved,
    direct: params.direct === true,
    epoch,
    now,
    target,
    ttl,
    params,
    startedSynchronously: true,
    next: NOT_STARTED,
  };
  let out: Promise<unknown>;
  try {
    // interceptors that pass the call need no step of the chain: with all passing, none is built
    let at = 0;
    for (; at < list.length; at++) {
      const pass = list[at]!.pass;
      if (pass === undefined || !pass(run)) break;
    }
    if (at === list.length) out = end(run);
    else {
      run.next = chainStep(list, run, end, at);
      out = run.next();
    }
  } catch (e) {
    out = Promise.reject(e);
  }
  run.startedSynchronously = false;
  return out;
}
