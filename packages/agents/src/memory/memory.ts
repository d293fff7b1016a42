// The Memory plugin (no security judgement): what the executor remembers across sessions —
// approval preferences (tools a person keeps rejecting or approving, with the reason) and task
// outcomes — and retrieves by relevance to the next task.

/** What a memory is about. */
export type MemoryKind = 'preference' | 'outcome';

/** One remembered fact. */
export interface MemoryRecord {
  id: string;
  kind: MemoryKind;
  /** Epoch ms. */
  at: number;
  /** What is searched and shown to the model. */
  text: string;
  /** The tool a preference is about. */
  tool?: string;
  /** `approved` / `rejected` for preferences; the final task state for outcomes. */
  verdict?: string;
  task_id?: string;
}

/** A retrieved memory with its relevance. */
export interface MemoryHit {
  record: MemoryRecord;
  score: number;
}

/** Retrieval options. */
export interface RecallOptions {
  limit?: number;
  kind?: MemoryKind;
}

/** The plugin interface; FileMemory is the default implementation. */
export interface Memory {
  /** Stores a record; rejects with E_STORE_UNAVAILABLE when it cannot be persisted. */
  remember(record: Omit<MemoryRecord, 'id' | 'at'>): Promise<MemoryRecord>;
  /** Records relevant to `query`, best first. */
  recall(query: string, options?: RecallOptions): Promise<MemoryHit[]>;
}
