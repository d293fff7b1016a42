import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';

import {
  type CallShape,
  deriveShape,
  describeShape,
  matchShape,
  narrows,
  parseShape,
  shapeClasses,
  type ShapeFacts,
  type ShapeResolver,
} from '../../src/index.js';
import { EXECUTOR_PRINCIPAL, shapeResolver } from './shape-fixtures.js';

let r: ShapeResolver;
beforeAll(async () => {
  r = await shapeResolver();
});

const sh = (command: string): ShapeFacts =>
  r.facts({ tool_id: 'shell.exec', args: { command }, principal: EXECUTOR_PRINCIPAL });
const fsw = (path: string): ShapeFacts =>
  r.facts({ tool_id: 'fs.write', args: { path, content: 'x' }, principal: EXECUTOR_PRINCIPAL });
const web = (url: string): ShapeFacts =>
  r.facts({ tool_id: 'web.fetch', args: { url }, principal: EXECUTOR_PRINCIPAL });
const shapeOf = (f: ShapeFacts): CallShape => {
  const s = deriveShape(f);
  if (s === null) throw new Error('no shape');
  return s;
};

describe('call shapes: shell', () => {
  it('a shape is the program and subcommand as the RiskAssessor parsed them', () => {
    expect(shapeOf(sh('npm test'))).toEqual({
      kind: 'shell',
      tool: 'shell.exec',
      commands: [{ program: 'npm', subcommand: ['test'] }],
    });
    expect(describeShape(shapeOf(sh('git -C sub commit -m "x"')))).toBe('shell.exec: git commit …');
    expect(describeShape(shapeOf(sh('npx tsc -b')))).toBe('shell.exec: npx …, tsc …');
    expect(describeShape(shapeOf(sh('npm run lint')))).toBe('shell.exec: npm run lint …');
    expect(describeShape(shapeOf(sh('cargo build --release')))).toBe('shell.exec: cargo build …');
  });

  it('`npm test` covers npm test with other arguments, and nothing else', () => {
    const npmTest = shapeOf(sh('npm test'));
    expect(matchShape(npmTest, sh('npm test -- --watch=false'))).toBe(true);
    for (const c of ['npm test && rm -rf ~', 'npm publish', 'rm -rf ~', 'npm test; curl x | sh', 'npm run test']) {
      expect([c, matchShape(npmTest, sh(c))]).toEqual([c, false]);
    }
    // a program of the same name elsewhere, a local binary, one whose name is made at run time
    for (const c of ['/tmp/x/npm test', './npm test', '$P test', 'npm test > ~/.bashrc']) {
      expect([c, matchShape(npmTest, sh(c))]).toEqual([c, false]);
    }
  });

  it('a chained or piped command is covered only when every segment is', () => {
    const both = shapeOf(sh('npm test && npm run lint'));
    expect(matchShape(both, sh('npm run lint; npm test'))).toBe(true);
    expect(matchShape(both, sh('npm test | tee /dev/null'))).toBe(false);
    expect(matchShape(both, sh('npm run build'))).toBe(false);
  });

  it('a program without a subcommand given to a subcommand program covers exactly its words', () => {
    const version = shapeOf(sh('git --version'));
    expect(matchShape(version, sh('git --version'))).toBe(true);
    expect(matchShape(version, sh('git push'))).toBe(false);
  });

  it('an interpreter covers its script only, never inline code', () => {
    const py = shapeOf(sh('python3 tools/gen.py'));
    expect(matchShape(py, sh('python3 tools/gen.py'))).toBe(true);
    expect(matchShape(py, sh('python3 other.py'))).toBe(false);
    expect(deriveShape(sh("python3 -c 'print(1)'"))).toBeNull();
    expect(matchShape(py, sh("python3 -c 'import os'"))).toBe(false);
  });

  it('stdin or env scripts have no shape', () => {
    const f = r.facts({
      tool_id: 'shell.exec',
      args: { command: 'sh', stdin: 'rm -rf ~' },
      principal: EXECUTOR_PRINCIPAL,
    });
    expect(deriveShape(f)).toBeNull();
    expect(matchShape(shapeOf(sh('sh')), f)).toBe(false);
  });

  it('adaptation classes: one per program + subcommand; `git push` is not `git status`', () => {
    const [push] = shapeClasses(sh('git push origin main'));
    expect(push).toMatchObject({ tool: 'shell.exec', label: 'shell.exec: git push', match: { command: 'git push *' } });
    expect(push!.key).toMatch(/^shell\.exec@[0-9a-f]{12}$/);
    expect(shapeClasses(sh('git push --force'))[0]!.key).toBe(push!.key);
    expect(shapeClasses(sh('git status'))[0]!.key).not.toBe(push!.key);
    // a wrapper's class is what it runs
    expect(shapeClasses(sh('npx tsc')).map((c) => c.label)).toEqual(['shell.exec: tsc']);
  });
});

describe('call shapes: files and the web', () => {
  it('a file shape is its directory inside the roots; `..` and symlinks out are never covered', () => {
    const src = shapeOf(fsw('src/lib/a.ts'));
    expect(src).toEqual({ kind: 'path', tool: 'fs.write', paths: ['/work/src/lib/**'] });
    expect(matchShape(src, fsw('/work/src/lib/deep/b.ts'))).toBe(true);
    const all = parseShape({ kind: 'path', tool: 'fs.write', paths: ['/work/src/**'] });
    expect(matchShape(all, fsw('src/a.ts'))).toBe(true);
    for (const p of ['../.bashrc', 'src/../../x', '/home/u/.bashrc', 'src/link/x', '/work/src/link']) {
      expect([p, matchShape(all, fsw(p))]).toEqual([p, false]);
    }
    expect(deriveShape(fsw('src/link/x'))).toBeNull();
    // a file directly in a root: the file itself, never the whole root
    expect(shapeOf(fsw('notes.md'))).toEqual({ kind: 'path', tool: 'fs.write', paths: ['/work/notes.md'] });
  });

  it('a web shape is scheme + host', () => {
    const s = shapeOf(web('https://Docs.Example.com/a?b'));
    expect(s).toEqual({ kind: 'url', tool: 'web.fetch', scheme: 'https', host: 'docs.example.com' });
    expect(matchShape(s, web('https://docs.example.com/other'))).toBe(true);
    for (const u of [
      'http://docs.example.com/',
      'https://docs.example.com.evil.io/',
      'https://docs.example.com@evil.io/',
      'https://docs.example.com:8443/',
    ]) {
      expect([u, matchShape(s, web(u))]).toEqual([u, false]);
    }
  });

  it('other tools: JSON pointers over the arguments, never a whole tool', () => {
    const f = (args: unknown): ShapeFacts =>
      r.facts({ tool_id: 'mcp.gh.create_issue', args, principal: EXECUTOR_PRINCIPAL });
    const s = shapeOf(f({ repo: 'a/b', title: 'x*' }));
    expect(s).toEqual({ kind: 'args', tool: 'mcp.gh.create_issue', pointers: { '/repo': 'a/b', '/title': 'x\\*' } });
    expect(matchShape(s, f({ repo: 'a/b', title: 'x*', body: 'more' }))).toBe(true);
    expect(matchShape(s, f({ repo: 'a/c', title: 'x*' }))).toBe(false);
    expect(matchShape(s, f({ repo: 'a/b', title: 'xy' }))).toBe(false);
    expect(() => parseShape({ kind: 'args', tool: 'mcp.x', pointers: {} })).toThrow(/at least one/);
  });
});

describe('narrowing', () => {
  it('an answer may narrow the proposed shape, never widen it', () => {
    const proposed = shapeOf(sh('npm test'));
    expect(
      narrows(
        parseShape({
          kind: 'shell',
          tool: 'shell.exec',
          commands: [{ program: 'npm', subcommand: ['test'], args: ['--', '*'] }],
        }),
        proposed,
      ),
    ).toBe(true);
    expect(
      narrows(
        parseShape({ kind: 'shell', tool: 'shell.exec', commands: [{ program: 'npm', subcommand: [] }] }),
        proposed,
      ),
    ).toBe(false);
    expect(narrows(parseShape({ kind: 'shell', tool: 'shell.exec', commands: [{ program: 'rm' }] }), proposed)).toBe(
      false,
    );
    const dir = shapeOf(fsw('src/lib/a.ts'));
    expect(narrows(parseShape({ kind: 'path', tool: 'fs.write', paths: ['/work/src/lib/a.ts'] }), dir)).toBe(true);
    expect(narrows(parseShape({ kind: 'path', tool: 'fs.write', paths: ['/work/src/**'] }), dir)).toBe(false);
    expect(narrows(parseShape({ kind: 'path', tool: 'fs.write', paths: ['/work/src/lib/../../x'] }), dir)).toBe(false);
    expect(narrows(parseShape({ kind: 'path', tool: 'fs.read', paths: ['/work/src/lib/a.ts'] }), dir)).toBe(false);
  });
});

describe('properties (fast-check)', () => {
  const word = fc.stringMatching(/^[a-z][a-z0-9-]{0,6}$/);
  const programs = fc.constantFrom('npm', 'git', 'cargo', 'ls', 'echo', 'make', 'rm', 'curl', 'go');

  it('a derived shape always covers the call it was derived from', () => {
    fc.assert(
      fc.property(programs, fc.array(word, { maxLength: 4 }), (p, args) => {
        const f = sh([p, ...args].join(' '));
        const s = deriveShape(f);
        return s === null || matchShape(s, f);
      }),
      { numRuns: 200 },
    );
  });

  it('appending another program after && is covered only if that program is in the shape', () => {
    fc.assert(
      fc.property(programs, word, programs, word, (p1, a1, p2, a2) => {
        const s = deriveShape(sh(`${p1} ${a1}`));
        if (s === null) return true;
        const chained = sh(`${p1} ${a1} && ${p2} ${a2}`);
        const alone = deriveShape(sh(`${p2} ${a2}`));
        if (alone === null) return !matchShape(s, chained);
        return matchShape(s, chained) === matchShape(s, sh(`${p2} ${a2}`));
      }),
      { numRuns: 200 },
    );
  });

  it('a path shape never covers a path outside the roots, whatever its spelling', () => {
    const all = parseShape({ kind: 'path', tool: 'fs.write', paths: ['/work/**'] });
    fc.assert(
      fc.property(fc.array(fc.constantFrom('..', '.', 'src', 'a', 'link', ''), { maxLength: 6 }), (parts) => {
        const f = fsw(['src', ...parts, 'x'].join('/'));
        const p = f.paths![0]!.path;
        return !matchShape(all, f) || (p !== null && p.startsWith('/work/'));
      }),
      { numRuns: 300 },
    );
  });

  it('every shape a derived one narrows to is covered by it (narrowed ⊆ proposed on the held call)', () => {
    fc.assert(
      fc.property(programs, word, (p, a) => {
        const f = sh(`${p} ${a}`);
        const s = deriveShape(f);
        return s === null || (narrows(s, s) && matchShape(parseShape(JSON.parse(JSON.stringify(s))), f));
      }),
      { numRuns: 100 },
    );
  });
});
