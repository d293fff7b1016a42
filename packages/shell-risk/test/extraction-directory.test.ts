// Archive extraction judged by the directory it extracts into: the one named (`-C`, `-d`, `-D`,
// `-o`), else the one it runs in — the starting directory followed through `cd`s. An archive may
// hold `.bashrc` or `.ssh/authorized_keys`, so `cd ~ && tar -xf x.tar` is `tar -C ~ -xf x.tar`.
// Each case names the level a person sees: moderate → CONFIRM, dangerous → APPROVE.

import { beforeAll, describe, it } from 'vitest';

import type { CommandRiskLevel } from '../src/command-model.js';
import { RiskAssessor } from '../src/risk-assessor.js';
import { expectLevelsOf } from './risk-expectations.js';

/** The shell tool's default directory (finger's home is not under a home directory here). */
const WORKSPACE = '/srv/finger-home/workspace';

let assessor: RiskAssessor;
beforeAll(async () => {
  assessor = await RiskAssessor.create({ finger_home: '/srv/finger-home', cacheSize: 0 });
});

type Case = [command: string, level: CommandRiskLevel];

function expectLevels(cases: readonly Case[], cwd: string = WORKSPACE): void {
  expectLevelsOf(assessor, cases, cwd);
}

describe('extraction into the directory a command runs in', () => {
  it('extracting after a cd into a home directory is judged as extracting into it with -C', () => {
    expectLevels([
      ['tar -C ~ -xf x.tar', 'dangerous'],
      ['cd ~ && tar -xf x.tar', 'dangerous'],
      ['cd ~ && tar xzf x.tgz', 'dangerous'],
      ['cd; tar --extract --file=x.tar', 'dangerous'],
      ['cd ~ && tar --get -f x.tar', 'dangerous'],
      ['cd ~ && bsdtar -x -f x.tar', 'dangerous'],
      ['cd ~ && gtar -xvf x.tar', 'dangerous'],
      ['cd ~ && unzip x.zip', 'dangerous'],
      ['cd ~ && unzip -o -q x.zip', 'dangerous'],
      ['cd ~ && cpio -idv < x.cpio', 'dangerous'],
      ['cd ~ && 7z x a.7z', 'dangerous'],
      ['cd ~ && 7za e a.7z', 'dangerous'],
      ['cd ~ && pax -r -f x.pax', 'dangerous'],
      ['cd ../../.. && cd root && tar -xf /tmp/x.tar', 'dangerous'],
    ]);
  });

  it('extracting into ~/.ssh, /etc or finger’s home from where it runs is dangerous', () => {
    expectLevels([
      ['cd ~/.ssh && tar -xf /tmp/x.tar', 'dangerous'],
      ['cd ~/.ssh && tar xf /tmp/x.tar', 'dangerous'],
      ['cd /etc && unzip /tmp/x.zip', 'dangerous'],
      ['cd .. && tar -xf /tmp/x.tar', 'dangerous'],
      ['cd ~ && tar -xf x.tar -C .', 'dangerous'],
      ['cd ~ && unzip -d . x.zip', 'dangerous'],
    ]);
  });

  it('run from the home directory itself (the call’s cwd), an extraction is dangerous', () => {
    expectLevels([['tar -xf x.tar', 'dangerous']], '/root');
    expectLevels([['unzip x.zip', 'dangerous']], '/home/alice');
  });

  it('elsewhere, or into a named ordinary directory, or only listing, it stays CONFIRM', () => {
    expectLevels([
      ['tar -xf x.tar', 'moderate'],
      ['cd build && tar -xf x.tar', 'moderate'],
      ['cd ~ && tar -xf x.tar -C build', 'moderate'],
      ['cd ~ && unzip -d /tmp/out x.zip', 'moderate'],
      ['cd ~ && 7z x a.7z -o/tmp/out', 'moderate'],
      ['cd ~ && tar -tf x.tar', 'moderate'],
      ['cd ~ && unzip -l x.zip', 'moderate'],
      ['cd ~ && 7z l a.7z', 'moderate'],
      ['cd ~ && tar -czf /tmp/x.tgz src', 'moderate'],
      ['cd "$D" && tar -xf x.tar', 'moderate'],
    ]);
  });
});
