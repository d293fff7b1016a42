// What the frame layer alone costs, for builds side by side: one request frame sealed by a daemon
// (cluster and serve signatures, as the caller sends it), opened by another daemon, its reply
// sealed (one signature) and opened — the four steps every request/reply round trip pays besides
// JSON and the network. No NATS; warm (a tight loop), so it prices the work itself, not the cold
// path a lone call pays (cold.mjs). The builds alternate, five rounds each, the median printed.
//
//   node bench/hub-nats/wire-cost.mjs [calls per frame] <repo A> [repo B]
//
// `calls per frame` (default 23, what a c100 caller puts in one frame here; 1 for a lone call)
// sets the body: that many request lines, and as many replies. Each repo needs
// `npx tsc -b packages/hub` (e.g. a `git worktree` of an older commit). Builds before wire FW6
// take no subject in seal/open; both forms are handled.

import { resolve } from 'node:path';

const [perFrameArg = '23', ...rootArgs] = process.argv.slice(2);
const PER_FRAME = Number(perFrameArg);
const ROOTS = (rootArgs.length > 0 ? rootArgs : ['.']).map((r) => resolve(r));
const KEY = 'bench-cluster-key-0123456789abcdef';
const ROUNDS = 5;
const ITER = 20_000;
const SUBJECT = 'finger.bench.call.echo';
const INBOX = '_INBOX.abcdefghijklmnopqrstuv.1';

const id = (i) => `01JABCDEFGHJKMNPQRST${String(i).padStart(6, '0')}`;
const REQUESTS = Array.from(
  { length: PER_FRAME },
  (_, i) => `${i} [2,"${id(i)}","bench","echo.echo",{"text":"hi"},1764403000000,5000,"human","bench"]`,
).join('\n');
const REPLIES = Array.from(
  { length: PER_FRAME },
  (_, i) => `${i} [1,"${id(i)}",{"text":"hi"},"2026-11-29T08:00:00.000Z"]`,
).join('\n');

/** One round trip's frame work with the build at `root`. */
async function roundTrip(root) {
  const wire = await import(`${root}/packages/hub/dist/transport/nats-wire.js`);
  const subjects = wire.FRAME_MAGIC !== 'FW5 ' && wire.FRAME_MAGIC !== 'FW4 ';
  const caller = new wire.WireAuth({ role: 'daemon', node: 'caller-node-1234', cluster_key: KEY });
  const server = new wire.WireAuth({ role: 'daemon', node: 'server-node-5678', cluster_key: KEY });
  const seal = (auth, subject, kind, json, forServe) =>
    subjects ? auth.sealJson(subject, kind, json, forServe) : auth.sealJson(kind, json, forServe);
  const open = (auth, frame, subject) => (subjects ? auth.open(frame, subject) : auth.open(frame));
  return () => {
    const request = open(server, seal(caller, SUBJECT, 'request', REQUESTS, 'echo'), SUBJECT);
    const reply = open(caller, seal(server, INBOX, 'reply', REPLIES, false), INBOX);
    if (!request.ok || !reply.ok) throw new Error(`frame refused: ${request.reason ?? reply.reason}`);
  };
}

const runs = await Promise.all(ROOTS.map(roundTrip));
for (const run of runs) for (let i = 0; i < 5000; i++) run();
const times = ROOTS.map(() => []);
for (let r = 0; r < ROUNDS; r++)
  runs.forEach((run, b) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < ITER; i++) run();
    times[b].push(Number(process.hrtime.bigint() - t0) / ITER / 1000);
  });
ROOTS.forEach((root, b) => {
  const sorted = times[b].sort((x, y) => x - y);
  const median = sorted[Math.floor(ROUNDS / 2)];
  console.log(
    `${root}: ${median.toFixed(2)} µs per round trip of ${PER_FRAME} call(s) (${(median / PER_FRAME).toFixed(3)} µs per call); rounds ${sorted.map((t) => t.toFixed(2)).join(' ')}`,
  );
});
