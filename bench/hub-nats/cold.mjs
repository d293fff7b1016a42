// The lone call's cold path, in one process, for two builds side by side: how long finger's own
// code takes for one NATS call when it runs after an idle wait (as every message of a sequential
// caller does: the process slept in epoll while the call travelled, and caches, TLB and branch
// predictors are cold when it wakes). A fake NATS connection stands in for nats.js, so only
// finger's code is timed; every measured step starts after a 1 ms timer, the two builds
// alternate call by call (same conditions), and medians are printed.
//
//   node bench/hub-nats/cold.mjs serve  <repo A> [repo B]   # request frame → reply published
//   node bench/hub-nats/cold.mjs caller <repo A> [repo B]   # hub.request() → publish, reply frame → settled
//
// Each repo needs `npx tsc -b packages/hub modules/echo` (e.g. a `git worktree` of an older
// commit for an A/B). Run both orders (A B, then B A): the first build listed has a small edge.
// Env: N (cold calls per build, default 1000).

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const [mode = 'serve', ...rootArgs] = process.argv.slice(2);
const ROOTS = (rootArgs.length > 0 ? rootArgs : ['.']).map((r) => resolve(r));
const N = Number(process.env.N ?? 1000);
const KEY = 'bench-cluster-key-0123456789abcdef';
const SOURCE = Object.freeze({ kind: 'human', id: 'bench', roles: ['operator'] });
const PAYLOAD = { text: 'hi' };

/** A NATS connection that keeps subscriptions and hands publishes to `st.onPublish`. */
function fakeConnection(st, subs) {
  return {
    info: { max_payload: 1024 * 1024 },
    isClosed: () => false,
    subscribe(subject, opts) {
      const s = { subject, cb: opts.callback, unsubscribe() {}, drain: async () => {} };
      subs.push(s);
      return s;
    },
    publish(subject, data, opts) {
      st.onPublish?.(subject, data, opts);
    },
    flush: async () => {},
    status: () => ({ async *[Symbol.asyncIterator]() {} }),
    drain: async () => {},
    close: async () => {},
  };
}

async function load(root) {
  return {
    hubPkg: await import(`${root}/packages/hub/dist/index.js`),
    natsPkg: await import(`${root}/packages/hub/dist/nats.js`),
  };
}

/** The serving node of one build: the echo module behind a ClusterNode. */
async function serveStack(root) {
  const { hubPkg, natsPkg } = await load(root);
  const subs = [];
  const st = { onPublish: undefined };
  const hub = new hubPkg.MessageHub({});
  await hub.registry.loadFile(`${root}/modules/echo/module.json`);
  const auth = new natsPkg.WireAuth({ role: 'daemon', node: 'bench-server', cluster_key: KEY });
  st.frame = () => requestFrame(natsPkg);
  const node = new natsPkg.ClusterNode({
    hub,
    connection: fakeConnection(st, subs),
    cluster: 'cold',
    auth,
    importRemote: false,
    bridgeEvents: false,
  });
  await node.start();
  // a node serves its modules once another node's message proved its key: a peer says hello
  const peer = new natsPkg.WireAuth({ role: 'daemon', node: 'cold-peer', cluster_key: KEY });
  const registry = subs.find((s) => s.subject.startsWith('finger.cold.registry'));
  const hello = JSON.stringify({ node: 'cold-peer', seq: Date.now() });
  registry.cb(null, {
    subject: 'finger.cold.registry.hello',
    data: peer.sealJson('finger.cold.registry.hello', 'hello', hello),
    headers: undefined,
  });
  for (let i = 0; i < 100 && !subs.some((s) => s.subject === 'finger.cold.call.echo'); i++)
    await new Promise((r) => setTimeout(r, 10));
  const sub = subs.find((s) => s.subject === 'finger.cold.call.echo');
  st.once = (f) =>
    new Promise((done) => {
      st.onPublish = () => {
        st.onPublish = undefined;
        done(Number(process.hrtime.bigint() - t0) / 1e3);
      };
      const t0 = process.hrtime.bigint();
      sub.cb(null, { subject: sub.subject, reply: f.reply, data: f.data, headers: undefined });
    });
  return st;
}

// Request frames are made before the timed calls, each build's with its own WireAuth (a second
// instance, as the caller's), so making them warms nothing of the measured call.
let seq = 0;
function requestFrame(natsPkg) {
  const auth = new natsPkg.WireAuth({ role: 'daemon', node: 'prof-caller', cluster_key: KEY });
  const now = Date.now();
  const id = `01JD${String(now).padStart(18, '0')}${String(seq % 10000).padStart(4, '0')}`;
  const env = [
    2,
    id,
    0,
    0,
    '',
    '',
    ['human', 'bench', ['operator']],
    'echo.echo',
    true,
    new Date(now).toISOString(),
    now + 600_000,
    [],
    0,
    [0, 5000, null],
    PAYLOAD,
  ];
  const token = (++seq).toString(36);
  const data = auth.sealJson('finger.cold.call.echo', 'request', `${token} ${JSON.stringify(env)}`);
  return { data, reply: `_INBOX.cold.${token}` };
}

/** The calling daemon of one build: echo imported as a `{type: "nats"}` module. */
async function callerStack(root) {
  const { hubPkg, natsPkg } = await load(root);
  const subs = [];
  const st = { onPublish: undefined };
  const rs = natsPkg.runtimeSwitch(hubPkg.createRuntime);
  const hub = new hubPkg.MessageHub({ createRuntime: rs.create });
  const node = new natsPkg.ClusterNode({
    hub,
    connection: fakeConnection(st, subs),
    cluster: 'cold',
    auth: new natsPkg.WireAuth({ role: 'daemon', node: 'prof-caller', cluster_key: KEY }),
    importRemote: true,
    bridgeEvents: false,
  });
  rs.bind(node);
  await node.start();
  const m = JSON.parse(readFileSync(`${root}/modules/echo/module.json`, 'utf8'));
  const health = { interval_ms: 1e6, timeout_ms: 1e6 };
  await hub.registry.register({ ...m, runtime: { type: 'nats' }, health }, { baseDir: '.' });
  const server = new natsPkg.WireAuth({ role: 'daemon', node: 'bench-server', cluster_key: KEY });
  let n = 0;
  /** One call; with `idle`, an idle wait before the request and before the reply (both timed cold). */
  st.once = async (idle) => {
    let pub;
    st.onPublish = (_subject, _data, opts) => {
      pub = { t: process.hrtime.bigint(), reply: opts.reply };
      st.onPublish = undefined;
    };
    if (idle) await idle();
    const t0 = process.hrtime.bigint();
    const p = hub.request({ target: 'echo', payload: PAYLOAD, source: SOURCE });
    const sent = Number(pub.t - t0) / 1e3;
    const token = pub.reply.slice(pub.reply.lastIndexOf('.') + 1);
    const id = `01JD0000000000000000000${String(n++ % 1000).padStart(3, '0')}`;
    const reply = JSON.stringify([2, id, ['module', 'echo', []], new Date().toISOString(), PAYLOAD, 0]);
    const frame = server.sealJson(pub.reply, 'reply', `${token} ${reply}`, false);
    if (idle) await idle();
    const inbox = subs.find((s) => s.subject.startsWith('_INBOX.'));
    const t1 = process.hrtime.bigint();
    inbox.cb(null, { subject: pub.reply, data: frame, headers: undefined });
    await p;
    return [sent, Number(process.hrtime.bigint() - t1) / 1e3];
  };
  return st;
}

const idle = () => new Promise((r) => setTimeout(r, 1));
const median = (v) => [...v].sort((x, y) => x - y)[v.length >> 1];

if (mode === 'serve') {
  const stacks = [];
  for (const r of ROOTS) stacks.push(await serveStack(r));
  for (let i = 0; i < 20_000; i++) for (const st of stacks) await st.once(st.frame());
  const frames = stacks.map((st) => Array.from({ length: N }, () => st.frame()));
  const cold = stacks.map(() => []);
  for (let i = 0; i < N; i++) {
    for (let k = 0; k < stacks.length; k++) {
      const j = (i + k) % stacks.length;
      const f = frames[j][i];
      await idle();
      cold[j].push(await stacks[j].once(f));
    }
  }
  ROOTS.forEach((r, k) =>
    console.log(`serve ${r}: request frame → reply published, cold p50 ${median(cold[k]).toFixed(1)} µs`),
  );
} else if (mode === 'caller') {
  const stacks = [];
  for (const r of ROOTS) stacks.push(await callerStack(r));
  for (let i = 0; i < 20_000; i++) for (const st of stacks) await st.once();
  const sent = stacks.map(() => []);
  const settled = stacks.map(() => []);
  for (let i = 0; i < N; i++) {
    for (let k = 0; k < stacks.length; k++) {
      const j = (i + k) % stacks.length;
      const [a, b] = await stacks[j].once(idle);
      sent[j].push(a);
      settled[j].push(b);
    }
  }
  ROOTS.forEach((r, k) => {
    const a = median(sent[k]);
    const b = median(settled[k]);
    console.log(
      `caller ${r}: hub.request → publish ${a.toFixed(1)} µs, reply frame → settled ${b.toFixed(1)} µs, cold p50 sum ${(a + b).toFixed(1)} µs`,
    );
  });
} else {
  throw new Error(`unknown mode "${mode}" (serve or caller)`);
}
process.exit(0);
