// Which earlier segments feed a segment, for a pass over a model in execution order: the earlier
// stages of every pipeline it sits in (`a | (b | c)`: a and b feed c), and the segments run by
// the `$(…)`, backticks and `<(…)` in its words (listed just before it, one level deeper).

import type { PipelinePosition, SimpleCommand } from '../command-model.js';

const SUBSTITUTIONS: ReadonlySet<string> = new Set(['$(…)', '`…`', '<(…)']);

/** The feeders of each segment among the segments passed so far. */
export class Feeders {
  readonly #segs: readonly SimpleCommand[];
  /** pipeline id → the segments passed so far that sit in one of its stages */
  readonly #stages = new Map<number, { index: number; j: number }[]>();

  constructor(segs: readonly SimpleCommand[]) {
    this.#segs = segs;
  }

  /** Records segment i as passed (segments are passed in order). */
  pass(i: number): void {
    const seg = this.#segs[i] as SimpleCommand;
    for (let p: PipelinePosition | undefined = seg.pipeline ?? undefined; p !== undefined; p = p.outer) {
      const list = this.#stages.get(p.id);
      if (list === undefined) this.#stages.set(p.id, [{ index: p.index, j: i }]);
      else list.push({ index: p.index, j: i });
    }
  }

  /** The passed segments in earlier stages of segment i's pipelines, in order. */
  upstream(i: number): number[] {
    const pos = (this.#segs[i] as SimpleCommand).pipeline;
    if (pos === null) return [];
    const from = new Set<number>();
    for (let p: PipelinePosition | undefined = pos; p !== undefined; p = p.outer) {
      for (const e of this.#stages.get(p.id) ?? []) if (e.index < p.index) from.add(e.j);
    }
    return [...from].sort((x, y) => x - y);
  }

  /** The first passed segment in an earlier stage of segment i's pipelines for which `has` holds. */
  first(i: number, has: (j: number) => boolean): number | undefined {
    let found: number | undefined;
    for (let p = (this.#segs[i] as SimpleCommand).pipeline ?? undefined; p !== undefined; p = p.outer) {
      // a pipeline's list is in pass order, so its stages come in order
      for (const e of this.#stages.get(p.id) ?? []) {
        if (e.index >= p.index || (found !== undefined && e.j >= found)) break;
        if (has(e.j)) {
          found = e.j;
          break;
        }
      }
    }
    return found;
  }

  /** The segments run by the substitutions in segment i's words (and redirects). */
  substitutions(i: number): number[] {
    const out: number[] = [];
    const base = (this.#segs[i] as SimpleCommand).via;
    for (let j = i - 1; j >= 0; j--) {
      const s = this.#segs[j] as SimpleCommand;
      if (s.via.length <= base.length || !SUBSTITUTIONS.has(s.via[base.length] as string)) break;
      out.push(j);
    }
    return out.reverse();
  }
}
