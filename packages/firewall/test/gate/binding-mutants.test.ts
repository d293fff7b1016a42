// Edges of the approval binding (gate/binding.ts) left open by the first Stryker run (issue 22):
// arguments with no canonical digest, previews without a file hash, and the exact reason a
// bound file that was not rechecked fails.

import { describe, expect, it } from 'vitest';

import { argsDigest, bindingOf, digestOf, verifyBinding } from '../../src/index.js';
import { diffPreview } from './gate-fixtures.js';

const SHA_A = 'a'.repeat(64);

describe('approval binding edges', () => {
  const args = { path: '/work/a.txt', content: 'new' };

  it('gives arguments with no canonical JSON form the digest "unserializable", which no JSON arguments match', () => {
    const cyclic: Record<string, unknown> = { path: '/work/a.txt' };
    cyclic.self = cyclic;
    expect(argsDigest({ count: 1n })).toBe('unserializable');
    expect(argsDigest(cyclic)).toBe('unserializable');
    expect(bindingOf({ count: 1n })).toStrictEqual({ args_digest: 'unserializable' });
    expect(verifyBinding(bindingOf({ count: 1n }), { count: 1 })).toEqual({
      ok: false,
      field: 'args',
      reason: 'the arguments changed after they were approved',
    });
  });

  it('arguments with no canonical form match no approval, not even one of other such arguments', () => {
    const approval = bindingOf({ count: 1n });
    expect(verifyBinding(approval, { count: 2n })).toEqual({
      ok: false,
      field: 'args',
      reason: 'the arguments changed after they were approved',
    });
    expect(verifyBinding(approval, { count: 1n }).ok).toBe(false);
  });

  it('binds no file hash key for a preview that has none', () => {
    const command = { kind: 'command' as const, text: 'git push', cwd: '/work' };
    expect(bindingOf(args, command)).toStrictEqual({ args_digest: digestOf(args) });
  });

  it('a bound file (existing or absent) whose current hash was not given fails as not rechecked', () => {
    const notRechecked = {
      ok: false,
      field: 'file_sha256',
      reason: 'the approved file content was not rechecked before running',
    };
    expect(verifyBinding(bindingOf(args, diffPreview(SHA_A)), args)).toEqual(notRechecked);
    expect(verifyBinding(bindingOf(args, diffPreview(null)), args)).toEqual(notRechecked);
    expect(verifyBinding(bindingOf(args, diffPreview(null)), args, undefined)).toEqual(notRechecked);
  });
});
