// firewall-audit: AuditLog.append throughput and latency — every append written and fdatasync'd
// before it resolves — for one caller (c1: one fsync per append) and 100 concurrent callers
// (c100: group commit, one write+fsync per batch). A bare write+fdatasync of a line of the same
// size per op (raw-write-fsync c1) shows what the disk alone costs. See README.md in this folder.

import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { importBuilt, runBench, suiteOptions } from '../lib/bench-main.mjs';
import { printTable, writeResults } from '../lib/report.mjs';
import { round, runSuite } from '../lib/suite.mjs';

const BENCH = 'firewall-audit';
const ACTOR = Object.freeze({ kind: 'agent', id: 'executor-1' });
const COMMAND = 'git log --oneline --since="2 weeks ago" -- packages/firewall/src | head -n 50 && rg -n "TODO" src';

/** A `tool.call` entry as the firewall writes it: the verdict as-is, the arguments digested. */
function callRecord(n) {
  return {
    type: 'tool.call',
    actor: ACTOR,
    request_id: `req-${n}`,
    correlation_id: 'corr-bench',
    tool: 'shell.exec',
    args: { command: COMMAND, cwd: '/home/user/project', timeout_ms: 30_000 },
    verdict: {
      decision_id: `dec-${n}`,
      level: 'AUTO',
      action: 'allow',
      layer: 'permission',
      matched_rules: ['user:allow-git-read'],
      reasons: ['risk: safe (read-only commands: git log, head, rg)'],
    },
    decision: 'allow',
  };
}

runBench(BENCH, async () => {
  const fw = await importBuilt('packages/firewall');
  const dirs = [];
  const tmp = async (label) => {
    const d = await mkdtemp(join(tmpdir(), `finger-bench-audit-${label}-`));
    dirs.push(d);
    return d;
  };
  const logC1 = await fw.AuditLog.open({ dir: await tmp('c1') });
  const logC100 = await fw.AuditLog.open({ dir: await tmp('c100') });
  // the daemon's configuration: the head also kept in state/audit-head.json (audit-head.ts)
  const withHead = async (label) => {
    const root = await tmp(label);
    return fw.AuditLog.open({
      dir: join(root, 'audit'),
      heads: [new fw.FileAuditHeadStore(join(root, 'state', 'audit-head.json'))],
    });
  };
  const headC1 = await withHead('head-c1');
  const headC100 = await withHead('head-c100');
  const rawFile = await open(join(await tmp('raw'), 'raw.jsonl'), 'a', 0o600);

  try {
    let n = 0;
    const sample = await logC1.append(callRecord(n++));
    const rawLine = Buffer.from(`${JSON.stringify(sample)}\n`);
    const appendC1 = () => logC1.append(callRecord(n++));
    const appendC100 = () => logC100.append(callRecord(n++));
    const appendHeadC1 = () => headC1.append(callRecord(n++));
    const appendHeadC100 = () => headC100.append(callRecord(n++));
    const rawAppend = async () => {
      await rawFile.write(rawLine);
      await rawFile.datasync();
    };

    const opts = suiteOptions();
    process.stderr.write(
      `${BENCH}: ${opts.rounds} rounds of ~${opts.roundMs} ms per case, ${opts.warmupMs} ms warmup\n`,
    );
    const measured = await runSuite(
      [
        { system: 'finger', scenario: 'c1', concurrency: 1, fn: appendC1 },
        { system: 'finger', scenario: 'c100', concurrency: 100, fn: appendC100 },
        { system: 'finger+head', scenario: 'c1', concurrency: 1, fn: appendHeadC1 },
        { system: 'finger+head', scenario: 'c100', concurrency: 100, fn: appendHeadC100 },
        { system: 'raw-write-fsync', scenario: 'c1', concurrency: 1, fn: rawAppend },
      ],
      opts,
    );

    const perLog = { c1: logC1, c100: logC100, 'head-c1': headC1, 'head-c100': headC100 };
    const audit_stats = {};
    const fsyncs_per_1000_appends = {};
    for (const [scenario, log] of Object.entries(perLog)) {
      const s = log.stats();
      const verify = await log.verify();
      if (!verify.ok || s.failed !== 0) {
        throw new Error(`finger ${scenario}: ${s.failed} failed appends, verify ${JSON.stringify(verify)}`);
      }
      audit_stats[scenario] = { ...s, verified_entries: verify.entries };
      fsyncs_per_1000_appends[scenario] = round((s.fsyncs / s.appends) * 1000);
    }
    const rows = measured.rows.map((r, i) => ({ ...r, ops_per_cpu_s: measured.opsPerCpuS[i] }));
    printTable(
      BENCH,
      rows.map((r) => ({
        ...r,
        fsyncs_per_1000:
          r.system === 'finger'
            ? fsyncs_per_1000_appends[r.scenario]
            : r.system === 'finger+head'
              ? fsyncs_per_1000_appends[`head-${r.scenario}`]
              : 1000,
      })),
    );
    const c1 = rows.find((r) => r.system === 'finger' && r.scenario === 'c1');
    const c100 = rows.find((r) => r.system === 'finger' && r.scenario === 'c100');
    const raw = rows.find((r) => r.system === 'raw-write-fsync');
    const headRow = (scenario) => rows.find((r) => r.system === 'finger+head' && r.scenario === scenario);
    const ratios = {
      head_c1_ops_over_c1: round(headRow('c1').ops_per_s / c1.ops_per_s),
      head_c100_ops_over_c100: round(headRow('c100').ops_per_s / c100.ops_per_s),
      c100_ops_over_c1: round(c100.ops_per_s / c1.ops_per_s),
      c1_ops_over_raw_write_fsync: round(c1.ops_per_s / raw.ops_per_s),
      entries_per_batch_c100: round(audit_stats.c100.appends / audit_stats.c100.batches),
    };
    process.stdout.write(
      [
        '',
        `fsyncs per 1000 appends: c1 ${fsyncs_per_1000_appends.c1}, c100 ${fsyncs_per_1000_appends.c100} (${ratios.entries_per_batch_c100} entries per write+fsync)`,
        `c100 ÷ c1 ops/s: ${ratios.c100_ops_over_c1}×; finger c1 ÷ bare write+fdatasync: ${ratios.c1_ops_over_raw_write_fsync}`,
        `with the audit head file (finger+head ÷ finger ops/s): c1 ${ratios.head_c1_ops_over_c1}, c100 ${ratios.head_c100_ops_over_c100}`,
        `entry size on disk: ${rawLine.length} bytes`,
        '',
      ].join('\n'),
    );
    const file = writeResults(BENCH, measured.rows, {
      ratios,
      fsyncs_per_1000_appends,
      audit_stats,
      entry_bytes: rawLine.length,
      options: opts,
      notes: [
        `fsyncs per 1000 appends: c1 ${fsyncs_per_1000_appends.c1}, c100 ${fsyncs_per_1000_appends.c100} (counted by AuditLog.stats(), over warmup and measured rounds, including directory syncs at segment creation).`,
        'finger = AuditLog from packages/firewall/dist in a temp dir on the local disk, default 64 MiB segments; one op = append() of a tool.call entry (actor, ids, the Evaluation as verdict, shell-command arguments digested with sha256 of their canonical JSON), resolving only after write + fdatasync.',
        'c1: one caller, so every append pays its own write+fdatasync. c100: 100 callers; appends arriving while a write+fdatasync is in flight are chained and written together in the next one (group commit).',
        'raw-write-fsync c1: FileHandle.write of a pre-serialized line of the same size + datasync per op, no hashing or serialization: the floor set by the disk.',
        'Each log is verified (verifyAuditLog over the acknowledged bytes) after the run; the bench fails on any failed append or a broken chain.',
        'Each row is the median round by ops/s (its p50/p99 alongside); rounds are interleaved with a rotating order. fsync latency depends on the disk and the VM: compare rows of one run.',
      ],
      detail: measured.detail,
    });
    process.stdout.write(`results: ${file}\n`);
  } finally {
    await Promise.allSettled([logC1.close(), logC100.close(), headC1.close(), headC100.close(), rawFile.close()]);
    await Promise.allSettled(dirs.map((d) => rm(d, { recursive: true, force: true })));
  }
});
