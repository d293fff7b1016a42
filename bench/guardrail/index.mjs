// guardrail: the JSON guardrail's throughput, single core — runGuardrail() over clean router
// answers, and over a mix of broken ones (fences and prose, think blocks, trailing commas, Python
// literals, comments, truncated streams, nested JSON strings, wrappers, "85%" confidence, casing,
// two decisions, duplicate keys, template echo); parseLlmDecision() over clean executor answers;
// jsonrepair alone over the broken mix, for scale. One caller, sequential. See README.md.

import { createRequire } from 'node:module';
import { join } from 'node:path';

import { importBuilt, REPO_ROOT, runBench, suiteOptions } from '../lib/bench-main.mjs';
import { printTable, writeResults } from '../lib/report.mjs';
import { runSuite } from '../lib/suite.mjs';

const BENCH = 'guardrail';
/** Issue 6: ≥ 20,000 decisions/s on clean input, ≥ 5,000/s on broken input, single core. */
const TARGET = { clean_per_s: 20_000, broken_per_s: 5_000 };

const REGISTRY = Object.freeze({
  agents: ['planner', 'researcher'],
  modules: [
    'echo',
    'echo.echo',
    'fs',
    'fs.read',
    'fs.write',
    'fs.delete',
    'shell.exec',
    'web.fetch',
    'scratchpad.update',
  ],
  high_risk: ['fs', 'fs.delete', 'shell.exec'],
});

const d = (o) => ({
  decision: 'dispatch_module',
  target: 'echo',
  confidence: 0.9,
  reason: 'the user asked to echo a greeting back',
  payload: { text: 'hello there' },
  requires_human: false,
  ...o,
});

/** Clean answers as a well-behaved model writes them. */
const CLEAN = [
  d({}),
  d({ target: 'fs.read', payload: { path: 'notes/todo.md' }, reason: 'read the todo list' }),
  d({ decision: 'dispatch_agent', target: 'planner', payload: { goal: 'plan the release' }, confidence: 0.8 }),
  d({ decision: 'direct_reply', target: null, payload: { text: 'Hi! How can I help?' }, confidence: 1 }),
  d({ target: 'shell.exec', payload: { command: 'git status' }, requires_human: true, confidence: 0.75 }),
  d({ target: 'web.fetch', payload: { url: 'https://example.com/changelog' }, reason: 'fetch the changelog page' }),
  d({ decision: 'ask_human', target: null, confidence: 0.4, reason: 'ambiguous: which file?', requires_human: true }),
  d({ target: 'scratchpad.update', payload: { key: 'plan', value: { steps: ['a', 'b', 'c'] } } }),
].map((o) => JSON.stringify(o));

const T = CLEAN[0];
const PY =
  "{'decision': 'dispatch_module', 'target': 'fs.read', 'confidence': 0.85, 'reason': 'read it', 'payload': {'path': 'a.md', 'follow': True, 'limit': None}, 'requires_human': False}";

/** Broken answers, each with the outcome the guardrail must reach (checked before measuring). */
const BROKEN = [
  [`Sure! Here is the routing decision:\n\n\`\`\`json\n${T}\n\`\`\`\n\nLet me know if you need anything else.`, 'ok'],
  [`<think>The user greets echo, so dispatch_module to echo with high confidence.</think>\n${T}`, 'ok'],
  [T.replace('"requires_human":false}', '"requires_human":false,}').replace('"hello there"}', '"hello there",}'), 'ok'],
  [PY, 'ok'],
  [
    `{\n  // route to echo\n  "decision": "dispatch_module", /* module */ "target": "echo",\n  "confidence": 0.9, "reason": "greeting", "payload": {"text": "hi"}, "requires_human": false\n}`,
    'ok',
  ],
  [
    '{"decision":"dispatch_module","target":"echo","confidence":0.9,"payload":{"text":"hi"},"requires_human":false,"reason":"the user asked to ec',
    'ok',
  ],
  ['{"decision":"dispatch_module","target":"echo","confidence":0.9', 'ask_human'],
  [JSON.stringify(T), 'ok'],
  [JSON.stringify({ id: 'call_1', name: 'route', arguments: T }), 'ok'],
  [JSON.stringify({ routing_decision: JSON.parse(T) }), 'ok'],
  [
    '{"decision":"Dispatch-Module","target":"ECHO","confidence":"85%","reason":"greet","payload":"{\\"text\\":\\"hi\\"}","requires_human":"false"}',
    'ok',
  ],
  [`Option A: ${T}\nOption B: ${CLEAN[2]}`, 'ask_human'],
  [
    '{"decision":"reject","target":"echo","confidence":0.9,"reason":"r","payload":{},"requires_human":false,"decision":"dispatch_module"}',
    'ask_human',
  ],
  [
    `You asked for {"decision": "direct_reply|dispatch_agent|dispatch_module|ask_human|reject", "target": "module-or-agent-id", "confidence": 0.0, "reason": "string", "payload": {}, "requires_human": false}\nAnswer: ${T}`,
    'ok',
  ],
  [`<json>${T}</json>`, 'ok'],
  [
    `[${d({ target: 'fs.delete', payload: { path: 'tmp/x' } }) && JSON.stringify(d({ target: 'fs.delete', payload: { path: 'tmp/x' } }))}]`,
    'ok',
  ],
];

const STEP = JSON.stringify({
  thought: 'write the summary to notes',
  tool_calls: [
    { tool: 'fs.write', args: { path: 'notes/summary.md', content: '# Summary\n- done' }, intent: 'save the summary' },
  ],
  confidence: 0.82,
  human_required: false,
  done: false,
  summary: '',
});

/** Decisions per CPU-second of `fn` in a warmed synchronous loop (no forced GC in between). */
function steady(fn, n = 20_000) {
  for (let i = 0; i < n; i++) fn();
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) fn();
  const c = process.cpuUsage(c0);
  return Math.round(n / ((c.user + c.system) / 1e6));
}

runBench(BENCH, async () => {
  const agents = await importBuilt('packages/agents');
  const { runGuardrail, parseLlmDecision } = agents;
  const require = createRequire(join(REPO_ROOT, 'packages', 'agents', 'package.json'));
  const { jsonrepair } = await import(require.resolve('jsonrepair'));

  // sanity: each input reaches the outcome it stands for
  for (const t of CLEAN) {
    const out = runGuardrail(t, REGISTRY);
    const want = JSON.parse(t).decision === 'ask_human' ? 'ask_human' : 'ok';
    if (out.outcome !== want || out.repairs.length > 0)
      throw new Error(`clean input not passed through: ${t} → ${JSON.stringify(out)}`);
  }
  for (const [t, want] of BROKEN) {
    const out = runGuardrail(t, REGISTRY);
    if (out.outcome !== want) throw new Error(`broken input: want ${want}, got ${JSON.stringify(out)} for ${t}`);
    if (want === 'ok' && out.repairs.length === 0) throw new Error(`broken input needed no repair: ${t}`);
  }
  if (parseLlmDecision(STEP).outcome !== 'ok') throw new Error('executor step not ok');
  const repairable = BROKEN.map(([t]) => t).filter((t) => {
    try {
      jsonrepair(t);
      return true;
    } catch {
      return false;
    }
  });

  let i = 0;
  let j = 0;
  let k = 0;
  const clean = () => runGuardrail(CLEAN[i++ % CLEAN.length], REGISTRY);
  const broken = () => runGuardrail(BROKEN[j++ % BROKEN.length][0], REGISTRY);
  const llm = () => parseLlmDecision(STEP);
  const repairOnly = () => jsonrepair(repairable[k++ % repairable.length]);

  const opts = suiteOptions();
  process.stderr.write(`${BENCH}: ${opts.rounds} rounds of ~${opts.roundMs} ms per case, ${opts.warmupMs} ms warmup\n`);
  const measured = await runSuite(
    [
      { system: 'finger', scenario: 'router-clean', concurrency: 1, fn: clean },
      { system: 'finger', scenario: 'router-broken-mix', concurrency: 1, fn: broken },
      { system: 'finger', scenario: 'llm-decision-clean', concurrency: 1, fn: llm },
      { system: 'jsonrepair', scenario: 'repair-only-broken-mix', concurrency: 1, fn: repairOnly },
    ],
    opts,
  );
  const cpuOf = new Map(measured.rows.map((r, x) => [`${r.system}/${r.scenario}`, measured.opsPerCpuS[x]]));
  const rows = measured.rows;
  const steady_state = { clean_per_cpu_s: steady(clean), broken_per_cpu_s: steady(broken) };
  const target = {
    rule: `decisions per CPU-second of one core (the suite's ops/cpu-s): router-clean ≥ ${TARGET.clean_per_s}, router-broken-mix ≥ ${TARGET.broken_per_s}`,
    clean_per_cpu_s: cpuOf.get('finger/router-clean'),
    broken_per_cpu_s: cpuOf.get('finger/router-broken-mix'),
  };
  target.met = target.clean_per_cpu_s >= TARGET.clean_per_s && target.broken_per_cpu_s >= TARGET.broken_per_s;

  printTable(
    BENCH,
    rows.map((r) => ({ ...r, ops_per_cpu_s: cpuOf.get(`${r.system}/${r.scenario}`) })),
  );
  process.stdout.write(
    [
      '',
      `steady state (sync loop, warmed, no forced GC): clean ${steady_state.clean_per_cpu_s.toLocaleString('en-US')}, broken ${steady_state.broken_per_cpu_s.toLocaleString('en-US')} decisions per CPU-second`,
      `target (${target.rule}): ${target.met ? 'yes' : 'NO'}`,
      '',
    ].join('\n'),
  );
  const file = writeResults(BENCH, rows, {
    target,
    steady_state,
    inputs: { clean: CLEAN.length, broken: BROKEN.map(([t, want]) => ({ chars: t.length, want })) },
    options: opts,
    notes: [
      'router-clean: runGuardrail over 8 clean answers in turn (dispatches, a direct reply, an ask_human), registry of 2 agents and 9 module/tool ids.',
      'router-broken-mix: 16 broken answers in turn — fence with prose, think block, trailing commas, Python literals, comments, truncated in the reason (ok) and at a number (ask_human), nested JSON string, OpenAI arguments string, wrapper key, casing/"85%"/string booleans/payload string, two decisions, duplicate keys, template echo, <json> tag, one-object array.',
      'llm-decision-clean: parseLlmDecision over one executor step with one tool call.',
      'jsonrepair repair-only: jsonrepair() alone over the broken answers it accepts, for scale (it throws on prose around JSON).',
      'Each op is sequential (one caller, one core); latency includes one clock read and one await.',
      'The target reads ops per CPU-second (one core): on this shared 2-vCPU machine wall-clock ops/s mostly measures the scheduler.',
      'The suite forces a full GC before every case of every round; V8 then needs ~10,000 broken decisions to get back to speed (14k → 90k per CPU-second over the first 15,000), so the broken-mix row reports that cold start; steady_state is a warmed synchronous loop of 20,000 decisions without forced GC.',
    ],
    detail: measured.detail,
  });
  process.stdout.write(`results: ${file}\n`);
});
