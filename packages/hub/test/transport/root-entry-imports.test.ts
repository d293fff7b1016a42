import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

/** Every bare package a source file imports (statically or dynamically), following relative imports. */
function packagesReachedFrom(entry: string): Map<string, string> {
  const seen = new Set<string>();
  const packages = new Map<string, string>();
  const queue = [resolve(SRC, entry)];
  const spec =
    /(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(spec)) {
      const s = m[1] ?? m[2] ?? m[3]!;
      if (s.startsWith('.')) queue.push(resolve(dirname(file), s.replace(/\.js$/, '.ts')));
      else if (!s.startsWith('node:'))
        packages.set(s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!, file);
    }
  }
  return packages;
}

describe('@finger/hub entry points', () => {
  it('the root entry never reaches the nats client (only @finger/hub/nats does)', () => {
    const root = packagesReachedFrom('index.ts');
    expect(root.has('nats'), `nats imported by ${root.get('nats')}`).toBe(false);
    expect(packagesReachedFrom('nats.ts').has('nats')).toBe(true);
  });
});
