// finger's side of bench/ws's capacity rows: the daemon's own event path, fed at full speed. A
// LocalEventBus persisting to a FileEventStore in a temp dir (as app.ts wires them) and the
// EventGateway of /v1/events (packages/daemon/dist, as built) on a `ws` WebSocketServer on
// 127.0.0.1 — @fastify/websocket only performs the upgrade and hands the gateway the same `ws`
// socket, so everything an event costs after its emit is the daemon's. Each socket arrives
// authenticated (as with an Authorization header) as an admin principal; the gateway's limits are
// the shipped defaults except the per-token and global socket counts (one principal holds them all)
// and ws.max_slow_bytes, 0: fed flat out, every subscriber falls behind at once and would be cut
// off (4008) within a second, after which it costs nothing — so, like the raw peer, which skips a
// client that is behind but never closes it, finger keeps every client and drops what it cannot
// take (counted), paying for all of them for the whole round.
//
// IPC {cmd:'run', ms, events:[{type, correlation, data}]}: emits those events round-robin, 50 per
// turn of the event loop (as raw-broadcast.mjs sends 50 frames per client per turn), for `ms`;
// answers {sent, dropped, cut, emitted}: frames written or queued to sockets, events dropped for a
// client behind, clients cut off (4008), events emitted. {cmd:'close'} exits.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { WebSocketServer } from 'ws';

import { importBuilt } from '../lib/bench-main.mjs';

const { FileEventStore, LocalEventBus } = await importBuilt('packages/hub');
const { EventGateway } = await importBuilt('packages/daemon');

const dir = await mkdtemp(join(tmpdir(), 'finger-bench-ws-events-'));
const logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => logger };
const store = new FileEventStore({ dir, logger });
const events = new LocalEventBus({ store, logger });
const tokens = { onRevoked: () => () => undefined, authenticate: () => undefined };
const gateway = new EventGateway({
  events,
  tokens,
  logger,
  // config.ts defaults (ws.*), sockets unlimited
  max_buffered_events: 1000,
  max_buffered_bytes: 1 << 20,
  max_slow_bytes: 0,
  max_sockets: 0,
  max_sockets_per_token: 0,
  heartbeat_ms: 30_000,
  auth_timeout_ms: 5000,
});
const principal = { id: 'bench', kind: 'service', roles: ['admin'] };
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
wss.on('connection', (socket) => gateway.handle(socket, { principal, headers: {} }));
wss.on('listening', () => process.send({ url: `ws://127.0.0.1:${wss.address().port}` }));

process.on('message', async (m) => {
  if (m.cmd === 'close') {
    gateway.close();
    await events.close();
    await rm(dir, { recursive: true, force: true });
    wss.close(() => process.exit(0));
    return;
  }
  if (m.cmd !== 'run') return;
  const before = { ...gateway.stats() };
  const emittedBefore = events.stats().emitted;
  const list = m.events;
  const end = Date.now() + m.ms;
  let i = 0;
  const burst = () => {
    for (let k = 0; k < 50; k++) {
      const e = list[i++ % list.length];
      events.emit(e.type, e.correlation, e.data);
    }
    if (Date.now() < end) setImmediate(burst);
    else {
      const s = gateway.stats();
      process.send({
        sent: s.events_sent - before.events_sent,
        dropped: s.events_dropped - before.events_dropped,
        cut: s.slow_closed - before.slow_closed,
        emitted: events.stats().emitted - emittedBefore,
      });
    }
  };
  burst();
});
