// The raw peer of bench/ws: a `ws` WebSocketServer on 127.0.0.1 that greets each client with
// `ready`, answers its subscribe, and on IPC {cmd:'run', ms, frames} broadcasts `frames` (strings,
// round-robin) to every client as fast as it can for `ms`: 50 frames per client per turn of the
// event loop, each frame encoded once and sent as the same Buffer to every client (ws's own
// broadcast example), skipping a client whose socket buffer holds more than 1 MiB (counted as
// dropped, as finger's gateway drops for a client behind). Answers {sent, dropped}.

import { WebSocketServer } from 'ws';

const MAX_BUFFERED = 1024 * 1024;
const TEXT = { binary: false };
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
wss.on('connection', (ws) => {
  ws.send('{"type":"ready"}');
  ws.on('message', () => ws.send('{"type":"subscribed","filter":{}}'));
});
wss.on('listening', () => process.send({ url: `ws://127.0.0.1:${wss.address().port}` }));
process.on('message', (m) => {
  if (m.cmd === 'close') return wss.close(() => process.exit(0));
  if (m.cmd !== 'run') return;
  const frames = m.frames.map((f) => Buffer.from(f));
  const end = Date.now() + m.ms;
  let i = 0;
  let sent = 0;
  let dropped = 0;
  const burst = () => {
    for (let k = 0; k < 50; k++) {
      const frame = frames[i++ % frames.length];
      for (const ws of wss.clients) {
        if (ws.bufferedAmount > MAX_BUFFERED) dropped++;
        else {
          ws.send(frame, TEXT);
          sent++;
        }
      }
    }
    if (Date.now() < end) setImmediate(burst);
    else process.send({ sent, dropped });
  };
  burst();
});
