import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { AuditLog } from '../../src/audit/audit-log.js';
import { verifyAuditLog } from '../../src/audit/audit-verify.js';
import { fill, tempDir } from './helpers.js';

const N = 50;
const FILE = 'audit-0000000001.jsonl';

/** A real 50-entry log, written once; each test works on a copy of its bytes. */
let pristine: Buffer;

beforeAll(async () => {
  const dir = await tempDir();
  const log = await AuditLog.open({ dir });
  await fill(log, N);
  await log.close();
  pristine = await readFile(join(dir, FILE));
});

/** A temp log dir holding `bytes` as its only segment. */
async function logWith(bytes: Buffer | string): Promise<string> {
  const dir = await tempDir();
  await writeFile(join(dir, FILE), bytes);
  return dir;
}

/** Byte ranges of each line (its "\n" included), 0-based: lineRanges[k-1] is entry k. */
function lineRanges(buf: Buffer): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let start = 0;
  for (let nl = buf.indexOf(0x0a); nl !== -1; nl = buf.indexOf(0x0a, start)) {
    out.push([start, nl]);
    start = nl + 1;
  }
  return out;
}

function entryAt(ranges: Array<[number, number]>, pos: number): number {
  return ranges.findIndex(([a, b]) => pos >= a && pos <= b) + 1;
}

/** Position of the `nth` character after `"key":` on line `k` (1-based). */
function posIn(buf: Buffer, ranges: Array<[number, number]>, k: number, key: string, nth = 0): number {
  const [start] = ranges[k - 1] as [number, number];
  const at = buf.indexOf(`"${key}":`, start);
  return at + key.length + 3 + nth;
}

function lines(): string[] {
  return pristine.toString('utf8').split('\n').slice(0, -1);
}

async function verifyBytes(bytes: Buffer | string) {
  return verifyAuditLog(await logWith(bytes));
}

describe('verifyAuditLog', () => {
  it('passes on a real log of 50 entries', async () => {
    expect(await verifyBytes(pristine)).toEqual({ ok: true, entries: N, first_bad: null, reason: null });
  });

  it('treats a missing or empty directory as an empty, valid log', async () => {
    const dir = await tempDir();
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 0, first_bad: null, reason: null });
    await rm(dir, { recursive: true });
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: 0, first_bad: null, reason: null });
  });

  it('rejects with E_STORE_UNAVAILABLE when the log cannot be read', async () => {
    const file = join(await logWith(pristine), FILE);
    await expect(verifyAuditLog(file)).rejects.toMatchObject({ code: 'E_STORE_UNAVAILABLE' });
  });

  it('names the exact entry when a single byte is changed at chosen positions', async () => {
    const ranges = lineRanges(pristine);
    const cases: Array<[string, number, number]> = [
      ['a hex digit of entry 7 hash', posIn(pristine, ranges, 7, 'hash', 10), 7],
      ['the first hex digit of entry 1 hash', posIn(pristine, ranges, 1, 'hash', 1), 1],
      ['a hex digit of entry 50 hash', posIn(pristine, ranges, 50, 'hash', 64), 50],
      ['a digit of entry 23 seq', posIn(pristine, ranges, 23, 'seq', 0), 23],
      ['a digit of entry 9 seq', posIn(pristine, ranges, 9, 'seq', 0), 9],
      ['a hex digit of entry 31 prev_hash', posIn(pristine, ranges, 31, 'prev_hash', 5), 31],
      ['the tool name of entry 12', posIn(pristine, ranges, 12, 'tool', 3), 12],
      ['the ts of entry 40', posIn(pristine, ranges, 40, 'ts', 6), 40],
      ['a verdict reason of entry 3', posIn(pristine, ranges, 3, 'reasons', 4), 3],
      ['the args digest of entry 17', posIn(pristine, ranges, 17, 'args_digest', 20), 17],
      ['the opening brace of entry 5', (ranges[4] as [number, number])[0], 5],
      ['the newline ending entry 25', (ranges[24] as [number, number])[1], 25],
      ['the newline ending entry 50', (ranges[49] as [number, number])[1], 50],
    ];
    for (const [what, pos, k] of cases) {
      expect(entryAt(ranges, pos), what).toBe(k);
      for (const replace of [0x0a, 0x20, pristine[pos] === 0x31 ? 0x32 : 0x31]) {
        if (replace === pristine[pos]) continue;
        const bytes = Buffer.from(pristine);
        bytes[pos] = replace;
        const r = await verifyBytes(bytes);
        expect({ what, replace, ok: r.ok, first_bad: r.first_bad }).toEqual({ what, replace, ok: false, first_bad: k });
        expect(r.reason).toMatch(new RegExp(`^${FILE}:${k}: `));
      }
    }
  });

  it('names the exact entry for a single changed byte at 150 pseudo-random positions', async () => {
    const ranges = lineRanges(pristine);
    const dir = await tempDir();
    let s = 12345;
    for (let i = 0; i < 150; i++) {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      const pos = s % pristine.length;
      const bytes = Buffer.from(pristine);
      bytes[pos] = (bytes[pos] as number) ^ (1 + ((s >>> 8) % 255));
      await writeFile(join(dir, FILE), bytes);
      const r = await verifyAuditLog(dir);
      expect({ pos, ok: r.ok, first_bad: r.first_bad }).toEqual({ pos, ok: false, first_bad: entryAt(ranges, pos) });
    }
  });

  it('names the entry after the gap when an entry is removed', async () => {
    const all = lines();
    for (const k of [1, 20, 49]) {
      const kept = all.filter((_, i) => i !== k - 1);
      const r = await verifyBytes(`${kept.join('\n')}\n`);
      expect(r).toEqual({
        ok: false,
        entries: N - 1,
        first_bad: k + 1,
        reason: `${FILE}:${k}: entry ${k} is missing before entry ${k + 1}`,
      });
    }
    const many = all.filter((_, i) => i < 9 || i > 12);
    expect(await verifyBytes(`${many.join('\n')}\n`)).toMatchObject({ ok: false, first_bad: 14 });
  });

  it('names the first swapped position when two entries are swapped', async () => {
    for (const [a, b] of [
      [10, 11],
      [1, 2],
      [5, 30],
      [49, 50],
    ] as const) {
      const all = lines();
      [all[a - 1], all[b - 1]] = [all[b - 1] as string, all[a - 1] as string];
      const r = await verifyBytes(`${all.join('\n')}\n`);
      expect(r).toEqual({
        ok: false,
        entries: N,
        first_bad: a,
        reason: `${FILE}:${a}: entries are out of order: seq ${b} found where seq ${a} belongs`,
      });
    }
  });

  it('reports a truncated last line', async () => {
    const cut = pristine.subarray(0, pristine.length - 40);
    expect(await verifyBytes(cut)).toEqual({
      ok: false,
      entries: N,
      first_bad: N,
      reason: `${FILE}:${N}: the last line is incomplete (no final newline: a torn write or truncation)`,
    });
    expect(await verifyBytes(pristine.subarray(0, pristine.length - 1))).toMatchObject({ ok: false, first_bad: N });
  });

  it('reports a duplicated entry and an inserted blank line', async () => {
    const all = lines();
    const dup = [...all.slice(0, 8), all[7] as string, ...all.slice(8)];
    expect(await verifyBytes(`${dup.join('\n')}\n`)).toMatchObject({ ok: false, entries: N + 1, first_bad: 9 });
    const blank = [...all.slice(0, 3), '', ...all.slice(3)];
    expect(await verifyBytes(`${blank.join('\n')}\n`)).toMatchObject({ ok: false, first_bad: 4 });
  });

  it('names the next entry when an edited entry had its own hash recomputed (the link breaks)', async () => {
    // An attacker who edits entry 30 and recomputes its hash still breaks the link to entry 31.
    const { computeEntryHash } = await import('../../src/audit/audit-entry.js');
    const { canonicalJson } = await import('../../src/audit/canonical-json.js');
    const all = lines();
    const e = JSON.parse(all[29] as string) as Record<string, unknown>;
    e.decision = 'deny';
    e.hash = computeEntryHash(e);
    all[29] = canonicalJson(e);
    expect(await verifyBytes(`${all.join('\n')}\n`)).toEqual({
      ok: false,
      entries: N,
      first_bad: 31,
      reason: `${FILE}:31: prev_hash does not match the hash of the entry before it`,
    });
  });

  it('verifies a multi-segment log and names the entry when a later segment is changed', async () => {
    const dir = await tempDir();
    const log = await AuditLog.open({ dir, max_segment_bytes: 5000 });
    await fill(log, N);
    await log.close();
    expect(await verifyAuditLog(dir)).toEqual({ ok: true, entries: N, first_bad: null, reason: null });
    const names = (await readdir(dir)).sort();
    const third = names[2] as string;
    const text = await readFile(join(dir, third), 'utf8');
    const firstSeq = (JSON.parse(text.split('\n')[0] as string) as { seq: number }).seq;
    const lineTwo = text.indexOf('\n') + 1;
    const at = text.indexOf('"tool":"', lineTwo) + 9;
    await writeFile(join(dir, third), `${text.slice(0, at)}X${text.slice(at + 1)}`);
    expect(await verifyAuditLog(dir)).toMatchObject({ ok: false, entries: N, first_bad: firstSeq + 1 });
    await rm(join(dir, names[1] as string));
    const r = await verifyAuditLog(dir);
    expect(r.ok).toBe(false);
    expect(r.reason).toContain(`${third}:1: `);
  });
});
