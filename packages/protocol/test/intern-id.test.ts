import { describe, expect, it } from 'vitest';

import { internId } from '../src/index.js';

describe('internId', () => {
  it('returns the same text for any string, including keys that are special elsewhere', () => {
    for (const s of [
      'echo.echo',
      '',
      '__proto__',
      'constructor',
      '1',
      '01',
      '-0',
      'a b',
      'ünïcödé.tool',
      'x'.repeat(5000),
    ])
      expect(internId(s)).toBe(s);
  });

  it('is stable: the same text twice gives equal strings', () => {
    const m = 'fs';
    expect(internId(`${m}.read`)).toBe(internId(`${m}.read`));
  });
});
