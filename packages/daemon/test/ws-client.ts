// A real `ws` client of /v1/events for the daemon's tests: records what arrives (events counted,
// and kept too unless told not to), waits for a condition woken by every message or close.

import WebSocket from 'ws';

export interface WsMsg {
  type: string;
  [k: string]: any;
}

export class WsClient {
  readonly messages: WsMsg[] = [];
  closed: { code: number; reason: string } | undefined;
  /** Events received, kept in `messages` or not. */
  events = 0;
  private waiters: (() => void)[] = [];

  constructor(
    readonly ws: WebSocket,
    private readonly keepEvents = true,
  ) {
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as WsMsg;
      if (m.type === 'event') this.events++;
      if (this.keepEvents || m.type !== 'event') this.messages.push(m);
      this.wake();
    });
    ws.on('close', (code, reason) => {
      this.closed = { code, reason: String(reason) };
      this.wake();
    });
  }

  /** Opens a socket (with the bearer token as a header when given) and resolves once it is open. */
  static open(url: string, token?: string, keepEvents = true): Promise<WsClient> {
    const ws = new WebSocket(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    const c = new WsClient(ws, keepEvents);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(c));
      ws.once('error', reject);
    });
  }

  send(obj: unknown): void {
    this.ws.send(JSON.stringify(obj));
  }

  find(type: string): WsMsg | undefined {
    return this.messages.find((m) => m.type === type);
  }

  count(type: string): number {
    return this.messages.filter((m) => m.type === type).length;
  }

  /** Waits for `fn` to hold, woken by every message or close (bounded by `ms`). */
  async until<T>(fn: () => T | undefined | false, what: string, ms = 20_000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = fn();
      if (v !== undefined && v !== false) return v;
      if (Date.now() > end)
        throw new Error(`timed out waiting for ${what}; got ${JSON.stringify(this.messages.slice(-3))}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  /** Waits for `ready`, subscribes (to every type without `types`) and waits for `subscribed`. */
  async subscribed(types?: string[]): Promise<void> {
    await this.until(() => this.find('ready'), 'ready');
    await this.subscribe(types ? { types } : {});
  }

  /** Sends a subscribe with `filter` and waits for the `subscribed` that answers it. */
  async subscribe(filter: Record<string, unknown>): Promise<void> {
    const n = this.count('subscribed');
    this.send({ op: 'subscribe', ...filter });
    await this.until(() => this.count('subscribed') > n, 'subscribed');
  }

  close(): void {
    this.ws.terminate();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const fn of w) fn();
  }
}
