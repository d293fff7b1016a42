// human-day: the scripted working day of issue 23 item 6 (test/fixtures/human-day/day.json) run
// against a real daemon as in test/e2e/human-day.test.ts, and the same day under the model of
// Claude Code's permission rules (two variants). Prints the table — calls, safe, risky, questions,
// questions per safe call, risky calls run unseen, per half and for the day — and writes
// bench/results/human-day.json. See README.md in this folder.

import { importBuilt, runBench } from '../lib/bench-main.mjs';
import { writeResults } from '../lib/report.mjs';

const BENCH = 'human-day';

runBench(BENCH, async () => {
  const day = await importBuilt('packages/testkit', 'human-day/index.js');
  await importBuilt('packages/daemon');
  const run = await day.runHumanDay();
  // the same day without the workspace-write profile: what standing approvals alone do
  const off = await day.runHumanDay({ sandbox: 'off' });
  const table = [...day.dayTable(run), { ...day.fingerFigures(off), system: 'finger, sandbox off' }];
  const rows = day.dayRows(table);
  process.stdout.write(
    `\n== ${BENCH} (node ${process.version}) ==\n${day.formatDayTable(rows)}\n` +
      `workspace-write profile: ${run.workspace_write ? 'available' : 'NOT available (moderate commands held)'}; ` +
      `day run in ${(run.elapsed_ms / 1000).toFixed(1)} s\n`,
  );
  const describe = (i) => {
    const c = run.calls[i];
    return `#${i} ${c.tool} ${String(c.args.command ?? c.args.path)}`;
  };
  for (const s of table) {
    if (s.day.unseen.length > 0)
      process.stdout.write(`${s.system}: risky and unseen: ${s.day.unseen.map(describe).join('; ')}\n`);
  }
  process.stdout.write('finger asked about:\n');
  for (const p of run.prompts) {
    process.stdout.write(`  ${p.level.padEnd(7)} ${p.decision.padEnd(7)} ${describe(p.index)} — ${p.reason}\n`);
  }
  // the shape every bench shares: {system, scenario, ops_per_s, p50_us, p99_us} plus this bench's columns
  const shared = rows.map(({ system, part, ...rest }) => ({
    system,
    scenario: part,
    ops_per_s: 0,
    p50_us: null,
    p99_us: null,
    ...rest,
  }));
  const file = writeResults(BENCH, shared, {
    notes:
      'ops_per_s/p50_us/p99_us are 0/null: this bench counts questions, not speed. prompts/safe = every question per safe call; ' +
      'safe_prompts/safe = questions about safe calls per safe call (the done-when target: ≤ 0.05 in the 2nd half).',
    workspace_write: run.workspace_write,
    unlocks: run.unlocks,
    elapsed_ms: run.elapsed_ms,
    detail: table,
    prompts: run.prompts.map((p) => ({ ...p, call: describe(p.index) })),
    standing_approvals: run.standing,
    sandbox_off: {
      prompts: off.prompts.map((p) => ({ ...p, call: describe(p.index) })),
      standing_approvals: off.standing,
      unlocks: off.unlocks,
    },
  });
  process.stderr.write(`${BENCH}: results in ${file}\n`);
});
