import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
/** Static value imports and re-exports (type-only ones and dynamic `import()` are left out). */
const STATIC_RE = /(?:^|\n)\s*(?:import|export)\s+(?!type\b)[^;]*?from\s+'([^']+)'/g;

/** Bare packages statically reachable from `entry` through relative imports. */
function staticPackages(entry: string): Set<string> {
  const seen = new Set<string>();
  const out = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(STATIC_RE)) {
      const spec = m[1]!;
      if (spec.startsWith('.')) visit(path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts')));
      else out.add(spec);
    }
  };
  visit(path.join(SRC, entry));
  return out;
}

describe('the daemon without redis.url', () => {
  it('never loads ioredis: @finger/hub/redis is imported only when Redis is configured', () => {
    const pkgs = staticPackages('index.ts');
    expect(pkgs.has('@finger/hub')).toBe(true);
    expect(pkgs.has('@finger/hub/redis')).toBe(false);
    expect(pkgs.has('ioredis')).toBe(false);
  });
});
