import type { Msg, NatsConnection, Subscription } from 'nats';

import { FingerError } from '@finger/protocol';

import type { Logger } from '../logger.js';

/** A subscription that remembers whether the NATS server refused it. */
export interface CheckedSubscription {
  readonly sub: Subscription;
  /** E_FORBIDDEN when the server refused the subscription (a permissions violation), else undefined. */
  refused(): FingerError | undefined;
}

/** Options of {@link subscribeChecked}. */
export interface SubscribeCheckedOptions {
  queue?: string;
  logger?: Logger;
  /** Called once if the server refuses the subscription (it is closed then). */
  onRefused?: (e: FingerError) => void;
}

/**
 * Subscribes to `subject` with a callback that hands every message to `onMessage` and turns an
 * error — the server refusing the subscription, which nats.js reports to the callback and then
 * closes it — into E_FORBIDDEN that is logged and kept. NATS answers a refused SUB before the PONG
 * of a later flush, so `await nc.flush()` then `refused()` tells whether the server took the
 * subscription: a node whose NATS user may not subscribe to a subject it needs says so when it
 * starts, instead of never receiving a call, cancel or reply.
 */
export function subscribeChecked(
  nc: NatsConnection,
  subject: string,
  onMessage: (msg: Msg) => void,
  o: SubscribeCheckedOptions = {},
): CheckedSubscription {
  let refused: FingerError | undefined;
  const sub = nc.subscribe(subject, {
    ...(o.queue !== undefined ? { queue: o.queue } : {}),
    callback: (err, msg) => {
      if (err === null) {
        onMessage(msg);
        return;
      }
      if (refused !== undefined) return;
      refused = new FingerError('E_FORBIDDEN', `NATS refused the subscription to "${subject}": ${err.message}`, {
        subject,
        ...(o.queue !== undefined ? { queue: o.queue } : {}),
      });
      o.logger?.error({ subject, error: err.message }, 'NATS subscription refused');
      o.onRefused?.(refused);
    },
  });
  return { sub, refused: () => refused };
}

/** What nats.js says of a permissions violation in a status event, if `s` is one. */
export function permissionRefusal(s: {
  type: string;
  data?: unknown;
}): { operation: string; subject: string } | undefined {
  if (s.type !== 'error' || s.data !== 'PERMISSIONS_VIOLATION') return undefined;
  const ctx = (s as { permissionContext?: { operation?: unknown; subject?: unknown } }).permissionContext;
  return {
    operation: typeof ctx?.operation === 'string' ? ctx.operation : 'unknown',
    subject: typeof ctx?.subject === 'string' ? ctx.subject : 'unknown',
  };
}

/**
 * Logs every publish the server refuses on `nc` (a reply or event dropped for want of a
 * permission) as an error, until the connection closes; refused subscriptions are logged where
 * they are made ({@link subscribeChecked}).
 */
export async function logRefusals(nc: NatsConnection, logger: Logger): Promise<void> {
  for await (const s of nc.status()) {
    const r = permissionRefusal(s);
    if (r?.operation === 'publish') logger.error(r, `NATS refused to publish to "${r.subject}"`);
  }
}
