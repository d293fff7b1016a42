import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const IMPORT_RE = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^']+)'|import\(\s*'([^']+)'\s*\)/g;

/** Every bare package a source file reaches through its relative imports, and which file imports it. */
function reachablePackages(entry: string): Map<string, string> {
  const seen = new Set<string>();
  const packages = new Map<string, string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(IMPORT_RE)) {
      const spec = m[1] ?? m[2]!;
      if (spec.startsWith('.')) visit(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
      else if (!packages.has(spec)) packages.set(spec, path.relative(SRC, file));
    }
  };
  visit(path.join(SRC, entry));
  return packages;
}

describe('@finger/hub entries', () => {
  it('the root entry never loads ioredis (it lives behind @finger/hub/redis)', () => {
    const pkgs = reachablePackages('index.ts');
    expect(pkgs.has('@finger/protocol')).toBe(true);
    expect(pkgs.get('ioredis')).toBeUndefined();
  });

  it('the redis entry does load ioredis', () => {
    expect(reachablePackages('redis.ts').get('ioredis')).toMatch(/^store\/redis-[a-z-]+\.ts$/);
  });
});
