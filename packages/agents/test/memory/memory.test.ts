import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { FileMemory } from '../../src/memory/file-memory.js';
import { NgramIndex, ngrams } from '../../src/memory/ngram-index.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'finger-mem-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('ngrams', () => {
  it('makes padded 2/3-grams of English words and plain 2/3-grams of Chinese runs', () => {
    expect(ngrams('Fix it')).toEqual(['_f', 'fi', 'ix', 'x_', '_fi', 'fix', 'ix_', '_i', 'it', 't_', '_it', 'it_']);
    expect(ngrams('修复登录')).toEqual(['修复', '复登', '登录', '修复登', '复登录']);
    expect(ngrams(' ,. ')).toEqual([]);
  });
});

describe('NgramIndex', () => {
  it('ranks the related English document first, not a substring accident', () => {
    const ix = new NgramIndex();
    ix.add('a', 'write the patched config file with fs.write');
    ix.add('b', 'download the release notes from the web');
    ix.add('c', 'delete old log files');
    expect(ix.search('patch the config', 3)[0]!.id).toBe('a');
    expect(ix.search('zzzz qqqq', 3)).toEqual([]);
  });

  it('ranks the related Chinese document first', () => {
    const ix = new NgramIndex();
    ix.add('a', '修改配置文件并写回磁盘');
    ix.add('b', '从网上下载发布说明');
    ix.add('c', '删除旧的日志');
    expect(ix.search('请修改配置', 3)[0]!.id).toBe('a');
    expect(ix.search('下载说明', 3)[0]!.id).toBe('b');
  });

  it('remove takes a document out of the results', () => {
    const ix = new NgramIndex();
    ix.add('a', 'hello world');
    ix.remove('a');
    expect(ix.search('hello')).toEqual([]);
    expect(ix.size).toBe(0);
  });
});

describe('FileMemory', () => {
  it('keeps a preference across sessions and retrieves it for a related English task', async () => {
    const dir = tempDir();
    const m1 = new FileMemory({ dir, clock: { now: () => 1000 } });
    await m1.remember({
      kind: 'preference',
      tool: 'fs.write',
      verdict: 'rejected',
      text: 'task "update the README badges": fs.write rejected — do not touch README.md without asking',
    });
    await m1.remember({ kind: 'outcome', verdict: 'COMPLETED', text: 'task "download release notes": done' });
    const m2 = new FileMemory({ dir });
    const hits = await m2.recall('update the README with new badges', { limit: 1 });
    expect(hits.map((h) => h.record)).toEqual([
      expect.objectContaining({ kind: 'preference', tool: 'fs.write', verdict: 'rejected', at: 1000 }),
    ]);
    expect((await m2.recall('release notes README', { kind: 'outcome' })).map((h) => h.record.kind)).toEqual([
      'outcome',
    ]);
  });

  it('keeps a preference across sessions and retrieves it for a related Chinese task', async () => {
    const dir = tempDir();
    await new FileMemory({ dir }).remember({
      kind: 'preference',
      tool: 'shell.exec',
      verdict: 'approved',
      text: '任务「运行单元测试」: shell.exec 已批准 — 运行测试命令可以',
    });
    await new FileMemory({ dir }).remember({ kind: 'outcome', text: '任务「整理下载目录」: 完成' });
    const hits = await new FileMemory({ dir }).recall('请运行所有单元测试', { limit: 1 });
    expect(hits[0]!.record).toEqual(expect.objectContaining({ tool: 'shell.exec', verdict: 'approved' }));
  });

  it('skips a torn last line and stays bounded by max_records', async () => {
    const dir = tempDir();
    const m = new FileMemory({ dir, max_records: 3 });
    for (let i = 0; i < 5; i++) await m.remember({ kind: 'outcome', text: `task number ${i}` });
    expect(m.size).toBe(3);
    writeFileSync(join(dir, 'memory.jsonl'), `${readFileSync(join(dir, 'memory.jsonl'), 'utf8')}{"id":"x","te`);
    const again = new FileMemory({ dir, max_records: 3 });
    expect(again.size).toBe(3);
    expect((await again.recall('task number 0')).map((h) => h.record.text)).not.toContain('task number 0');
  });

  it('refuses an oversized text with E_INVALID_ARGS', async () => {
    const m = new FileMemory({ dir: tempDir(), max_text: 10 });
    await expect(m.remember({ kind: 'outcome', text: 'x'.repeat(11) })).rejects.toMatchObject({
      code: 'E_INVALID_ARGS',
    });
  });
});
