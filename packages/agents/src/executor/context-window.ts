// The executor's conversation history and its compression. Pure functions over serialisable data
// (the whole ContextState is checkpointed with the task).
//
// Compression is triggered by estimated tokens. It folds the oldest entries into a digest, in
// this order: ordinary steps and results first, then firewall signals, then human decisions —
// so human decisions and firewall signals stay longest. Folded entries go to an archive and come
// back only through `restoreCompressed(..., { confirmed: true })`: nothing restores them
// automatically (§1 principle 8).

import { FingerError } from '@finger/protocol';

/** What an entry records; the kind decides how long it survives compression. */
export type ContextEntryKind = 'step' | 'result' | 'note' | 'signal' | 'human';

/** One entry of the history. */
export interface ContextEntry {
  seq: number;
  kind: ContextEntryKind;
  /** The executor step it belongs to. */
  step: number;
  text: string;
  /** On a digest entry: the id of the compressed block it stands for. */
  block?: string;
}

/** Entries folded into one digest. */
export interface CompressedBlock {
  id: string;
  entries: ContextEntry[];
  digest: string;
}

/** The history of a task. */
export interface ContextState {
  entries: ContextEntry[];
  archive: CompressedBlock[];
  next_seq: number;
}

/** Compression bounds. */
export interface CompressionOptions {
  /** Compress when the estimated tokens of the entries exceed this. */
  max_tokens: number;
  /** Compress down to this (default 60 % of max_tokens). */
  target_tokens?: number;
  /** The most recent entries never folded (default 4). */
  keep_recent?: number;
}

/** Fold order: lower survives shorter. */
const SURVIVAL: Readonly<Record<ContextEntryKind, number>> = { step: 0, result: 0, note: 0, signal: 1, human: 2 };

/**
 * Estimated tokens of a text: CJK characters (and other wide scripts) count one token each,
 * everything else one per four characters — close enough for budgeting, never exact.
 */
export function estimateTokens(text: string): number {
  let wide = 0;
  let narrow = 0;
  for (const ch of text) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x2e80) wide++;
    else narrow++;
  }
  return wide + Math.ceil(narrow / 4);
}

/** An empty history. */
export function emptyContext(): ContextState {
  return { entries: [], archive: [], next_seq: 1 };
}

/** A new state with `entry` appended. */
export function appendEntry(state: ContextState, entry: Omit<ContextEntry, 'seq'>): ContextState {
  return {
    entries: [...state.entries, { ...entry, seq: state.next_seq }],
    archive: state.archive,
    next_seq: state.next_seq + 1,
  };
}

/** Estimated tokens of all entries (the digests of compressed blocks are entries of kind `note`). */
export function contextTokens(state: ContextState): number {
  return state.entries.reduce((n, e) => n + estimateTokens(e.text), 0);
}

function digestOf(id: string, folded: ContextEntry[]): string {
  const steps = folded.map((e) => e.step);
  const counts = new Map<ContextEntryKind, number>();
  for (const e of folded) counts.set(e.kind, (counts.get(e.kind) ?? 0) + 1);
  const what = [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
  return (
    `[history ${id} compressed: ${folded.length} entries (${what}) of steps ` +
    `${Math.min(...steps)}–${Math.max(...steps)}; only a person can restore it]`
  );
}

/**
 * Compresses when the estimate exceeds `max_tokens`: folds entries (lowest survival class first,
 * oldest first within a class, never the `keep_recent` newest) until the estimate is at most
 * `target_tokens`, replacing them by one digest entry placed where the oldest folded entry was.
 * Returns the state unchanged when nothing needs folding.
 */
export function compressContext(state: ContextState, o: CompressionOptions): ContextState {
  if (contextTokens(state) <= o.max_tokens) return state;
  const target = o.target_tokens ?? Math.floor(o.max_tokens * 0.6);
  const keep = o.keep_recent ?? 4;
  const candidates = state.entries
    .slice(0, Math.max(0, state.entries.length - keep))
    .filter((e) => e.block === undefined)
    .sort((a, b) => SURVIVAL[a.kind] - SURVIVAL[b.kind] || a.seq - b.seq);
  let tokens = contextTokens(state);
  const fold = new Set<number>();
  const digestCost = 40;
  for (const e of candidates) {
    if (tokens + (fold.size > 0 ? digestCost : 0) <= target) break;
    fold.add(e.seq);
    tokens -= estimateTokens(e.text);
  }
  if (fold.size === 0) return state;
  const id = `c${state.archive.length + 1}`;
  const folded = state.entries.filter((e) => fold.has(e.seq));
  const digest = digestOf(id, folded);
  const first = folded[0]!;
  const entries: ContextEntry[] = [];
  for (const e of state.entries) {
    if (e.seq === first.seq) entries.push({ seq: state.next_seq, kind: 'note', step: e.step, text: digest, block: id });
    if (!fold.has(e.seq)) entries.push(e);
  }
  return { entries, archive: [...state.archive, { id, entries: folded, digest }], next_seq: state.next_seq + 1 };
}

/**
 * Puts a compressed block back in place of its digest. Only on an explicit request a person
 * confirmed: without `confirmed: true` it throws E_FORBIDDEN; an unknown id → E_NOT_FOUND.
 */
export function restoreCompressed(state: ContextState, id: string, o: { confirmed: boolean }): ContextState {
  if (o.confirmed !== true) {
    throw new FingerError('E_FORBIDDEN', `restoring compressed history ${id} needs a person's confirmation`, { id });
  }
  const block = state.archive.find((b) => b.id === id);
  if (!block) throw new FingerError('E_NOT_FOUND', `no compressed history ${id}`, { id });
  const entries: ContextEntry[] = [];
  for (const e of state.entries) {
    if (e.block === id) entries.push(...block.entries);
    else entries.push(e);
  }
  return { entries, archive: state.archive.filter((b) => b !== block), next_seq: state.next_seq };
}
