// Policy command patterns: deny matches every spelling anywhere, allow only exact single commands.

import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';

import { compileCommandPattern, RiskAssessor } from '@finger/firewall';

let assessor: RiskAssessor;

beforeAll(async () => {
  assessor = await RiskAssessor.create();
});

function denies(pattern: string, command: string): boolean {
  return compileCommandPattern(pattern, 'deny').test(assessor.assess(command).model);
}

function allows(pattern: string, command: string): boolean {
  return compileCommandPattern(pattern, 'allow').test(assessor.assess(command).model);
}

describe('deny patterns', () => {
  it.each([
    'git push --force',
    'git push -f origin main',
    'git push origin main --force',
    'git push --force-with-lease',
    'git push origin +main',
    'git -C repo push --force',
    'git push --force-w origin',
    'cd x && sudo git push -f',
  ])('git push --force matches %s', (command) => {
    expect(denies('git push --force', command)).toBe(true);
  });

  it.each(['git push origin main', 'git log push --force', 'git commit -m push'])(
    'git push --force does not match %s',
    (command) => {
      expect(denies('git push --force', command)).toBe(false);
    },
  );

  it.each([
    ['chmod -R 777 *', 'chmod --recursive 777 /srv'],
    ['chmod -R 777 *', 'find . -exec chmod -R 777 {} +'],
    ['chown -R *', 'sudo chown -Rv root:root /'],
    ['curl -o /etc/*', 'curl -sSLo /etc/hosts https://x'],
    ['curl -o /etc/*', 'curl --output=/etc/hosts https://x'],
    ['cp -r * /etc', 'cp -a --recursive x /etc'],
    ['mv -f *', 'mv --forc a b'],
    ['mkfs*', 'sudo mkfs.ext4 /dev/sda1'],
    ['find * -delete', 'find / -name x -delete'],
    ['rm -rf /', 'rm -rf x /'],
    ['rm -rf /', 'rm -rf "$TARGET"'],
    ['rm -rf *', 'find . | xargs rm'],
  ])('%s matches %s', (pattern, command) => {
    expect(denies(pattern, command)).toBe(true);
  });

  it.each([
    ['rm -rf *', 'rm -r x'],
    ['rm -rf *', 'rm -f x'],
    ['rm -rf /', 'rm -rf x'],
    ['chmod -R 777 *', 'chmod 777 x'],
    ['curl -o /etc/*', 'curl -o out https://x'],
    ['mkfs*', 'mkdir x'],
  ])('%s does not match %s', (pattern, command) => {
    expect(denies(pattern, command)).toBe(false);
  });

  it('$(( … )) is arithmetic unless its first ( closes apart: inside backticks too', () => {
    // bash runs rm here: `$((` whose parentheses close as `) )` is a substitution of a subshell
    for (const command of ['echo $((rm -rf x) )', 'echo `echo \\$((rm -rf x) )`'])
      expect({ command, denied: denies('rm -rf *', command) }).toEqual({ command, denied: true });
    // and not here: `$(( rm -rf x ))` is an arithmetic expansion (a syntax error when it runs);
    // unparseable, so never safe
    const a = assessor.assess('echo `echo \\$(( rm -rf x ))`');
    expect({ level: a.level, unparseable: a.unparseable }).toEqual({ level: 'moderate', unparseable: true });
  });

  it('names the first matching segment', () => {
    const p = compileCommandPattern('rm -rf *', 'deny');
    expect(p.firstMatch(assessor.assess('ls && sudo rm -rf x').model)).toBe(2);
    expect(p.firstMatch(assessor.assess('ls').model)).toBe(-1);
  });

  it('property: every composition of wrappers around rm -rf <word> is denied and never safe', () => {
    const deny = compileCommandPattern('rm -rf *', 'deny');
    const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
    const spelling = fc.constantFrom(
      'rm -rf',
      'rm -fr',
      'rm -r -f',
      'rm -R -f',
      'rm -f -r',
      'rm --recursive --force',
      'rm --force -R',
      '/bin/rm -rf',
      '\\rm -rf',
      "'rm' -rf",
      '"rm" -rf',
      'r\\m -rf',
      "$'rm' -rf",
      'rm --rec --for',
    );
    const word = fc.stringMatching(/^[a-z][a-z0-9_.]{0,8}$/);
    // a wrapper turns a command (and whether it is one simple command) into a new one
    type Cmd = { text: string; simple: boolean };
    const prefix = fc.constantFrom(
      'sudo',
      'sudo -u root',
      'doas',
      'timeout 5',
      'timeout -s KILL 10',
      'nice',
      'nice -n 5',
      'nohup',
      'env',
      'env FOO=1',
      'env -i PATH=/bin',
      'command',
      'time',
      'stdbuf -oL',
      'exec',
      'ionice -c 3',
      'setsid',
    );
    const wrapper = fc.oneof(
      prefix.map(
        (p) =>
          (c: Cmd): Cmd =>
            c.simple ? { text: `${p} ${c.text}`, simple: true } : { text: `${p} sh -c ${quote(c.text)}`, simple: true },
      ),
      fc.constantFrom(
        (c: Cmd): Cmd => ({ text: `sh -c ${quote(c.text)}`, simple: true }),
        (c: Cmd): Cmd => ({ text: `bash -lc ${quote(c.text)}`, simple: true }),
        // not simple: `find -exec eval 'x | sh' {}` / `xargs eval …` append a word to the eval'd string
        // (`… | sh {}` runs the file {}, not the pipe), so those wrap it in sh -c instead
        (c: Cmd): Cmd => ({ text: `eval ${quote(c.text)}`, simple: false }),
        // `$( … )` spaced: `$((` followed by `))` is an arithmetic expansion in bash (`$(( rm -rf x ))`
        // runs nothing), so `$(` around a `( … )` subshell must not touch it
        (c: Cmd): Cmd => ({ text: `echo $( ${c.text} )`, simple: true }),
        (c: Cmd): Cmd => ({ text: `echo \`${c.text.replace(/[\\`$]/g, '\\$&')}\``, simple: true }),
        (c: Cmd): Cmd => ({ text: `( ${c.text} )`, simple: false }),
        (c: Cmd): Cmd => ({ text: `{ ${c.text}; }`, simple: false }),
        (c: Cmd): Cmd => ({ text: `git status && ${c.text}`, simple: false }),
        (c: Cmd): Cmd => ({ text: `${c.text}; ls`, simple: false }),
        (c: Cmd): Cmd => ({ text: `if true; then ${c.text}; fi`, simple: false }),
        (c: Cmd): Cmd => ({ text: `echo ${quote(c.text)} | sh`, simple: false }),
        (c: Cmd): Cmd =>
          c.simple
            ? { text: `find . -exec ${c.text} {} \\;`, simple: true }
            : { text: `find . -exec sh -c ${quote(c.text)} \\;`, simple: true },
        (c: Cmd): Cmd =>
          c.simple
            ? { text: `echo a | xargs ${c.text}`, simple: false }
            : { text: `echo a | xargs sh -c ${quote(c.text)}`, simple: false },
      ),
    );
    fc.assert(
      fc.property(spelling, word, fc.array(wrapper, { maxLength: 5 }), (rm, target, wrappers) => {
        let cmd: Cmd = { text: `${rm} ${target}`, simple: true };
        for (const w of wrappers) cmd = w(cmd);
        const a = assessor.assess(cmd.text);
        expect({ command: cmd.text, denied: deny.test(a.model), safe: a.level === 'safe' }).toEqual({
          command: cmd.text,
          denied: true,
          safe: false,
        });
      }),
      { numRuns: 400 },
    );
  });
});

describe('allow patterns', () => {
  it.each([
    ['git status', 'git status', true],
    ['git status', '/usr/bin/git status', true],
    ['git status', 'git status --short', false],
    ['git status', 'git status && rm -rf ~', false],
    ['git status', 'git status; ls', false],
    ['git status', 'git status > out', false],
    ['git status', 'GIT_DIR=x git status', false],
    ['git status', 'sudo git status', false],
    ['git status', 'echo $(git status)', false],
    ['git status', './git status', false],
    ['git status', '(git status)', false],
    ['git log *', 'git log --oneline -n 5', true],
    ['git log *', 'git log', true],
    ['git log *', 'git log $(rm -rf x)', false],
    ['npm run *', 'npm run build', true],
    ['npm run test:*', 'npm run test:unit', true],
    ['npm run test:*', 'npm run build', false],
    ['ls -la', 'ls -al', false],
    ['git log * -- *', 'git log -n 5 -- src', true],
    ['git log * -- *', 'git log -n 5', false],
  ])('%s vs %s → %s', (pattern, command, expected) => {
    expect(allows(pattern, command)).toBe(expected);
  });
});

describe('a construct /bin/sh reads otherwise (shell-risk sh-readings)', () => {
  it('gives deny patterns the model of what sh would run', () => {
    expect(denies('rm -rf *', `echo $'\\' ; rm -rf ~ #'`)).toBe(true);
  });
});

describe('compilation', () => {
  it.each([
    ['', 'empty pattern'],
    ["rm 'x", 'unterminated quote'],
    ['curl * | sh', "'|': a pattern describes one command"],
    ['a && b', "'&&': a pattern describes one command"],
  ])('refuses %j', (pattern, why) => {
    let err: unknown;
    try {
      compileCommandPattern(pattern, 'deny');
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({
      code: 'E_INVALID_ARGS',
      message: `invalid command pattern ${JSON.stringify(pattern)}: ${why}`,
    });
  });
});
