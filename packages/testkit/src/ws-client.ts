import WebSocket from 'ws';

/** A message from the events WebSocket. */
export type EventsMessage = { type: string; [k: string]: any };

/** A real `ws` client of /v1/events that records every message. */
export interface EventsClient {
  readonly socket: WebSocket;
  readonly messages: EventsMessage[];
  send(msg: unknown): void;
  /** Subscribes and waits for the `subscribed` acknowledgement. */
  subscribe(filter: Record<string, unknown>): Promise<void>;
  /** Waits (bounded) until `pred` holds for the recorded messages. */
  waitFor(pred: (messages: EventsMessage[]) => boolean, what?: string, ms?: number): Promise<void>;
  close(): Promise<void>;
}

/** Connects with a bearer token on the upgrade request and waits for `ready`. */
export async function connectEvents(baseUrl: string, token: string, path = '/v1/events'): Promise<EventsClient> {
  const socket = new WebSocket(baseUrl.replace(/^http/, 'ws') + path, {
    headers: { authorization: `Bearer ${token}` },
  });
  const messages: EventsMessage[] = [];
  const listeners = new Set<() => void>();
  socket.on('message', (data) => {
    try {
      messages.push(JSON.parse(String(data)) as EventsMessage);
    } catch {
      messages.push({ type: 'unparseable', raw: String(data) });
    }
    for (const l of listeners) l();
  });
  const waitFor = (pred: (m: EventsMessage[]) => boolean, what = 'messages', ms = 10_000) =>
    new Promise<void>((resolve, reject) => {
      if (pred(messages)) return resolve();
      const check = () => {
        if (pred(messages)) {
          clearTimeout(t);
          listeners.delete(check);
          resolve();
        }
      };
      const t = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(messages.map((m) => m.type))}`));
      }, ms);
      listeners.add(check);
    });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  await waitFor((m) => m.some((x) => x.type === 'ready'), 'ready');
  return {
    socket,
    messages,
    send: (msg) => socket.send(JSON.stringify(msg)),
    async subscribe(filter) {
      const before = messages.filter((m) => m.type === 'subscribed').length;
      socket.send(JSON.stringify({ op: 'subscribe', ...filter }));
      await waitFor((m) => m.filter((x) => x.type === 'subscribed').length > before, 'subscribed');
    },
    waitFor,
    close: () =>
      new Promise<void>((resolve) => {
        if (socket.readyState === WebSocket.CLOSED) return resolve();
        socket.once('close', () => resolve());
        socket.close();
        setTimeout(() => {
          socket.terminate();
          resolve();
        }, 2000).unref();
      }),
  };
}
