// Mutation survivors of finger-places.ts: which of finger's places a path lies in, with a file
// system the test controls (symlinked homes, unresolvable homes, exempt roots, guarded files).

import { describe, expect, it } from 'vitest';

import { FingerPlaces } from '../../src/sandbox/finger-places.js';
import type { SandboxFs } from '../../src/sandbox/real-path.js';

function errno(code: string): Error {
  return Object.assign(new Error(code), { code });
}

/** A file system where `links` maps a path to its real path, `loops` never resolve, all else is real as written. */
function fakeFs(links: Record<string, string> = {}, loops: readonly string[] = []): SandboxFs & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    realpath(p: string): string {
      calls.push(p);
      if (loops.includes(p)) throw errno('ELOOP');
      return links[p] ?? p;
    },
    lstat: () => ({ isSymbolicLink: () => false, isFile: () => true, nlink: 1 }),
  };
}

describe('FingerPlaces.placeOf', () => {
  it('a guarded file is its own place; another file beside it is none', () => {
    const f = new FingerPlaces(fakeFs(), ['/srv/fh'], ['/etc/finger/admin.token'], []);
    expect(f.placeOf('/etc/finger/admin.token')).toBe('/etc/finger/admin.token');
    expect(f.placeOf('/etc/finger/other')).toBeNull();
    expect(f.placeOf('/srv/fh/token')).toBe('/srv/fh');
  });

  it('guarded paths are resolved to absolute paths', () => {
    const f = new FingerPlaces(fakeFs(), [], ['relative.token'], []);
    const abs = `${process.cwd()}/relative.token`;
    expect(f.placeOf(abs)).toBe(abs);
  });

  it('a symlinked home is found by its real path too', () => {
    const f = new FingerPlaces(fakeFs({ '/link/fh': '/real/fh' }), ['/link/fh'], [], []);
    expect(f.placeOf('/real/fh/token')).toBe('/real/fh');
    expect(f.placeOf('/link/fh/token')).toBe('/link/fh');
  });

  it('a home that cannot be resolved is still matched as written, and nothing else is', () => {
    const f = new FingerPlaces(fakeFs({}, ['/loop/fh']), ['/loop/fh'], [], []);
    expect(f.placeOf('/elsewhere/x')).toBeNull();
    expect(f.placeOf('/loop/fh/token')).toBe('/loop/fh');
  });

  it('an exempt root that cannot be resolved adds no other root', () => {
    const f = new FingerPlaces(fakeFs({}, ['/srv/fh/loop']), ['/srv/fh'], [], ['/srv/fh/ws', '/srv/fh/loop']);
    expect(f.placeOf('/srv/fh/token')).toBe('/srv/fh');
    expect(f.placeOf('/srv/fh/loop/x')).toBeNull();
  });

  it('resolves the places once', () => {
    const fs = fakeFs({ '/link/fh': '/real/fh' });
    const f = new FingerPlaces(fs, ['/link/fh'], ['/etc/g'], ['/link/fh/ws']);
    f.placeOf('/real/fh/a');
    const after = fs.calls.length;
    expect(after).toBeGreaterThan(0);
    f.placeOf('/real/fh/b');
    f.placeOf('/elsewhere');
    expect(fs.calls).toHaveLength(after);
  });

  it('a path in an exempt root inside the home is in none; the rest of the home is the home', () => {
    const f = new FingerPlaces(fakeFs(), ['/srv/fh'], [], ['/srv/fh/ws', '/other/ws']);
    expect(f.placeOf('/srv/fh/ws/x')).toBeNull();
    expect(f.placeOf('/srv/fh/ws')).toBeNull();
    expect(f.placeOf('/srv/fh/token')).toBe('/srv/fh');
    expect(f.placeOf('/other/ws/x')).toBeNull();
  });

  it('an exempt root that is the home itself, or holds it, exempts nothing', () => {
    expect(new FingerPlaces(fakeFs(), ['/srv/fh'], [], ['/srv/fh']).placeOf('/srv/fh/token')).toBe('/srv/fh');
    expect(new FingerPlaces(fakeFs(), ['/srv/fh'], [], ['/srv']).placeOf('/srv/fh/token')).toBe('/srv/fh');
  });
});
