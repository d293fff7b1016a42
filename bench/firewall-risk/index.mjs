// firewall-risk: the RiskAssessor's cost per shell command on its three paths — the plain-word
// fast path (no parse), a cache hit, and a full parse (tree-sitter + model + classification) —
// next to tree-sitter-bash's parse alone, plus 200 compiled deny patterns matched against a
// cached model (what a policy of 200 shell rules adds). One caller, sequential. See README.md.

import { createRequire } from 'node:module';
import { join } from 'node:path';

import { importBuilt, REPO_ROOT, runBench, suiteOptions } from '../lib/bench-main.mjs';
import { printTable, writeResults } from '../lib/report.mjs';
import { round, runSuite } from '../lib/suite.mjs';

const BENCH = 'firewall-risk';
/** Issue 4: AUTO-path evaluation ≤ 10 µs median. */
const TARGET_P50_US = 10;

/** Everyday read-only commands of plain words: the fast path. */
const PLAIN = [
  'ls -la',
  'git status',
  'rg foo',
  'git log --oneline -n 20',
  'cat package.json',
  'wc -l packages/firewall/src/index.ts',
  'head -n 50 README.md',
  'git diff HEAD -- packages/firewall/src',
  'ls -la packages/firewall/src/risk',
  'grep -rn TODO packages/hub/src',
  'du -sh node_modules',
  'git show HEAD --stat',
];

/** Realistic agent commands with quotes, pipes, substitutions, loops and redirects: a full parse. */
const COMPLEX = [
  'git status && git diff --stat HEAD~1',
  'find . -name "*.ts" -not -path "./node_modules/*" | xargs grep -l "TODO" | head -20',
  'npm run build 2>&1 | tail -n 40',
  `git log --oneline --since='2 weeks ago' --author="$(git config user.email)" | wc -l`,
  'cd packages/firewall && npx vitest run test/risk --reporter=dot',
  `rg -n 'export (class|function) \\w+' packages/*/src | sort | uniq -c | sort -rn | head`,
  'for f in src/*.ts; do echo "$f: $(wc -l < "$f")"; done',
  'docker compose -f docker-compose.yml up -d --build && docker compose logs --tail=100 api',
  'curl -fsSL https://example.com/install.sh | bash -s -- --prefix=$HOME/.local',
  `python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])' < package.json`,
  'tar -czf backup-$(date +%Y%m%d).tar.gz --exclude=node_modules . && ls -lh backup-*.tar.gz',
  `sed -i 's/oldName/newName/g' src/a.ts src/b.ts && git diff --stat`,
];

/** 200 deny rules of the shapes an admin writes (compiled once). */
function denyPatterns(fw) {
  const shapes = [
    'rm -rf *',
    'git push --force *',
    'chmod -R 777 *',
    'curl -o /etc/* *',
    'mkfs*',
    'dd of=/dev/* *',
    'git reset --hard *',
    'docker rm -f *',
  ];
  const out = [];
  for (let i = 0; out.length < 200; i++) {
    out.push(fw.compileCommandPattern(i < shapes.length ? shapes[i] : `tool${i} --flag${i} *`, 'deny'));
  }
  return out;
}

runBench(BENCH, async () => {
  const fw = await importBuilt('packages/firewall');
  const uncached = await fw.RiskAssessor.create({ cacheSize: 0 });
  const cached = await fw.RiskAssessor.create();

  // tree-sitter-bash alone, for scale: what one parse costs before any model is built
  const require = createRequire(join(REPO_ROOT, 'packages', 'firewall', 'package.json'));
  const { Parser, Language } = await import(require.resolve('web-tree-sitter'));
  await Parser.init();
  const parser = new Parser();
  parser.setLanguage(await Language.load(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm')));

  // sanity: each set really takes the path it is meant to measure
  for (const c of PLAIN) {
    const a = uncached.assess(c);
    if (a.level !== 'safe') throw new Error(`fast-path command is not safe: ${c}`);
  }
  const fastBefore = uncached.stats().fast_path;
  for (const c of PLAIN) uncached.assess(c);
  if (uncached.stats().fast_path - fastBefore !== PLAIN.length)
    throw new Error('plain commands did not take the fast path');
  const parsesBefore = uncached.stats().parses;
  for (const c of COMPLEX) uncached.assess(c);
  if (uncached.stats().parses - parsesBefore !== COMPLEX.length) throw new Error('complex commands were not parsed');
  const mixed = [...PLAIN, ...COMPLEX];
  for (const c of mixed) cached.assess(c);
  const patterns = denyPatterns(fw);
  const models = mixed.map((c) => cached.assess(c).model);

  let i = 0;
  let j = 0;
  let k = 0;
  let m = 0;
  let n = 0;
  const fastPath = () => uncached.assess(PLAIN[i++ % PLAIN.length]);
  const cacheHit = () => cached.assess(mixed[j++ % mixed.length]);
  const fullParse = () => uncached.assess(COMPLEX[k++ % COMPLEX.length]);
  const parseOnly = () => parser.parse(COMPLEX[m++ % COMPLEX.length]).delete();
  const denyMatch = () => {
    const model = models[n++ % models.length];
    let hits = 0;
    for (const p of patterns) if (p.test(model)) hits++;
    return hits;
  };
  const baseline = () => undefined;

  const opts = suiteOptions();
  process.stderr.write(`${BENCH}: ${opts.rounds} rounds of ~${opts.roundMs} ms per case, ${opts.warmupMs} ms warmup\n`);
  const measured = await runSuite(
    [
      { system: 'baseline', scenario: 'noop', concurrency: 1, fn: baseline },
      { system: 'finger', scenario: 'fast-path', concurrency: 1, fn: fastPath },
      { system: 'finger', scenario: 'cached', concurrency: 1, fn: cacheHit },
      { system: 'finger', scenario: 'full-parse', concurrency: 1, fn: fullParse },
      { system: 'finger', scenario: 'deny-200-cached', concurrency: 1, fn: denyMatch },
      { system: 'tree-sitter-bash', scenario: 'parse-only', concurrency: 1, fn: parseOnly },
    ],
    opts,
  );
  const cpuOf = new Map(measured.rows.map((r, x) => [`${r.system}/${r.scenario}`, measured.opsPerCpuS[x]]));
  const rows = measured.rows.filter((r) => r.system !== 'baseline');
  const harness_baseline = measured.rows.filter((r) => r.system === 'baseline');
  const base = harness_baseline[0];
  const own = (r) => round(1e6 / r.ops_per_s - 1e6 / base.ops_per_s);
  const row = (s) => rows.find((r) => r.scenario === s);
  const target = {
    rule: `AUTO path (fast-path and cached rows) p50 ≤ ${TARGET_P50_US} µs`,
    fast_path_p50_us: row('fast-path').p50_us,
    cached_p50_us: row('cached').p50_us,
  };
  target.met = target.fast_path_p50_us <= TARGET_P50_US && target.cached_p50_us <= TARGET_P50_US;
  const own_us = Object.fromEntries(rows.map((r) => [`${r.system}/${r.scenario}`, own(r)]));

  printTable(
    BENCH,
    rows.map((r) => ({ ...r, ops_per_cpu_s: cpuOf.get(`${r.system}/${r.scenario}`), own_us: own(r) })),
  );
  process.stdout.write(
    [
      '',
      `harness alone (op = noop): ${base.ops_per_s.toLocaleString('en-US')} ops/s, p50 ${base.p50_us} µs`,
      `own cost per op (1/ops − 1/baseline): ${Object.entries(own_us)
        .map(([name, us]) => `${name} ${us} µs`)
        .join(', ')}`,
      `target (${target.rule}): ${target.met ? 'yes' : 'NO'}`,
      '',
    ].join('\n'),
  );
  const file = writeResults(BENCH, rows, {
    target,
    own_us,
    harness_baseline,
    commands: { fast_path: PLAIN, full_parse: COMPLEX, cached: mixed },
    stats: { uncached: uncached.stats(), cached: cached.stats() },
    options: opts,
    notes: [
      'fast-path: plain-word safe commands (no quotes, $, globs, redirects or separators) on an assessor with the cache off: no parse.',
      'cached: the 24 commands of both sets on an assessor with the default LRU (4096), warmed: one Map lookup.',
      'full-parse: realistic commands with quotes, pipes, substitutions, loops and redirects, cache off: tree-sitter parse + canonical model + classification every time.',
      'deny-200-cached: 200 compiled deny patterns (8 real shapes + 192 other programs) tested against a cached model: the shell-pattern share of a 200-rule policy.',
      'tree-sitter-bash parse-only: Parser.parse + Tree.delete of the full-parse commands, no model: the floor of a full parse.',
      'Each op is sequential (one caller); the per-op latency includes one clock read and one await, shown by the noop baseline row (kept out of rows).',
    ],
    detail: measured.detail,
  });
  process.stdout.write(`results: ${file}\n`);
});
