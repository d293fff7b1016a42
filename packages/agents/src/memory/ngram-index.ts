// Full-text relevance over character n-grams (2- and 3-grams) with BM25 scoring. Works the same
// for Chinese (no word boundaries) and English (grams inside words, with a boundary marker), so
// `修复登录` finds `登录页面的修复` and `patching` finds `patch`. Pure, in memory.

/** BM25 parameters. */
const K1 = 1.2;
const B = 0.75;

/**
 * The 2- and 3-grams of `text` after NFKC, lower-casing and collapsing every run of
 * non-letters/digits to one space. Each word of a spaced script is padded with `_` so its start
 * and end count; a single-character word yields itself.
 */
export function ngrams(text: string): string[] {
  const norm = text.normalize('NFKC').toLowerCase();
  const words = norm.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0);
  const out: string[] = [];
  for (const w of words) {
    const chars = [...w];
    const cjk = chars.some((c) => c.codePointAt(0)! >= 0x2e80);
    const seq = cjk ? chars : ['_', ...chars, '_'];
    if (chars.length === 1) out.push(chars[0]!);
    for (const n of [2, 3]) for (let i = 0; i + n <= seq.length; i++) out.push(seq.slice(i, i + n).join(''));
  }
  return out;
}

interface Doc {
  id: string;
  length: number;
  grams: string[];
}

/** A scored hit. */
export interface IndexHit {
  id: string;
  score: number;
}

/** An inverted index of n-grams (postings per gram); documents are added and removed by id. */
export class NgramIndex {
  private readonly docs = new Map<string, Doc>();
  /** gram → (doc id → term frequency). */
  private readonly postings = new Map<string, Map<string, number>>();
  private totalLength = 0;

  get size(): number {
    return this.docs.size;
  }

  /** Adds (or replaces) a document. */
  add(id: string, text: string): void {
    this.remove(id);
    const grams = ngrams(text);
    const tf = new Map<string, number>();
    for (const g of grams) tf.set(g, (tf.get(g) ?? 0) + 1);
    for (const [g, f] of tf) {
      let p = this.postings.get(g);
      if (!p) this.postings.set(g, (p = new Map()));
      p.set(id, f);
    }
    this.docs.set(id, { id, length: grams.length, grams: [...tf.keys()] });
    this.totalLength += grams.length;
  }

  /** Removes a document; unknown ids are ignored. */
  remove(id: string): void {
    const d = this.docs.get(id);
    if (!d) return;
    for (const g of d.grams) {
      const p = this.postings.get(g);
      p?.delete(id);
      if (p && p.size === 0) this.postings.delete(g);
    }
    this.totalLength -= d.length;
    this.docs.delete(id);
  }

  /**
   * Documents sharing n-grams with `query`, best first (BM25 over the query's distinct grams),
   * at most `limit`, only those scoring above `min_score` (default 0). Reads only the postings
   * of the query's grams.
   */
  search(query: string, limit = 5, min_score = 0): IndexHit[] {
    const terms = [...new Set(ngrams(query))];
    const n = this.docs.size;
    if (n === 0 || terms.length === 0) return [];
    const avg = this.totalLength / n || 1;
    const scores = new Map<string, number>();
    for (const t of terms) {
      const p = this.postings.get(t);
      if (!p) continue;
      const idf = Math.log(1 + (n - p.size + 0.5) / (p.size + 0.5));
      for (const [id, f] of p) {
        const len = this.docs.get(id)!.length;
        const s = (idf * f * (K1 + 1)) / (f + K1 * (1 - B + (B * len) / avg));
        scores.set(id, (scores.get(id) ?? 0) + s);
      }
    }
    const hits: IndexHit[] = [];
    for (const [id, score] of scores) if (score > min_score) hits.push({ id, score });
    hits.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
    return hits.slice(0, limit);
  }
}
