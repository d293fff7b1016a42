import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { assertManifest } from '@finger/protocol';

import { type FsHarness, MANIFEST, startFs } from './helpers.js';

let h: FsHarness;
beforeEach(async () => {
  h = await startFs();
});
afterEach(async () => {
  await h.close();
});

describe('fs module manifest', () => {
  it('is valid and declares every tool with its risk and capability level', () => {
    expect(() => assertManifest(MANIFEST)).not.toThrow();
    expect(MANIFEST.id).toBe('fs');
    expect(MANIFEST.runtime).toEqual({ type: 'inprocess', entry: './dist/index.js' });
    expect(MANIFEST.grants).toEqual(['executor']);
    expect(MANIFEST.tools.map((t) => [t.name, t.risk_level, t.capability_level, t.side_effects])).toEqual([
      ['read', 'low', 'L0', false],
      ['list', 'low', 'L0', false],
      ['stat', 'low', 'L0', false],
      ['write', 'medium', 'L1', true],
      ['patch', 'medium', 'L1', true],
      ['delete', 'high', 'L1', true],
      ['backups', 'low', 'L0', false],
      ['undo', 'medium', 'L1', true],
    ]);
    for (const t of MANIFEST.tools) {
      expect(t.input_schema).toBeDefined();
      expect(t.output_schema).toBeDefined();
    }
  });
});

describe('fs read / write / list / stat', () => {
  it('writes a new file (creating parents on request) and reads it back', async () => {
    const w = await h.call('write', { path: 'docs/a.txt', content: 'héllo\n', create_dirs: true });
    expect(w).toEqual({
      path: path.join(h.ws, 'docs', 'a.txt'),
      bytes: 7,
      backup_id: expect.any(String),
      created: true,
    });
    const r = await h.call('read', { path: 'docs/a.txt' });
    expect(r).toEqual({
      path: path.join(h.ws, 'docs', 'a.txt'),
      encoding: 'utf8',
      content: 'héllo\n',
      bytes: 7,
      size: 7,
      offset: 0,
      eof: true,
    });
    expect(await h.call('read', { path: 'docs/a.txt', offset: 3, length: 2 })).toMatchObject({
      content: 'll',
      bytes: 2,
      eof: false,
    });
  });

  it('refuses a write whose parent is missing unless create_dirs is set', async () => {
    expect(await h.codeOf('write', { path: 'no/such/dir.txt', content: 'x' })).toBe('E_NOT_FOUND');
  });

  it('round-trips random binary content byte for byte through base64', async () => {
    const bytes = randomBytes(65_537);
    await h.call('write', { path: 'blob.bin', content: bytes.toString('base64'), encoding: 'base64' });
    expect(Buffer.compare(await fsp.readFile(path.join(h.ws, 'blob.bin')), bytes)).toBe(0);
    const r = await h.call('read', { path: 'blob.bin', encoding: 'base64' });
    expect(r.size).toBe(65_537);
    expect(Buffer.compare(Buffer.from(r.content, 'base64'), bytes)).toBe(0);
  });

  it('refuses to decode invalid UTF-8 as utf8 and suggests base64', async () => {
    await fsp.writeFile(path.join(h.ws, 'bad.bin'), Buffer.from([0x61, 0xff, 0xfe, 0x62]));
    const err = await h.errorOf('read', { path: 'bad.bin' });
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.message).toContain('base64');
  });

  it('refuses malformed base64 content', async () => {
    expect(await h.codeOf('write', { path: 'x.bin', content: 'not*base64!', encoding: 'base64' })).toBe(
      'E_INVALID_ARGS',
    );
  });

  it('keeps the mode of an existing file and writes atomically (no temp files left)', async () => {
    const f = path.join(h.ws, 'run.sh');
    await fsp.writeFile(f, '#!/bin/sh\n');
    await fsp.chmod(f, 0o750);
    await h.call('write', { path: 'run.sh', content: '#!/bin/sh\necho hi\n' });
    expect((await fsp.stat(f)).mode & 0o777).toBe(0o750);
    expect(await fsp.readdir(h.ws)).toEqual(['run.sh']);
  });

  it('lists sorted entries, recursively, with explicit truncation and total', async () => {
    await fsp.mkdir(path.join(h.ws, 'd', 'e'), { recursive: true });
    await fsp.writeFile(path.join(h.ws, 'b.txt'), 'bb');
    await fsp.writeFile(path.join(h.ws, 'd', 'c.txt'), 'c');
    await fsp.writeFile(path.join(h.ws, 'd', 'e', 'f.txt'), '');
    expect(await h.call('list', {})).toEqual({
      path: h.ws,
      entries: [
        { path: 'b.txt', type: 'file', size: 2 },
        { path: 'd', type: 'dir' },
      ],
      total: 2,
      truncated: false,
    });
    expect(await h.call('list', { path: 'd', recursive: true })).toEqual({
      path: path.join(h.ws, 'd'),
      entries: [
        { path: 'c.txt', type: 'file', size: 1 },
        { path: 'e', type: 'dir' },
        { path: 'e/f.txt', type: 'file', size: 0 },
      ],
      total: 3,
      truncated: false,
    });
    const t = await h.call('list', { recursive: true, max_entries: 2 });
    expect(t).toMatchObject({ total: 5, truncated: true });
    expect(t.entries).toHaveLength(2);
    expect(await h.codeOf('list', { path: 'b.txt' })).toBe('E_INVALID_ARGS');
  });

  it('stats files, directories and missing paths', async () => {
    await fsp.writeFile(path.join(h.ws, 's.txt'), 'abc');
    await fsp.chmod(path.join(h.ws, 's.txt'), 0o644);
    expect(await h.call('stat', { path: 's.txt' })).toEqual({
      path: path.join(h.ws, 's.txt'),
      exists: true,
      type: 'file',
      size: 3,
      mode: '0644',
      mtime: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(await h.call('stat', { path: '.' })).toMatchObject({ exists: true, type: 'dir' });
    expect(await h.call('stat', { path: 'nope' })).toEqual({ path: path.join(h.ws, 'nope'), exists: false });
  });

  it('reads: E_NOT_FOUND for a missing file, E_INVALID_ARGS for a directory', async () => {
    expect(await h.codeOf('read', { path: 'missing.txt' })).toBe('E_NOT_FOUND');
    expect(await h.codeOf('read', { path: '.' })).toBe('E_INVALID_ARGS');
  });
});

describe('fs size limits', () => {
  it('fail loudly with E_INVALID_ARGS naming the limit', async () => {
    await h.close();
    h = await startFs({ max_read_bytes: 100, max_write_bytes: 50, max_backup_bytes: 80 });
    const big = Buffer.alloc(120, 0x61);
    await fsp.writeFile(path.join(h.ws, 'big.txt'), big);

    const r = await h.errorOf('read', { path: 'big.txt' });
    expect(r.code).toBe('E_INVALID_ARGS');
    expect(r.message).toContain('max_read_bytes (100)');
    expect(r.details).toEqual({ path: 'big.txt', size: 120, requested: 120, max_read_bytes: 100 });
    // A range within the limit is fine.
    expect(await h.call('read', { path: 'big.txt', offset: 100 })).toMatchObject({ bytes: 20, eof: true });

    const w = await h.errorOf('write', { path: 'w.txt', content: 'x'.repeat(51) });
    expect(w.code).toBe('E_INVALID_ARGS');
    expect(w.message).toContain('max_write_bytes (50)');

    // The backup of the 120-byte file would exceed max_backup_bytes: the write is refused.
    const b = await h.errorOf('write', { path: 'big.txt', content: 'small' });
    expect(b.code).toBe('E_INVALID_ARGS');
    expect(b.message).toContain('max_backup_bytes (80)');
    expect(Buffer.compare(await fsp.readFile(path.join(h.ws, 'big.txt')), big)).toBe(0);
    expect(await h.codeOf('delete', { path: 'big.txt' })).toBe('E_INVALID_ARGS');
    expect(await fsp.stat(path.join(h.ws, 'big.txt'))).toBeTruthy();
  });
});

describe('fs patch', () => {
  const original = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', ''].join('\n');
  const diff = [
    '--- a/p.txt',
    '+++ b/p.txt',
    '@@ -1,4 +1,4 @@',
    ' one',
    '-two',
    '+TWO',
    ' three',
    ' four',
    '@@ -7,4 +7,4 @@',
    ' seven',
    ' eight',
    '-nine',
    '+NINE',
    ' ten',
    '',
  ].join('\n');

  beforeEach(async () => {
    await fsp.writeFile(path.join(h.ws, 'p.txt'), original);
  });

  it('applies a unified diff', async () => {
    const r = await h.call('patch', { path: 'p.txt', diff });
    expect(r).toEqual({
      path: path.join(h.ws, 'p.txt'),
      backup_id: expect.any(String),
      hunks_applied: 2,
      bytes: original.length,
    });
    expect(await fsp.readFile(path.join(h.ws, 'p.txt'), 'utf8')).toBe(
      original.replace('two', 'TWO').replace('nine', 'NINE'),
    );
  });

  it('fails with E_INVALID_ARGS naming the hunk that does not apply, writing nothing', async () => {
    await fsp.writeFile(path.join(h.ws, 'p.txt'), original.replace('eight', 'EIGHT'));
    const err = await h.errorOf('patch', { path: 'p.txt', diff });
    expect(err.code).toBe('E_INVALID_ARGS');
    expect(err.message).toContain('hunk 2 of 2');
    expect(err.details).toEqual({ hunk: 2, header: '@@ -7,4 +7,4 @@', hunks: 2 });
    expect(await fsp.readFile(path.join(h.ws, 'p.txt'), 'utf8')).toBe(original.replace('eight', 'EIGHT'));
    expect(await h.codeOf('patch', { path: 'p.txt', diff: 'this is not a diff' })).toBe('E_INVALID_ARGS');
  });

  it('applies search/replace edits that match exactly count times', async () => {
    const r = await h.call('patch', {
      path: 'p.txt',
      edits: [
        { search: 'three', replace: '3' },
        { search: 'e\n', replace: 'E\n', count: 3 },
      ],
    });
    expect(r.hunks_applied).toBe(2);
    expect(await fsp.readFile(path.join(h.ws, 'p.txt'), 'utf8')).toBe(
      ['onE', 'two', '3', 'four', 'fivE', 'six', 'seven', 'eight', 'ninE', 'ten', ''].join('\n'),
    );
  });

  it('refuses edits whose search text occurs a different number of times', async () => {
    const missing = await h.errorOf('patch', { path: 'p.txt', edits: [{ search: 'eleven', replace: '11' }] });
    expect(missing.code).toBe('E_INVALID_ARGS');
    expect(missing.details).toEqual({ edit: 1, found: 0, expected: 1 });
    const many = await h.errorOf('patch', { path: 'p.txt', edits: [{ search: 'o', replace: '0' }] });
    expect(many.details).toEqual({ edit: 1, found: 3, expected: 1 });
    expect(await fsp.readFile(path.join(h.ws, 'p.txt'), 'utf8')).toBe(original);
  });

  it('needs exactly one of diff and edits, and an existing file', async () => {
    expect(await h.codeOf('patch', { path: 'p.txt' })).toBe('E_INVALID_ARGS');
    expect(await h.codeOf('patch', { path: 'p.txt', diff, edits: [{ search: 'a', replace: 'b' }] })).toBe(
      'E_INVALID_ARGS',
    );
    expect(await h.codeOf('patch', { path: 'nope.txt', diff })).toBe('E_NOT_FOUND');
  });
});

describe('fs delete', () => {
  it('deletes files; directories only with recursive', async () => {
    await fsp.mkdir(path.join(h.ws, 'dir'));
    await fsp.writeFile(path.join(h.ws, 'dir', 'f.txt'), 'f');
    expect(await h.codeOf('delete', { path: 'dir' })).toBe('E_INVALID_ARGS');
    expect(await h.call('delete', { path: 'dir/f.txt' })).toEqual({
      path: path.join(h.ws, 'dir', 'f.txt'),
      type: 'file',
      bytes: 1,
      backup_id: expect.any(String),
    });
    expect(await h.call('delete', { path: 'dir', recursive: true })).toMatchObject({ type: 'dir' });
    expect(await fsp.readdir(h.ws)).toEqual([]);
    expect(await h.codeOf('delete', { path: 'dir' })).toBe('E_NOT_FOUND');
    expect(await h.codeOf('delete', { path: '.', recursive: true })).toBe('E_FORBIDDEN');
  });
});
