import type { ModelAdapter, ModelCallOptions, ModelRequestParams, ModelResult } from './model-adapter.js';
import { abortError } from './retry.js';

/**
 * A tool as the offline router sees it: plain data, shaped so that both a hub `ToolInfo` and a
 * capability-snapshot `ToolSummary` (id + purpose) fit.
 */
export interface OfflineTool {
  /** `<module>.<name>`. */
  id: string;
  /** The module id; default: the id up to its last dot. */
  module?: string;
  description?: string;
  /** A summary's one-line purpose, used when there is no description. */
  purpose?: string;
  input_schema?: Record<string, unknown>;
}

/** An agent the router may name (`dispatch_agent` when its id is mentioned). */
export interface OfflineAgent {
  id: string;
  description?: string;
}

/** What the router routes to. */
export interface OfflineCatalog {
  tools: readonly OfflineTool[];
  agents?: readonly OfflineAgent[];
}

/** The router decision of DESIGN §3.6, as the offline router produces it. */
export interface OfflineDecision {
  decision: 'dispatch_module' | 'dispatch_agent' | 'ask_human';
  target: string | null;
  confidence: number;
  reason: string;
  payload: Record<string, unknown>;
  requires_human: boolean;
}

/** Options of {@link OfflineRouter}. */
export interface OfflineRouterOptions {
  /** Below this a person decides (`ask_human`); default 0.5 (config `router.min_confidence`). */
  min_confidence?: number;
}

const STOP = new Set(
  'a an the to of for in on at by with and or is are be it this that me my you your i we our please can could would should will do does hi hello hey what which who how from into as about some any all'.split(
    ' ',
  ),
);
const EDGE_PUNCT = /^[\s"'`([{<.,:;!?]+|[\s"'`)\]}>.,:;!?]+$/g;

function stem(w: string): string {
  return w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w;
}

/** Content words of a description: lower case, alphanumeric runs, no stop words, light stemming. */
function contentWords(text: string): Set<string> {
  const out = new Set<string>();
  for (const w of text.toLowerCase().split(/[^a-z0-9]+/)) if (w.length > 2 && !STOP.has(w)) out.add(stem(w));
  return out;
}

interface Candidate {
  decision: 'dispatch_module' | 'dispatch_agent';
  target: string;
  score: number;
  /** Indexes of input words that named the target (removed from the payload text). */
  mentioned: number[];
  schema?: Record<string, unknown>;
}

/** The payload for `rest` from an input schema, or the reason none can be built. */
function payloadFor(
  schema: Record<string, unknown> | undefined,
  rest: string,
): { payload: Record<string, unknown> } | { missing: string } {
  const props = (schema?.properties ?? {}) as Record<string, { type?: unknown }>;
  const required = Array.isArray(schema?.required) ? (schema.required as unknown[]).map(String) : [];
  const isString = (name: string): boolean => {
    const t = props[name]?.type;
    return t === undefined || t === 'string' || (Array.isArray(t) && t.includes('string'));
  };
  let key: string | undefined;
  if (required.length === 1 && isString(required[0] as string)) key = required[0];
  else if (required.length > 1) return { missing: `needs ${required.join(', ')}` };
  else if (required.length === 0) {
    const names = Object.keys(props);
    if (names.length === 0) key = 'text';
    else if (names.length === 1 && isString(names[0] as string)) key = names[0];
    else return rest === '' ? { payload: {} } : { missing: `cannot tell which of ${names.join(', ')} to set` };
  } else return { missing: `needs ${required.join(', ')}` };
  if (rest === '') return required.length > 0 ? { missing: `needs ${key}` } : { payload: {} };
  return { payload: { [key as string]: rest } };
}

/**
 * The router used when no model is configured: scores the input against the registered tools
 * (and agents) and returns the same decision contract a model would (DESIGN §3.6). A word that
 * names a target weighs most — a tool id (`fs.read`) 1.0, a one-tool module id (`echo`) or a
 * module id plus a tool name 0.9, a tool name alone 0.5 — and word overlap with the description
 * adds up to 0.4. The payload comes from the tool's input_schema: a single required string
 * property (or the only property, or `text` for a free-form object) gets the rest of the input.
 * Below `min_confidence`, a tie between two targets, or a payload that cannot be built →
 * `ask_human` with the best candidates in its payload. Pure; no I/O.
 */
export class OfflineRouter {
  readonly #min: number;
  /** Content words per description text (bounded: cleared past 2048 entries). */
  readonly #words = new Map<string, Set<string>>();

  constructor(options: OfflineRouterOptions = {}) {
    this.#min = options.min_confidence ?? 0.5;
  }

  /** Decides where `input` goes. */
  route(input: string, catalog: OfflineCatalog): OfflineDecision {
    const words = input.trim().split(/\s+/).filter(Boolean);
    const lower = words.map((w) => w.toLowerCase().replace(EDGE_PUNCT, ''));
    const inputContent = new Set(lower.filter((w) => w.length > 2 && !STOP.has(w)).map(stem));
    const candidates = [...this.#toolCandidates(lower, inputContent, catalog.tools)];
    for (const a of catalog.agents ?? []) {
      const at = lower.indexOf(a.id.toLowerCase());
      const overlap = this.#overlap(inputContent, a.description ?? '');
      if (at >= 0 || overlap > 0) {
        candidates.push({
          decision: 'dispatch_agent',
          target: a.id,
          score: (at >= 0 ? 0.9 : 0) + overlap,
          mentioned: at >= 0 ? [at] : [],
        });
      }
    }
    candidates.sort((x, y) => y.score - x.score || (x.target < y.target ? -1 : 1));
    const best = candidates[0];
    const top = candidates.slice(0, 3).map((c) => ({ target: c.target, confidence: round(c.score) }));
    const ask = (reason: string, confidence: number): OfflineDecision => ({
      decision: 'ask_human',
      target: null,
      confidence: round(confidence),
      reason,
      payload: { text: input, candidates: top },
      requires_human: true,
    });
    if (best === undefined || best.score <= 0) return ask('offline router: no registered target matches', 0);
    const confidence = Math.min(1, best.score);
    if (confidence < this.#min) return ask(`offline router: best match "${best.target}" is a weak match`, confidence);
    const second = candidates[1];
    if (second && second.target !== best.target && best.score - second.score < 0.05) {
      return ask(`offline router: "${best.target}" and "${second.target}" match equally`, confidence);
    }
    const rest = stripLeadingStop(words.filter((_, i) => !best.mentioned.includes(i))).join(' ');
    const built = payloadFor(best.decision === 'dispatch_agent' ? undefined : best.schema, rest);
    if ('missing' in built) return ask(`offline router: "${best.target}" ${built.missing}`, confidence);
    return {
      decision: best.decision,
      target: best.target,
      confidence: round(confidence),
      reason: `offline router: input matches "${best.target}"`,
      payload: built.payload,
      requires_human: false,
    };
  }

  *#toolCandidates(lower: string[], inputContent: Set<string>, tools: readonly OfflineTool[]): Generator<Candidate> {
    const perModule = new Map<string, number>();
    const moduleOf = (t: OfflineTool): string => t.module ?? t.id.slice(0, Math.max(0, t.id.lastIndexOf('.')));
    for (const t of tools) perModule.set(moduleOf(t), (perModule.get(moduleOf(t)) ?? 0) + 1);
    for (const t of tools) {
      const mod = moduleOf(t);
      const single = perModule.get(mod) === 1;
      const name = t.id.slice(mod.length + 1) || t.id;
      const idAt = lower.indexOf(t.id.toLowerCase());
      const modAt = lower.indexOf(mod.toLowerCase());
      const nameAt = lower.indexOf(name.toLowerCase());
      let mention = 0;
      let mentioned: number[] = [];
      if (idAt >= 0) [mention, mentioned] = [1, [idAt]];
      else if (modAt >= 0 && single) [mention, mentioned] = [0.9, [modAt]];
      else if (modAt >= 0 && nameAt >= 0) [mention, mentioned] = [0.9, [modAt, nameAt]];
      else if (nameAt >= 0) [mention, mentioned] = [0.5, [nameAt]];
      else if (modAt >= 0) [mention, mentioned] = [0.45, [modAt]];
      const overlap = this.#overlap(
        inputContent,
        `${t.description ?? t.purpose ?? ''} ${mod} ${name}`,
        mentioned,
        lower,
      );
      const score = mention + overlap;
      if (score <= 0) continue;
      yield {
        decision: 'dispatch_module',
        target: single ? mod : t.id,
        score,
        mentioned,
        ...(t.input_schema ? { schema: t.input_schema } : {}),
      };
    }
  }

  /** 0.4 × the share of the input's content words found in `text` (mention words left out). */
  #overlap(inputContent: Set<string>, text: string, mentioned: number[] = [], lower: string[] = []): number {
    const skip = new Set(mentioned.map((i) => stem(lower[i] ?? '')));
    const words = [...inputContent].filter((w) => !skip.has(w));
    if (words.length === 0) return 0;
    let desc = this.#words.get(text);
    if (desc === undefined) {
      if (this.#words.size >= 2048) this.#words.clear();
      desc = contentWords(text);
      this.#words.set(text, desc);
    }
    return (0.4 * words.filter((w) => desc.has(w)).length) / words.length;
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

function stripLeadingStop(words: string[]): string[] {
  let i = 0;
  while (i < words.length - 1 && STOP.has((words[i] as string).toLowerCase())) i++;
  return words.slice(i);
}

/** Options of {@link OfflineAdapter}. */
export interface OfflineAdapterOptions extends OfflineRouterOptions {
  /** The current tools and agents (called per request, so it follows the registry). */
  catalog: () => OfflineCatalog;
  /** The text to route; default: the last user message. */
  inputOf?: (params: ModelRequestParams) => string;
}

/**
 * A ModelAdapter over {@link OfflineRouter}: answers every request with the router-decision
 * JSON for the last user message, usage 0. Makes no network call; rejects with E_HALTED or
 * E_TIMEOUT only when the call's signal is already aborted.
 */
export class OfflineAdapter implements ModelAdapter {
  readonly provider = 'offline';
  readonly model = 'offline-router';
  readonly #router: OfflineRouter;
  readonly #opts: OfflineAdapterOptions;

  constructor(options: OfflineAdapterOptions) {
    this.#opts = options;
    this.#router = new OfflineRouter(options);
  }

  async complete(params: ModelRequestParams, options: ModelCallOptions = {}): Promise<ModelResult> {
    if (options.signal?.aborted) throw abortError(options.signal.reason);
    const input =
      this.#opts.inputOf?.(params) ?? [...params.messages].reverse().find((m) => m.role === 'user')?.content ?? '';
    const text = JSON.stringify(this.#router.route(input, this.#opts.catalog()));
    options.onText?.(text);
    return {
      text,
      usage: { input_tokens: 0, output_tokens: 0 },
      model: this.model,
      finish_reason: 'stop',
      attempts: 1,
    };
  }
}
