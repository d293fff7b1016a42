// The raw peer of bench/ws: a `ws` WebSocketServer on 127.0.0.1 that greets each client with
// `ready`, answers its subscribe, and on IPC {cmd:'run', ms, frame} broadcasts `frame` (a string)
// to every client as fast as it can for `ms`, skipping a client whose socket buffer holds more
// than 1 MiB (counted as dropped, as finger's slow-client rule does). Answers {sent, dropped}.

import { WebSocketServer } from 'ws';

const MAX_BUFFERED = 1024 * 1024;
const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
wss.on('connection', (ws) => {
  ws.send('{"type":"ready"}');
  ws.on('message', () => ws.send('{"type":"subscribed","filter":{}}'));
});
wss.on('listening', () => process.send({ url: `ws://127.0.0.1:${wss.address().port}` }));
process.on('message', (m) => {
  if (m.cmd === 'close') return wss.close(() => process.exit(0));
  if (m.cmd !== 'run') return;
  const end = Date.now() + m.ms;
  let sent = 0;
  let dropped = 0;
  const burst = () => {
    for (let k = 0; k < 50; k++) {
      for (const ws of wss.clients) {
        if (ws.bufferedAmount > MAX_BUFFERED) dropped++;
        else {
          ws.send(m.frame);
          sent++;
        }
      }
    }
    if (Date.now() < end) setImmediate(burst);
    else process.send({ sent, dropped });
  };
  burst();
});
