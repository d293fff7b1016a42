// The RiskAssessor as a unit: cache, frozen results, the plain-word fast path agreeing with a
// full parse, exec argv arrays, and commands too long to parse.

import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';

import { RiskAssessor } from '@finger/shell-risk';

let assessor: RiskAssessor;

beforeAll(async () => {
  assessor = await RiskAssessor.create();
});

describe('RiskAssessor', () => {
  it('caches assessments by command text and returns frozen results', async () => {
    const fresh = await RiskAssessor.create();
    const a = fresh.assess('git status && rm -rf ~');
    const b = fresh.assess('git status && rm -rf ~');
    expect(b).toBe(a);
    expect(fresh.stats()).toEqual({ fast_path: 0, cache_hits: 1, parses: 1, cache_size: 1 });
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(a.model.segments[0]?.argv)).toBe(true);
    expect(() => {
      (a.reasons as string[]).push('x');
    }).toThrow(TypeError);
  });

  it('keeps at most cacheSize assessments per kind (least recently used goes first)', async () => {
    const small = await RiskAssessor.create({ cacheSize: 2 });
    small.assess('echo 1 > a');
    small.assess('echo 2 > a');
    small.assess('echo 1 > a');
    small.assess('echo 3 > a');
    expect(small.stats().cache_size).toBe(2);
    small.assess('echo 1 > a');
    expect(small.stats()).toMatchObject({ cache_hits: 2, parses: 3 });
  });

  it('takes the fast path for plain safe commands without parsing', async () => {
    const fresh = await RiskAssessor.create();
    const a = fresh.assess('git log --oneline -n 5');
    expect(a).toEqual({
      level: 'safe',
      reasons: ['read-only: git log'],
      model: {
        segments: [
          {
            argv: ['git', 'log', '--oneline', '-n', '5'],
            program: 'git',
            path: 'git',
            name: 'git',
            dynamic: [],
            assignments: [],
            redirects: [],
            via: [],
            wrapper: false,
            local_binary: false,
            unknown_program: false,
            unknown_tail: false,
            pipeline: null,
          },
        ],
        flags: fresh.parse('ls').flags,
        notes: [],
      },
    });
    expect(fresh.stats()).toMatchObject({ fast_path: 1, parses: 1 });
  });

  it('property: the fast path agrees with a full parse on plain-word commands', async () => {
    const uncached = await RiskAssessor.create({ cacheSize: 0 });
    const plainWord = fc.stringMatching(/^[A-Za-z0-9_./=:@%+,-]{1,12}$/);
    const program = fc.constantFrom(
      'ls',
      'cat',
      'git',
      'find',
      'rg',
      'sort',
      'sed',
      'date',
      'rm',
      'npm',
      'uniq',
      'tree',
      'env',
    );
    fc.assert(
      fc.property(program, fc.array(plainWord, { maxLength: 5 }), (prog, args) => {
        const text = [prog, ...args].join(' ');
        const fast = uncached.assess(text);
        // the same command as an argv never takes the fast path
        const full = uncached.assess([prog, ...args]);
        expect({ text, level: fast.level }).toEqual({ text, level: full.level });
      }),
      { numRuns: 300 },
    );
  });

  it('property: any text gets a verdict (never throws), unparseable text is at least moderate', () => {
    const alphabet = fc.constantFrom(
      ...'ab rm-f/~.*$`\'"\\(){}[]|&;<>!#=\n\t'.split(''),
      '$(',
      '<<EOF\n',
      '\nEOF\n',
      '((',
      '\u200b',
      'sudo ',
      'sh -c ',
      'eval ',
      'xargs ',
    );
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 40 }), (parts) => {
        const a = assessor.assess(parts.join(''));
        expect(['safe', 'moderate', 'dangerous']).toContain(a.level);
        if (a.unparseable === true) expect(a.level).not.toBe('safe');
      }),
      { numRuns: 500 },
    );
  });

  it('assesses an exec argv as one command, recursing into sh -c only', () => {
    expect(assessor.assess(['ls', '-la', '; rm -rf /']).level).toBe('safe');
    expect(assessor.assess(['/bin/sh', '-c', 'rm -rf /']).level).toBe('dangerous');
    expect(assessor.assess(['echo', '\u200b']).reasons).toEqual([
      'invisible or control character U+200B ZERO WIDTH SPACE at offset 5',
    ]);
  });

  it('does not parse a command longer than 32,768 characters', () => {
    const a = assessor.assess(`ls ${'x'.repeat(32_768)}`);
    expect([a.level, a.unparseable, a.model.unparseable]).toEqual([
      'moderate',
      true,
      'longer than 32768 characters; not parsed',
    ]);
  });

  it('an empty command runs nothing', () => {
    expect(assessor.assess('   ')).toMatchObject({ level: 'safe', reasons: ['nothing to run'] });
    expect(assessor.assess('# just a comment')).toMatchObject({ level: 'safe', reasons: ['nothing to run'] });
  });
});
