// Issue 28 item 8: `myfinger` on the PATH from the clone. The root package has a `bin`, so
// `npm install -g . --ignore-scripts` (after `npm ci` built the clone) links the command to this
// clone, and it works from any directory. Every package stays private (the `@finger` scope is not
// ours on the public registry), and no doc tells users to install an `@finger/…` package by name.
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { describe, expect, it } from 'vitest';

import { tempDir } from '@finger/testkit';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../..', import.meta.url));

async function packageFiles(): Promise<string[]> {
  const root = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { workspaces: string[] };
  const out = ['package.json'];
  for (const w of root.workspaces) {
    if (!w.endsWith('/*')) {
      out.push(join(w, 'package.json'));
      continue;
    }
    const dir = w.slice(0, -2);
    for (const e of await readdir(join(REPO, dir), { withFileTypes: true })) {
      // a module in another language (pyworker) has no package.json
      const names = e.isDirectory() ? await readdir(join(REPO, dir, e.name)) : [];
      if (names.includes('package.json')) out.push(join(dir, e.name, 'package.json'));
    }
  }
  return out;
}

describe('myfinger on the PATH from the clone', () => {
  it('npm install -g . --ignore-scripts links a myfinger that runs from any directory', async () => {
    await using prefix = await tempDir('finger-e2e-prefix-');
    await using elsewhere = await tempDir('finger-e2e-elsewhere-');
    const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1' };
    await run('npm', ['install', '-g', '.', '--ignore-scripts', '--prefix', prefix.path, '--no-audit', '--no-fund'], {
      cwd: REPO,
      env: { ...env, npm_config_update_notifier: 'false' },
      timeout: 120_000,
    });
    const bin = join(prefix.path, 'bin', 'myfinger');
    const version = await run(bin, ['--version'], { cwd: elsewhere.path, env, timeout: 30_000 });
    expect(version.stdout.trim()).toBe(
      JSON.parse(await readFile(join(REPO, 'packages/cli/package.json'), 'utf8')).version,
    );
    const help = await run(bin, ['--help'], { cwd: elsewhere.path, env, timeout: 30_000 });
    expect(help.stdout).toMatch(/^Usage: myfinger /);
    // no daemon listens on port 1: the command itself ran (its exit code says "not running")
    const status = await run(bin, ['daemon', 'status', '--json'], {
      cwd: elsewhere.path,
      env: { ...env, FINGER_HOME: elsewhere.path, FINGER_URL: 'http://127.0.0.1:1' },
      timeout: 30_000,
    }).catch((e: { code: number; stdout: string; stderr: string }) => e);
    expect((status as { code?: number }).code).toBe(3);
  });

  it('every package is private', async () => {
    const files = await packageFiles();
    expect(files.length).toBeGreaterThan(10);
    const notPrivate: string[] = [];
    for (const f of files) {
      const p = JSON.parse(await readFile(join(REPO, f), 'utf8')) as { private?: boolean };
      if (p.private !== true) notPrivate.push(f);
    }
    expect(notPrivate).toEqual([]);
  });

  it('no doc tells users to install an @finger/… package by name', async () => {
    const docs = [
      'README.md',
      'packages/cli/README.md',
      ...(await readdir(join(REPO, 'docs'))).map((f) => join('docs', f)),
    ];
    const hits: string[] = [];
    for (const f of docs.filter((d) => d.endsWith('.md'))) {
      const text = await readFile(join(REPO, f), 'utf8');
      for (const m of text.matchAll(/\b(?:npm|pnpm|yarn|npx)\s+(?:install|i|add|-y|exec)\b[^\n`]*@finger\//g))
        hits.push(`${f}: ${m[0]}`);
    }
    expect(hits).toEqual([]);
  });
});
