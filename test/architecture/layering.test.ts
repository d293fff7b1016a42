// Layering (issue 26 item 4): `npm run lint:deps` — the dependency-cruiser step of `npm run lint`,
// run here exactly as package.json spells it — fails on a forbidden import in a fixture tree laid
// out like the repository, names the rule, and lets a known violation through; the package
// diagram of docs/architecture.md is what scripts/docs-graph.mjs generates.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPTS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts;

interface Run {
  code: number;
  out: string;
}

/** Runs a shell command line in `cwd` with the repository's node_modules/.bin first on PATH. */
function sh(line: string, cwd: string): Promise<Run> {
  const env = { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH ?? ''}` };
  return new Promise((resolve) => {
    execFile('sh', ['-c', line], { cwd, env, timeout: 60_000, maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, out: `${stdout}${stderr}` });
    });
  });
}

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'finger-layering-'));
  dirs.push(root);
  write(root, files);
  return root;
}

function write(root: string, files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
}

/** A small repository: the real rule, @finger/* mapped to src/ as in tsconfig.test.json, allowed imports only. */
function cleanRepo(): string {
  const paths: Record<string, string[]> = {};
  for (const p of ['protocol', 'hub', 'firewall', 'cli']) paths[`@finger/${p}`] = [`packages/${p}/src/index.ts`];
  return tree({
    '.dependency-cruiser.mjs': readFileSync(join(ROOT, '.dependency-cruiser.mjs'), 'utf8'),
    '.dependency-cruiser-known-violations.json': '[]\n',
    'tsconfig.test.json': JSON.stringify({ compilerOptions: { baseUrl: '.', paths } }),
    'packages/protocol/src/index.ts': 'export const x = 1;\n',
    'packages/hub/src/index.ts': "import { x } from '@finger/protocol';\nexport const h = x;\n",
    'packages/hub/src/runtime/runtime.ts': 'export interface ToolCallContext {\n  id: string;\n}\n',
    'packages/firewall/src/index.ts': "import { x } from '@finger/protocol';\nexport const f = x;\n",
    // a cycle of type-only imports vanishes at run time: allowed
    'packages/firewall/src/a.ts': "import type { B } from './b.js';\nexport interface A {\n  b?: B;\n}\n",
    'packages/firewall/src/b.ts': "import type { A } from './a.js';\nexport interface B {\n  a?: A;\n}\n",
    'packages/cli/src/index.ts': "import { x } from '@finger/protocol';\nexport const c = x;\n",
    // an offline admin tool (CLI_OFFLINE_TOOLS) loads its package lazily: allowed
    'packages/cli/src/commands/audit.ts':
      "import type { f } from '@finger/firewall';\nexport const verify = async (): Promise<typeof f> => (await import('@finger/firewall')).f;\n",
    'modules/echo/src/index.ts': "import { h } from '@finger/hub';\nexport const e = h;\n",
  });
}

/** One forbidden import per rule, and the line `npm run lint:deps` reports for it. */
const FORBIDDEN: Record<string, { file: string; text: string; line: string }> = {
  'layer-protocol': {
    file: 'packages/protocol/src/leak.ts',
    text: "export { h } from '@finger/hub';\n",
    line: 'error layer-protocol: packages/protocol/src/leak.ts → packages/hub/src/index.ts',
  },
  'layer-modules': {
    file: 'modules/echo/src/undo.ts',
    text: "import { f } from '@finger/firewall';\nexport const u = f;\n",
    line: 'error layer-modules: modules/echo/src/undo.ts → packages/firewall/src/index.ts',
  },
  'no-internals': {
    file: 'modules/echo/src/context.ts',
    text: "import type { ToolCallContext } from '../../../packages/hub/src/runtime/runtime.js';\nexport type Ctx = ToolCallContext;\n",
    line: 'error no-internals: modules/echo/src/context.ts → packages/hub/src/runtime/runtime.ts',
  },
  'layer-cli': {
    file: 'packages/cli/src/policy.ts',
    text: "export const load = () => import('@finger/firewall');\n",
    line: 'error layer-cli: packages/cli/src/policy.ts → packages/firewall/src/index.ts',
  },
  // an offline admin tool importing what its CLI_OFFLINE_TOOLS entry does not name (router: agents only)
  'cli-offline-tool': {
    file: 'packages/cli/src/commands/router.ts',
    text: "export const load = () => import('@finger/firewall');\n",
    line: 'error cli-offline-tool: packages/cli/src/commands/router.ts → packages/firewall/src/index.ts',
  },
  // an offline admin tool loading its own package eagerly: every command would load the firewall
  'cli-offline-lazy': {
    file: 'packages/cli/src/commands/policy.ts',
    text: "import { f } from '@finger/firewall';\nexport const g = f;\n",
    line: 'error cli-offline-lazy: packages/cli/src/commands/policy.ts → packages/firewall/src/index.ts',
  },
  'layer-unlisted': {
    file: 'packages/newpkg/src/index.ts',
    text: "export { x } from '../../protocol/src/index.js';\n",
    line: 'error layer-unlisted: packages/newpkg/src/index.ts → packages/protocol/src/index.ts',
  },
  'no-runtime-cycle': {
    file: 'packages/hub/src/cycle-a.ts',
    text: "import { b } from './cycle-b.js';\nexport const a = () => b;\n",
    line: 'error no-runtime-cycle: packages/hub/src/cycle-a.ts →',
  },
  'not-to-unresolvable': {
    file: 'packages/hub/src/typo.ts',
    text: "export { x } from '@finger/protocoll';\n",
    line: 'error not-to-unresolvable: packages/hub/src/typo.ts → @finger/protocoll',
  },
};
const CYCLE_PARTNER = {
  'packages/hub/src/cycle-b.ts': "import { a } from './cycle-a.js';\nexport const b = () => a;\n",
};

function errorLines(out: string): string[] {
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('error '));
}

describe('npm run lint:deps (dependency-cruiser, issue 26 item 4)', () => {
  it('passes a tree that keeps the layering, type-only cycles included', async () => {
    const r = await sh(SCRIPTS['lint:deps']!, cleanRepo());
    expect(r.out).toContain('no dependency violations found');
    expect(r.code).toBe(0);
  });

  it('fails on each forbidden import, naming its rule and the import', async () => {
    const root = cleanRepo();
    write(root, CYCLE_PARTNER);
    for (const f of Object.values(FORBIDDEN)) write(root, { [f.file]: f.text });
    const r = await sh(SCRIPTS['lint:deps']!, root);
    expect(r.code).not.toBe(0);
    const lines = errorLines(r.out);
    for (const [rule, f] of Object.entries(FORBIDDEN))
      expect(lines.filter((l) => l.startsWith(f.line)).length, `${rule}:\n${r.out}`).toBe(1);
    // the cycle is reported once, from the file of its first import; nothing else is reported
    expect(lines).toHaveLength(Object.keys(FORBIDDEN).length);
  });

  it('lets a recorded known violation through and fails on a new one (lint:deps:baseline)', async () => {
    const root = cleanRepo();
    const known = FORBIDDEN['layer-modules']!;
    write(root, { [known.file]: known.text });
    const baseline = await sh(SCRIPTS['lint:deps:baseline']!, root);
    expect(baseline.code, baseline.out).toBe(0);
    const recorded = JSON.parse(readFileSync(join(root, '.dependency-cruiser-known-violations.json'), 'utf8')) as {
      from: string;
      to: string;
      rule: { name: string };
    }[];
    expect(recorded.map((k) => [k.rule.name, k.from, k.to])).toEqual([
      ['layer-modules', 'modules/echo/src/undo.ts', 'packages/firewall/src/index.ts'],
    ]);
    const quiet = await sh(SCRIPTS['lint:deps']!, root);
    expect(quiet.out).toContain('1 known violations ignored');
    expect(quiet.code).toBe(0);

    const added = FORBIDDEN['layer-cli']!;
    write(root, { [added.file]: added.text });
    const r = await sh(SCRIPTS['lint:deps']!, root);
    expect(r.code).not.toBe(0);
    expect(errorLines(r.out)).toEqual([added.line]);
  });
});

describe('the package diagram in docs/architecture.md (npm run docs:graph)', () => {
  it('is what scripts/docs-graph.mjs generates from the package.json files and the rule', async () => {
    const r = await sh('node scripts/docs-graph.mjs --check', ROOT);
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
  });

  it('--check fails on a stale diagram and on a declared dependency the rule forbids', async () => {
    const pkg = (name: string, deps: string[]) =>
      JSON.stringify({ name, dependencies: Object.fromEntries(deps.map((d) => [d, '0.1.0'])) });
    const root = tree({
      '.dependency-cruiser-known-violations.json': '[]\n',
      'packages/protocol/package.json': pkg('@finger/protocol', ['@finger/hub']),
      'packages/hub/package.json': pkg('@finger/hub', ['@finger/protocol']),
      'modules/echo/package.json': pkg('@finger/module-echo', ['@finger/hub']),
    });
    // the markers must be the ones the script writes
    const begin = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8').match(/<!-- package-graph:begin[^>]*-->/);
    expect(begin).not.toBeNull();
    write(root, { 'docs/architecture.md': `# A\n\n${begin![0]}\n<!-- package-graph:end -->\n` });
    const script = join(ROOT, 'scripts/docs-graph.mjs');
    const r = await sh(`node ${script} --check --root=${root}`, root);
    expect(r.code).toBe(1);
    expect(r.out.trim().split('\n')).toEqual([
      'docs:graph: packages/protocol/package.json depends on @finger/hub, which LAYERS.protocol of .dependency-cruiser.mjs does not allow',
      'docs:graph: the package graph in docs/architecture.md is stale: run npm run docs:graph',
    ]);
  });
});
