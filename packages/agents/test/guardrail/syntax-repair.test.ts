import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { numberProblem, scanJson } from '../../src/guardrail/duplicate-keys.js';
import { repairJson } from '../../src/guardrail/syntax-repair.js';

/** A repair result; a cut one is compared without its `incomplete` paths (see the test of those). */
const fixed = (json: string, cut = false, fixes: string[] = []): unknown =>
  cut ? expect.objectContaining({ ok: true, json, cut }) : { ok: true, json, cut, incomplete: new Set(), fixes };
/** The paths a cut-off text left for the repair to finish. */
const unfinished = (text: string): string[] => {
  const r = repairJson(text);
  if (!r.ok) throw new Error(r.problem);
  return [...r.incomplete].sort();
};
const value = (text: string): unknown => {
  const r = repairJson(text);
  if (!r.ok) throw new Error(r.problem);
  return JSON.parse(r.json);
};

describe('repairJson: structure only', () => {
  it.each([
    ['trailing commas', '{"a":1,"b":[1,2,],}', '{"a":1,"b":[1,2]}'],
    ['a leading comma', '{,"a":1}', '{"a":1}'],
    ['comments', '{\n// note\n"a":1, /* b */ "b":2}', '{\n\n"a":1,  "b":2}'],
    ['single quotes', "{'a': 'say \"hi\"'}", '{"a": "say \\"hi\\""}'],
    ["\\' inside single quotes", "{'a':'it\\'s'}", '{"a":"it\'s"}'],
    ['smart quotes', '{“a”: “b”, ‘c’: ‘d’}', '{"a": "b", "c": "d"}'],
    ['Python literals', "{'a': True, 'b': False, 'c': None}", '{"a": true, "b": false, "c": null}'],
    ['bare keys', '{decision: 1, $ref: 2, a.b-c: 3}', '{"decision": 1, "$ref": 2, "a.b-c": 3}'],
    ['a comma missing at a line break', '{"a":1\n"b":[1\n2]}', '{"a":1,\n"b":[1,\n2]}'],
    ['raw control characters in a string', '{"a":"x\ty\nz"}', '{"a":"x\\ty\\nz"}'],
    ['a non-breaking space', '{"a":\u00a01}', '{"a": 1}'],
  ])('repairs %s', (_, text, json) => {
    expect(repairJson(text)).toEqual(fixed(json));
  });

  it('closes what a cut-off text left open, a missing value read as null', () => {
    expect(repairJson('{"a":"rm -rf /tmp/bu')).toEqual(fixed('{"a":"rm -rf /tmp/bu"}', true));
    expect(repairJson('{"a":[1,2')).toEqual(fixed('{"a":[1,2]}', true));
    expect(repairJson('{"a":1,')).toEqual(fixed('{"a":1}', true));
    expect(repairJson('{"a":1,"b"')).toEqual(fixed('{"a":1,"b":null}', true));
    expect(repairJson('{"a":')).toEqual(fixed('{"a":null}', true));
    expect(repairJson('{"a":tr')).toEqual(fixed('{"a":null}', true));
    expect(repairJson('{"a":0.')).toEqual(fixed('{"a":null}', true));
    expect(repairJson('{"a":"x\\')).toEqual(fixed('{"a":"x"}', true));
    expect(repairJson('{"a":"x\\u00')).toEqual(fixed('{"a":"x"}', true));
    expect(repairJson('{"a":[}')).toEqual(fixed('{"a":[]}', true));
    expect(repairJson('{"a":1 /* note')).toEqual(fixed('{"a":1 }', true));
  });

  it('reports the values it finished at the cut, by path: one reader for the truncation check', () => {
    expect(unfinished('{"a":1}')).toEqual([]);
    expect(unfinished('{"a":"rm -rf /tmp/bu')).toEqual(['["a"]', '[]']);
    expect(unfinished('{"a":1,"b":{"c":0.8')).toEqual(['["b","c"]', '["b"]', '[]']);
    expect(unfinished('{"a":1,"b":{"c":0.8 ')).toEqual(['["b"]', '[]']);
    expect(unfinished('{"a":"x","b":')).toEqual(['["b"]', '[]']);
    expect(unfinished('{"a":"x","pay')).toEqual(['["pay"]', '[]']);
    expect(unfinished('[{"a":1},{"b":[true')).toEqual(['[1,"b",0]', '[1,"b"]', '[1]', '[]']);
    // what the repair reads as a space, a string or a key is what is judged
    expect(unfinished('{"a":1,"p":\u00a0{"t":"rm -rf /tmp/bu')).toEqual(['["p","t"]', '["p"]', '[]']);
    expect(unfinished('{"a":1,"p":{"t":“a } b c')).toEqual(['["p","t"]', '["p"]', '[]']);
    expect(unfinished('{"a":1,"p\\u0061yload":{"t":"x')).toEqual(['["payload","t"]', '["payload"]', '[]']);
  });

  it('keeps invalid escapes exactly as written when they are the only escapes (never drops the backslash)', () => {
    expect(value('{"command":"rm -rf my\\ dir"}')).toEqual({ command: 'rm -rf my\\ dir' });
    expect(value('{"pattern":"^\\d+\\.\\d+$"}')).toEqual({ pattern: '^\\d+\\.\\d+$' });
    expect(value('{"command":"echo \\$HOME"}')).toEqual({ command: 'echo \\$HOME' });
    expect(value('{"path":"C:\\Users\\Bob"}')).toEqual({ path: 'C:\\Users\\Bob' });
    expect(value('{"command":"grep \\"foo\\.bar\\" ."}')).toEqual({ command: 'grep "foo\\.bar" .' });
  });

  it.each([
    ['an invalid escape beside a JSON escape (\\n is a newline or not)', '{"path":"C:\\Users\\new\\table.txt"}'],
    ['an invalid escape beside \\\\', '{"a":"\\\\x \\d"}'],
    ["\\' in a double-quoted string", '{"a":"it\\\'s"}'],
    ['\\u without four hex digits', '{"a":"\\u12zz"}'],
    ['an apostrophe inside a single-quoted string', "{'text':'Don't worry'}"],
    ['an apostrophe inside a smart-quoted string', '{‘text’:‘it’s’}'],
    ['NaN', '{"a":NaN}'],
    ['Infinity', "{'a':Infinity}"],
    ['-Infinity', '{"a":-Infinity}'],
    ['a hex number', "{'a':0x10}"],
    ['an octal number', "{'a':0o755}"],
    ['a leading zero', "{'a':0755}"],
    ['a plus sign', '{"a":+1}'],
    ['a bare fraction', '{"a":.5}'],
    ['an unquoted value', '{command: rm -rf build}'],
    ['+ joining a string with a name', '{"a":"x" + y}'],
    ['+ joining a string with a number', '{"a":"x" + 1}'],
    ['backtick strings', '{"a":`x`}'],
    ['a comma missing on one line', '{"a":"echo "b":"x"}'],
    ['a missing colon before a bare word', '{"a" rm}'],
    ['a missing colon before a comma', '{"a" , 1}'],
    ['a quote inside a key', '{"a "b" c": 1}'],
    ['a missing value', '{"a":}'],
    ['two commas', '{"a":1,,"b":2}'],
    ['a mismatched bracket followed by members', '{"a":[1},"b":2}'],
    ['text after the value', '{"a":1} and more'],
    ['a redundant closer', '{"a":1}}'],
  ])('refuses %s', (_, text) => {
    expect(repairJson(text)).toMatchObject({ ok: false, problem: expect.any(String) });
  });

  it.each([
    ['undefined', '{"a":undefined,"b":[undefined]}', '{"a":null,"b":[null]}', ['undefined read as null']],
    [
      'keys without colons',
      '{"decision" "dispatch_module", "n" 1, "p" {"t" "x"}}',
      '{"decision" :"dispatch_module", "n" :1, "p" :{"t" :"x"}}',
      ['a missing colon added after a key (first "decision")'],
    ],
    [
      'strings joined with +',
      '{\'a\':\'x\' + \'y\',\n "b": "1 " +\n   "2" + "3"}',
      '{"a":"xy",\n "b": "1 23"}',
      ['strings joined with +'],
    ],
    [
      'quotes inside a string that cannot end it',
      '{"r": "say "hi" now", "t": "a "b", c", "u": ["x "y" z"]}',
      '{"r": "say \\"hi\\" now", "t": "a \\"b\\", c", "u": ["x \\"y\\" z"]}',
      ['a " inside a string kept as a character'],
    ],
  ])('repairs %s, naming the fix', (_, text, json, fixes) => {
    expect(repairJson(text)).toEqual(fixed(json, false, fixes));
  });

  it('reads a quote before a comma and the next member as the end of the string', () => {
    expect(value('{"r": "x "y", "t": "echo"}')).toEqual({ r: 'x "y', t: 'echo' });
    expect(value('{"r": "x "y",\n "t": "echo"}')).toEqual({ r: 'x "y', t: 'echo' });
  });

  it('refuses nesting deeper than 128', () => {
    expect(repairJson(`${'['.repeat(129)}1`)).toMatchObject({
      ok: false,
      problem: 'nesting deeper than 128 levels at character 128',
    });
    expect(repairJson(`${'['.repeat(128)}1`)).toMatchObject({ ok: true, cut: true });
  });

  it('is linear on the unbalanced quotes jsonrepair is quadratic on (refused at the first one)', () => {
    expect(repairJson(`{'a':${"'x".repeat(100_000)}}`)).toMatchObject({ ok: false });
    expect(repairJson(`{'a':'${"x'y".repeat(50_000)}`)).toMatchObject({ ok: false });
  });

  it('leaves valid JSON as it is (property)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.array(fc.jsonValue()), fc.dictionary(fc.string(), fc.jsonValue())), (v) => {
        for (const text of [JSON.stringify(v), JSON.stringify(v, null, 2)])
          expect(repairJson(text)).toEqual(fixed(text));
      }),
      { numRuns: 300 },
    );
  });

  it('reads single-quoted, bare-keyed, commented Python-style text as the value it spells (property)', () => {
    const safe = fc.string().filter((s) => !/['\\]/.test(s));
    const key = fc.stringMatching(/^[a-z_][a-z0-9_]{0,8}$/);
    const scalar = fc.oneof(
      safe,
      fc.boolean(),
      fc.constant(null),
      fc.integer(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
    );
    const py = (v: unknown): string =>
      typeof v === 'string' ? `'${v}'` : v === true ? 'True' : v === false ? 'False' : v === null ? 'None' : String(v);
    fc.assert(
      fc.property(fc.dictionary(key, scalar, { minKeys: 1 }), (o) => {
        const text = `{ /* python */ ${Object.entries(o)
          .map(([k, v]) => `${k}: ${py(v)},`)
          .join('\n')} }`;
        const r = repairJson(text);
        if (!r.ok) throw new Error(`${r.problem}: ${text}`);
        expect(JSON.parse(r.json)).toEqual(JSON.parse(JSON.stringify(o)));
      }),
      { numRuns: 300 },
    );
  });
});

describe('scanJson: what JSON.parse hides', () => {
  it('finds a key repeated with a different value, at any depth', () => {
    expect(scanJson('{"a":{"b":[{"c":1,"c":2}]}}')).toEqual({ duplicate: '$.a.b[0].c' });
    expect(scanJson('{"a":{"x":1,"y":2},"a":{"x":1, "y":2.0}}')).toEqual({});
  });

  it('finds a number that does not read back as written', () => {
    expect(scanJson('{"p":{"n":[1,1e999]}}')).toEqual({ number: '$.p.n[1]: 1e999 is out of range' });
    expect(scanJson('{"id":12345678901234567890}')).toEqual({
      number: '$.id: 12345678901234567890 is beyond the integers a number keeps exactly (±2^53)',
    });
  });

  it.each([
    ['1e999', 'out of range'],
    ['-1e999', 'out of range'],
    ['1e-999', 'reads as 0'],
    ['9007199254740993', 'beyond the integers'],
    ['12345678901234567.0', 'beyond the integers'],
    ['0.1234567890123456789', 'more digits'],
  ])('refuses %s (%s)', (raw, why) => {
    expect(numberProblem(raw)).toContain(why);
  });

  it.each([
    '0',
    '-0',
    '0.9',
    '0e5',
    '9007199254740991',
    '0.30000000000000004',
    '1.2345678901234567e-30',
    '1e20',
    '5e-324',
  ])('accepts %s', (raw) => {
    expect(numberProblem(raw)).toBeUndefined();
  });
});
