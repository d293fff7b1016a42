// N WebSocket subscribers in one process (bench/ws): argv url, count, token ('-' for none). Each
// answers `ready` with a subscribe to everything, then counts event frames, their bytes, the
// `dropped` counts it is told of and the sockets closed (by close code). The first socket keeps
// the first SAMPLES event frames after each reset (the stream both capacity peers replay). IPC:
// {cmd:'reset'} zeroes the counts, {cmd:'read'} answers them, {cmd:'samples'} answers the kept
// frames, {cmd:'close'} closes every socket and exits. Sends {ready: n} once all are subscribed;
// a socket closed before that (refused: 4429 over a socket limit) is reported as {error}.

import WebSocket from 'ws';

const SAMPLES = 64;
const [url, countArg, token] = process.argv.slice(2);
const count = Number(countArg);
const c = { events: 0, bytes: 0, dropped: 0, other: 0, closed: 0, close_codes: {} };
let samples = [];
// stays up until told to close, whatever the sockets do
const keepAlive = setInterval(() => undefined, 60_000);
let subscribed = 0;
const sockets = [];
for (let i = 0; i < count; i++) {
  const ws = new WebSocket(url, token && token !== '-' ? { headers: { authorization: `Bearer ${token}` } } : {});
  const sampler = i === 0;
  let ready = false;
  sockets.push(ws);
  ws.on('message', (raw) => {
    const s = String(raw);
    if (s.startsWith('{"type":"event"')) {
      c.events++;
      c.bytes += s.length;
      if (sampler && samples.length < SAMPLES) samples.push(s);
      return;
    }
    const m = JSON.parse(s);
    if (m.type === 'ready') ws.send(JSON.stringify({ op: 'subscribe' }));
    else if (m.type === 'subscribed') {
      ready = true;
      if (++subscribed === count) process.send({ ready: count });
    } else if (m.type === 'dropped') c.dropped += m.count;
    else c.other++;
  });
  ws.on('error', (e) => process.send({ error: String(e) }));
  ws.on('close', (code, reason) => {
    c.closed++;
    c.close_codes[code] = (c.close_codes[code] ?? 0) + 1;
    if (!ready) process.send({ error: `socket ${i} closed before it was subscribed: ${code} ${String(reason)}` });
  });
}
process.on('message', (m) => {
  if (m.cmd === 'reset') {
    c.events = c.bytes = c.dropped = c.other = 0;
    samples = [];
    process.send({ reset: true });
  } else if (m.cmd === 'read') process.send({ counts: { ...c, close_codes: { ...c.close_codes } } });
  else if (m.cmd === 'samples') process.send({ samples });
  else if (m.cmd === 'close') {
    clearInterval(keepAlive);
    for (const ws of sockets) ws.terminate();
    process.exit(0);
  }
});
