import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { FingerError } from '@finger/protocol';

import { writeFileAtomicSync } from '../tasks/atomic-file.js';
import type { Memory, MemoryHit, MemoryRecord, RecallOptions } from './memory.js';
import { NgramIndex } from './ngram-index.js';

/** Options of {@link FileMemory}. */
export interface FileMemoryOptions {
  /** `FINGER_HOME/state/memory`. */
  dir: string;
  clock?: { now(): number };
  /** Records kept; the oldest are dropped (and the file rewritten) past it. Default 5000. */
  max_records?: number;
  /** Longest text kept per record (longer texts are refused with E_INVALID_ARGS). Default 4000. */
  max_text?: number;
}

/**
 * Memory persisted as JSON lines in `<dir>/memory.jsonl` (appended and flushed per record),
 * searched with a character n-gram BM25 index (Chinese and English alike). Bad lines are skipped
 * when loading. Bounded by `max_records`.
 */
export class FileMemory implements Memory {
  private readonly file: string;
  private readonly clock: { now(): number };
  private readonly max: number;
  private readonly maxText: number;
  private readonly records = new Map<string, MemoryRecord>();
  private readonly index = new NgramIndex();

  constructor(o: FileMemoryOptions) {
    mkdirSync(o.dir, { recursive: true, mode: 0o700 });
    this.file = join(o.dir, 'memory.jsonl');
    this.clock = o.clock ?? { now: () => Date.now() };
    this.max = o.max_records ?? 5000;
    this.maxText = o.max_text ?? 4000;
    if (existsSync(this.file)) {
      for (const line of readFileSync(this.file, 'utf8').split('\n')) {
        if (!line.trim()) continue;
        try {
          const r = JSON.parse(line) as MemoryRecord;
          if (typeof r.id === 'string' && typeof r.text === 'string') this.put(r);
        } catch {
          // a torn last line after a crash: skipped
        }
      }
    }
  }

  /** Number of records held. */
  get size(): number {
    return this.records.size;
  }

  remember(input: Omit<MemoryRecord, 'id' | 'at'>): Promise<MemoryRecord> {
    if (input.text.length > this.maxText) {
      return Promise.reject(
        new FingerError('E_INVALID_ARGS', `memory text is ${input.text.length} chars, at most ${this.maxText}`, {
          length: input.text.length,
          max: this.maxText,
        }),
      );
    }
    const at = this.clock.now();
    const record: MemoryRecord = { ...input, id: `m${at.toString(36)}-${randomBytes(5).toString('hex')}`, at };
    try {
      appendFileSync(this.file, `${JSON.stringify(record)}\n`, { mode: 0o600 });
      this.put(record);
      if (this.records.size > this.max) this.compact();
    } catch (e) {
      return Promise.reject(
        new FingerError('E_STORE_UNAVAILABLE', `memory cannot be written: ${(e as Error).message}`, {
          file: this.file,
        }),
      );
    }
    return Promise.resolve(record);
  }

  recall(query: string, options: RecallOptions = {}): Promise<MemoryHit[]> {
    const limit = options.limit ?? 5;
    const hits = this.index.search(query, options.kind ? this.records.size : limit);
    const out: MemoryHit[] = [];
    for (const h of hits) {
      const record = this.records.get(h.id);
      if (!record || (options.kind && record.kind !== options.kind)) continue;
      out.push({ record, score: h.score });
      if (out.length >= limit) break;
    }
    return Promise.resolve(out);
  }

  private put(r: MemoryRecord): void {
    this.records.set(r.id, r);
    this.index.add(r.id, r.tool ? `${r.text} ${r.tool}` : r.text);
  }

  private compact(): void {
    const all = [...this.records.values()].sort((a, b) => a.at - b.at);
    for (const r of all.slice(0, all.length - this.max)) {
      this.records.delete(r.id);
      this.index.remove(r.id);
    }
    const lines = [...this.records.values()].map((r) => JSON.stringify(r)).join('\n');
    writeFileAtomicSync(this.file, `${lines}\n`);
  }
}
