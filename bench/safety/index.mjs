// safety: what the SafetyMonitor's interceptor (first in the hub chain) costs a dispatched call —
// hub throughput of the echo module at c100 with the safety interceptor off and on, for a human
// caller (lockout check + halt fence only) and for an agent caller (every outcome feeds the
// repeated-failure, error-cascade and denial breakers) over the memory and the file store.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';

import { importBuilt, REPO_ROOT, runBench, suiteOptions } from '../lib/bench-main.mjs';
import { printTable, writeResults } from '../lib/report.mjs';
import { round, runSuite } from '../lib/suite.mjs';

const BENCH = 'safety';
const HUMAN = Object.freeze({ kind: 'human', id: 'bench-human', roles: ['operator'] });
const AGENT = Object.freeze({ kind: 'agent', id: 'bench-agent', roles: ['agent:executor'] });
const PAYLOAD = { text: 'hi' };

runBench(BENCH, async () => {
  const hubPkg = await importBuilt('packages/hub');
  const fw = await importBuilt('packages/firewall');
  const dir = await mkdtemp(join(tmpdir(), 'finger-bench-safety-'));
  const stores = [];
  const startHub = async (store) => {
    const hub = new hubPkg.MessageHub();
    if (store) {
      stores.push(store);
      const monitor = await fw.SafetyMonitor.open({ store, events: hub.events });
      hub.use(fw.createSafetyInterceptor(monitor));
    }
    await hub.registry.loadFile(join(REPO_ROOT, 'modules', 'echo', 'module.json'));
    return hub;
  };
  const hubOff = await startHub(undefined);
  const hubNoop = await startHub(undefined);
  hubNoop.use((_call, next) => next());
  const hubMem = await startHub(new fw.MemorySafetyStore());
  const hubFile = await startHub(await fw.FileSafetyStore.open(join(dir, 'safety.json')));
  const HUBS = [
    ['off', hubOff],
    ['noop', hubNoop],
    ['memory', hubMem],
    ['file', hubFile],
  ];
  const dispatch = (hub, source) => () => hub.request({ target: 'echo', payload: PAYLOAD, source });
  for (const [name, hub] of HUBS) {
    const got = await dispatch(hub, AGENT)();
    if (!isDeepStrictEqual(got, PAYLOAD)) throw new Error(`hub ${name}: unexpected result ${JSON.stringify(got)}`);
  }
  try {
    const opts = suiteOptions();
    process.stderr.write(
      `${BENCH}: ${opts.rounds} rounds of ~${opts.roundMs} ms per case, ${opts.warmupMs} ms warmup\n`,
    );
    const measured = await runSuite(
      [
        { system: 'hub', scenario: 'c100-safety-off', concurrency: 100, fn: dispatch(hubOff, AGENT) },
        { system: 'hub', scenario: 'c100-noop-interceptor', concurrency: 100, fn: dispatch(hubNoop, HUMAN) },
        { system: 'hub', scenario: 'c100-safety-human', concurrency: 100, fn: dispatch(hubMem, HUMAN) },
        { system: 'hub', scenario: 'c100-safety-agent-memory', concurrency: 100, fn: dispatch(hubMem, AGENT) },
        { system: 'hub', scenario: 'c100-safety-agent-file', concurrency: 100, fn: dispatch(hubFile, AGENT) },
      ],
      opts,
    );
    for (const [name, hub] of HUBS) {
      const s = hub.stats();
      if (s.calls_failed !== 0) throw new Error(`hub ${name}: ${s.calls_failed} failed calls`);
    }
    const rows = measured.rows;
    const row = (s) => rows.find((r) => r.scenario === s);
    const off = row('c100-safety-off');
    const ratios = {
      human_over_off: round(row('c100-safety-human').ops_per_s / off.ops_per_s),
      agent_memory_over_off: round(row('c100-safety-agent-memory').ops_per_s / off.ops_per_s),
      agent_file_over_off: round(row('c100-safety-agent-file').ops_per_s / off.ops_per_s),
    };
    const cost = (s) => round(1e6 / row(s).ops_per_s - 1e6 / off.ops_per_s);
    printTable(BENCH, rows);
    process.stdout.write(
      [
        '',
        `hub c100 ÷ safety off: human ${ratios.human_over_off}×, agent (memory store) ${ratios.agent_memory_over_off}×, agent (file store) ${ratios.agent_file_over_off}×`,
        `cost per call (1/on − 1/off): human ${cost('c100-safety-human')} µs, agent memory ${cost('c100-safety-agent-memory')} µs, agent file ${cost('c100-safety-agent-file')} µs`,
        '',
      ].join('\n'),
    );
    const file = writeResults(BENCH, rows, { ratios });
    process.stderr.write(`wrote ${file}\n`);
  } finally {
    for (const [, hub] of HUBS) await hub.close(0);
    for (const s of stores) await s.close();
    await rm(dir, { recursive: true, force: true });
  }
});
