// N WebSocket subscribers of /v1/events in one process (bench/ws-slow): argv url, count, token,
// paused (how many of them stop reading once subscribed: ws.pause() stops reading their TCP
// socket — for good; pausing the socket itself would let ws resume it when its receiver drains —
// so the daemon's send buffers fill as with a frozen console). Counts event frames of the readers,
// those a paused socket still handled (what was in flight when it paused) and closes by code. IPC: {cmd:'reset'}, {cmd:'read'}, {cmd:'close'}. Sends {ready: n} once all are
// subscribed (and the paused ones paused).

import WebSocket from 'ws';

const [url, countArg, token, pausedArg] = process.argv.slice(2);
const count = Number(countArg);
const paused = Number(pausedArg);
const c = { events: 0, paused_events: 0, dropped: 0, closed: 0, close_codes: {} };
const keepAlive = setInterval(() => undefined, 60_000);
let subscribed = 0;
const sockets = [];
for (let i = 0; i < count; i++) {
  const ws = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  const pauses = i < paused;
  sockets.push(ws);
  ws.on('message', (raw) => {
    const s = String(raw);
    if (s.startsWith('{"type":"event"')) {
      if (pauses) c.paused_events++;
      else c.events++;
      return;
    }
    const m = JSON.parse(s);
    if (m.type === 'ready') ws.send(JSON.stringify({ op: 'subscribe' }));
    else if (m.type === 'subscribed') {
      if (pauses) ws.pause();
      if (++subscribed === count) process.send({ ready: count });
    } else if (m.type === 'dropped') c.dropped += m.count;
  });
  ws.on('error', (e) => process.send({ error: String(e) }));
  ws.on('close', (code) => {
    c.closed++;
    c.close_codes[code] = (c.close_codes[code] ?? 0) + 1;
  });
}
process.on('message', (m) => {
  if (m.cmd === 'reset') {
    c.events = c.paused_events = c.dropped = 0;
    process.send({ reset: true });
  } else if (m.cmd === 'read') process.send({ counts: { ...c, close_codes: { ...c.close_codes } } });
  else if (m.cmd === 'close') {
    clearInterval(keepAlive);
    for (const ws of sockets) ws.terminate();
    process.exit(0);
  }
});
