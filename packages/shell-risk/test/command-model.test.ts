// The canonical command model: de-quoting, wrapper stripping, recursion into nested commands,
// redirects, assignments and flags.

import { beforeAll, describe, expect, it } from 'vitest';

import { type CommandModel, RiskAssessor } from '@finger/shell-risk';

let assessor: RiskAssessor;

beforeAll(async () => {
  assessor = await RiskAssessor.create();
});

function shape(model: CommandModel): { argv: string[]; program: string; via: string[]; wrapper: boolean }[] {
  return model.segments.map((s) => ({ argv: [...s.argv], program: s.program, via: [...s.via], wrapper: s.wrapper }));
}

describe('words', () => {
  it.each<[string, string[]]>([
    ["'rm' -rf x", ['rm', '-rf', 'x']],
    ['r\\m -rf x', ['rm', '-rf', 'x']],
    ['r\\\nm -rf x', ['rm', '-rf', 'x']],
    ['"r"m -rf x', ['rm', '-rf', 'x']],
    ["$'\\x72\\x6d' $'a\\tb' $'\\101\\u00e9'", ['rm', 'a\tb', 'Aé']],
    ['echo "a\\"b\\$c" a\\ b', ['echo', 'a"b$c', 'a b']],
    ['echo $"hi"', ['echo', 'hi']],
    ["echo --opt='a b' x'y'z", ['echo', '--opt=a b', 'xyz']],
  ])('%s', (command, argv) => {
    expect(assessor.parse(command).segments[0]?.argv).toEqual(argv);
  });

  it('keeps the source text of run-time values and marks them dynamic', () => {
    const seg = assessor.parse('rm -rf "$HOME" ${X:-y} $(pwd)/z').segments.at(-1);
    expect(seg?.argv).toEqual(['rm', '-rf', '$HOME', '${X:-y}', '$(pwd)/z']);
    expect(seg?.dynamic).toEqual([2, 3, 4]);
  });

  it('names the program by basename for absolute paths and keeps relative paths as local binaries', () => {
    const [a, b, c] = assessor.parse('/bin/rm x; ./cat y; bin/tool z').segments;
    expect([a?.program, a?.path, a?.local_binary]).toEqual(['rm', '/bin/rm', false]);
    expect([b?.program, b?.local_binary]).toEqual(['./cat', true]);
    expect([c?.program, c?.local_binary]).toEqual(['bin/tool', true]);
  });

  it('marks a program computed at run time as unknown', () => {
    const seg = assessor.parse('$(echo rm) -rf x').segments.at(-1);
    expect(seg).toMatchObject({ program: '', unknown_program: true, path: '$(echo rm)' });
  });
});

describe('segments', () => {
  it('splits lists, pipelines and background jobs', () => {
    const m = assessor.parse('a && b || c; d | e |& f & g\nh');
    expect(m.segments.map((s) => s.program)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
    expect(m.segments[3]?.pipeline).toEqual({ id: 1, index: 0, length: 3 });
    expect(m.segments[5]?.pipeline).toEqual({ id: 1, index: 2, length: 3 });
    expect(m.flags.background).toBe(true);
  });

  it('strips wrappers and keeps each layer as a wrapper segment', () => {
    expect(shape(assessor.parse('sudo -u root timeout -s KILL 5 nice -n 2 env -i A=1 rm -rf x'))).toEqual([
      {
        argv: [
          'sudo',
          '-u',
          'root',
          'timeout',
          '-s',
          'KILL',
          '5',
          'nice',
          '-n',
          '2',
          'env',
          '-i',
          'A=1',
          'rm',
          '-rf',
          'x',
        ],
        program: 'sudo',
        via: [],
        wrapper: true,
      },
      {
        argv: ['timeout', '-s', 'KILL', '5', 'nice', '-n', '2', 'env', '-i', 'A=1', 'rm', '-rf', 'x'],
        program: 'timeout',
        via: ['sudo'],
        wrapper: true,
      },
      {
        argv: ['nice', '-n', '2', 'env', '-i', 'A=1', 'rm', '-rf', 'x'],
        program: 'nice',
        via: ['sudo', 'timeout'],
        wrapper: true,
      },
      { argv: ['env', '-i', 'A=1', 'rm', '-rf', 'x'], program: 'env', via: ['sudo', 'timeout', 'nice'], wrapper: true },
      { argv: ['rm', '-rf', 'x'], program: 'rm', via: ['sudo', 'timeout', 'nice', 'env'], wrapper: false },
    ]);
    expect(assessor.parse('env -i A=1 rm -rf x').segments[1]?.assignments).toEqual([
      { name: 'A', value: '1', dynamic: false },
    ]);
  });

  it.each<[string, string[]]>([
    ["sh -c 'rm -rf x'", ['sh -c']],
    ['bash -lc "rm -rf x"', ['sh -c']],
    ["zsh -x -c 'rm -rf x'", ['sh -c']],
    ['eval rm -rf x', ['eval']],
    ["eval 'rm -rf x'", ['eval']],
    ['echo x | xargs -n1 rm -rf', ['pipe', 'xargs']],
    ['find . -name a -exec rm -rf {} +', ['find -exec']],
    ['echo $(rm -rf x)', ['$(…)']],
    ['echo `rm -rf x`', ['`…`']],
    ['diff <(rm -rf x) y', ['<(…)']],
    ['(rm -rf x)', ['subshell']],
    ['f() { rm -rf x; }', ['function']],
    ['if true; then rm -rf x; fi', []],
    ['for i in 1; do rm -rf x; done', []],
    ["env -S 'rm -rf' x", ['env -S', 'env']],
    ['busybox rm -rf x', ['busybox']],
    ["echo 'rm -rf x' | sh", ['pipe']],
    ['bash <<EOF\nrm -rf x\nEOF', ['heredoc']],
    ["bash <<< 'rm -rf x'", ['heredoc']],
    ['sh -c "bash -c \'eval \\"rm -rf x\\"\'"', ['sh -c', 'sh -c', 'eval']],
  ])('reaches the rm in %s', (command, via) => {
    const rm = assessor.parse(command).segments.find((s) => s.program === 'rm');
    expect(rm?.argv.slice(0, 2)).toEqual(['rm', '-rf']);
    expect(rm?.via).toEqual(via);
  });

  it('marks xargs commands as having an unknown tail', () => {
    const rm = assessor.parse('ls | xargs rm').segments.find((s) => s.program === 'rm');
    expect(rm?.unknown_tail).toBe(true);
  });

  it('walks into heredoc bodies with substitutions, test commands and case arms', () => {
    const m = assessor.parse('cat <<EOF\n$(rm a)\nEOF\n[[ -f $(rm b) ]]; case x in y) rm c;; esac');
    expect(m.segments.filter((s) => s.program === 'rm').map((s) => s.argv[1])).toEqual(['a', 'b', 'c']);
    expect(m.flags).toMatchObject({ heredoc: true, control_flow: true, substitution: true });
  });

  it('does not expand a quoted heredoc', () => {
    const m = assessor.parse("cat <<'EOF'\n$(rm a)\nEOF");
    expect(m.segments.map((s) => s.program)).toEqual(['cat']);
    expect(m.segments[0]?.redirects).toEqual([{ op: '<<', target: '$(rm a)\n', is_write: false, dynamic: false }]);
  });
});

describe('redirects, assignments and flags', () => {
  it('records write and read redirects with their targets', () => {
    const seg = assessor.parse('cmd > out 2>&1 >> "log file" < in &> both 2>/dev/null').segments[0];
    expect(seg?.redirects).toEqual([
      { op: '>', target: 'out', is_write: true, dynamic: false },
      { op: '>&', target: '1', is_write: false, dynamic: false, fd: 2 },
      { op: '>>', target: 'log file', is_write: true, dynamic: false },
      { op: '<', target: 'in', is_write: false, dynamic: false },
      { op: '&>', target: 'both', is_write: true, dynamic: false },
      { op: '>', target: '/dev/null', is_write: true, dynamic: false, fd: 2 },
    ]);
  });

  it('applies the redirect of a compound statement to every command inside', () => {
    const m = assessor.parse('{ a; b; } > out');
    expect(m.segments.map((s) => s.redirects.map((r) => r.target))).toEqual([['out'], ['out']]);
  });

  it('records assignments and PATH changes', () => {
    const m = assessor.parse('FOO=1 cmd; export PATH=/tmp:$PATH; unset HOME');
    expect(m.segments[0]?.assignments).toEqual([{ name: 'FOO', value: '1', dynamic: false }]);
    expect(m.segments[1]?.argv).toEqual(['export', 'PATH=/tmp:$PATH']);
    expect(m.flags).toMatchObject({ env_change: true, path_change: true, dynamic: true });
  });

  it('reports an unparseable command with the place of the error', () => {
    const m = assessor.parse('echo "unterminated');
    expect(m.unparseable).toBe(`syntax error at offset 5 near '"unterminated'`);
  });

  it('parses an exec argv without shell parsing but recurses into sh -c', () => {
    const m = assessor.parse(['ls', '$(rm x)', '; rm y']);
    expect(shape(m)).toEqual([{ argv: ['ls', '$(rm x)', '; rm y'], program: 'ls', via: [], wrapper: false }]);
    const n = assessor.parse(['/bin/sh', '-c', 'rm -rf x']);
    expect(n.segments.map((s) => s.program)).toEqual(['sh', 'rm']);
  });
});
