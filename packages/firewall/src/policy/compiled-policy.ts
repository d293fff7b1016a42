// A compiled layer: its rules, roots and defaults, plus a per-tool index so that evaluating a call
// looks only at the rules whose tool glob matches, and — for shell commands — only at the command
// rules naming a program the command runs.

import type { CommandModel } from '@finger/shell-risk';
import { stripInvisible } from '@finger/shell-risk';

import type { Level } from '../engine/evaluation.js';
import type { Matcher } from './policy-globs.js';
import type { PolicyDocument, PolicyLayer } from './policy-types.js';
import type { CompiledRule } from './rule-match.js';

/** A layer's defaults after compiling (null: not set by this layer). */
export interface CompiledDefaults {
  outside_read: Level | null;
  outside_write: Level | null;
  hard_link_write: Level | null;
  user_may_allow: boolean;
}

/** The rules of one layer that apply to one tool. */
export interface ToolRules {
  /** Rules without a command pattern, in order. */
  readonly plain: readonly CompiledRule[];
  /** Every rule with a command pattern, in order. */
  readonly command: readonly CompiledRule[];
  /** Command rules by the program basename their pattern names. */
  readonly byProgram: ReadonlyMap<string, readonly CompiledRule[]>;
  /** Command rules whose program is a glob: candidates for every command. */
  readonly anyProgram: readonly CompiledRule[];
}

interface Parts {
  layer: PolicyLayer;
  source: string | undefined;
  document: PolicyDocument;
  digest: string;
  rules: readonly CompiledRule[];
  readable: readonly string[] | null;
  writable: readonly string[] | null;
  humanOnly: readonly Matcher[];
  shellTools: Matcher;
  defaults: Readonly<CompiledDefaults>;
  homeDir: string;
}

const MAX_INDEXED_TOOLS = 10_000;
const EMPTY: readonly CompiledRule[] = Object.freeze([]);

/** A tool-id matcher remembering its answers (tool ids are few; bounded anyway). */
function memo(m: Matcher): Matcher {
  const seen = new Map<string, boolean>();
  return (id) => {
    let hit = seen.get(id);
    if (hit === undefined) {
      hit = m(id);
      if (seen.size >= MAX_INDEXED_TOOLS) seen.clear();
      seen.set(id, hit);
    }
    return hit;
  };
}

function basename(p: string): string {
  const i = p.lastIndexOf('/');
  return i < 0 ? p : p.slice(i + 1);
}

/** One layer of policy, compiled by {@link compilePolicy}; immutable. */
export class CompiledPolicy {
  readonly layer: PolicyLayer;
  /** The file it came from, if any. */
  readonly source: string | undefined;
  /** The document as loaded (frozen). */
  readonly document: PolicyDocument;
  /** sha256 of the document's canonical JSON (names a policy version in audit entries). */
  readonly digest: string;
  readonly rules: readonly CompiledRule[];
  /** Absolute roots (`~` expanded), or null when the layer does not restrict. */
  readonly readable: readonly string[] | null;
  readonly writable: readonly string[] | null;
  readonly humanOnly: readonly Matcher[];
  /** Which tools take a shell command (set by the admin layer). */
  readonly shellTools: Matcher;
  readonly defaults: Readonly<CompiledDefaults>;
  /** The home directory `~` stood for when compiling. */
  readonly homeDir: string;
  readonly #index = new Map<string, ToolRules>();
  #humanOnly: Matcher | undefined;

  constructor(p: Parts) {
    this.layer = p.layer;
    this.source = p.source;
    this.document = p.document;
    this.digest = p.digest;
    this.rules = p.rules;
    this.readable = p.readable;
    this.writable = p.writable;
    this.humanOnly = p.humanOnly;
    this.shellTools = memo(p.shellTools);
    this.defaults = p.defaults;
    this.homeDir = p.homeDir;
  }

  /** The rules whose tool glob matches `tool_id`, indexed (computed once per tool id). */
  rulesFor(tool_id: string): ToolRules {
    let hit = this.#index.get(tool_id);
    if (hit === undefined) {
      hit = this.#build(tool_id);
      if (this.#index.size >= MAX_INDEXED_TOOLS) this.#index.clear();
      this.#index.set(tool_id, hit);
    }
    return hit;
  }

  /** True when a `human_only` glob of this layer names the tool. */
  isHumanOnly(tool_id: string): boolean {
    if (this.humanOnly.length === 0) return false;
    this.#humanOnly ??= memo((id) => this.humanOnly.some((m) => m(id)));
    return this.#humanOnly(tool_id);
  }

  #build(tool_id: string): ToolRules {
    const plain: CompiledRule[] = [];
    const command: CompiledRule[] = [];
    const byProgram = new Map<string, CompiledRule[]>();
    const anyProgram: CompiledRule[] = [];
    for (const r of this.rules) {
      if (!r.matchesTool(tool_id)) continue;
      if (r.command === null) {
        plain.push(r);
        continue;
      }
      command.push(r);
      if (r.command.programs === null) anyProgram.push(r);
      else
        for (const prog of new Set(r.command.programs)) {
          const l = byProgram.get(prog);
          if (l === undefined) byProgram.set(prog, [r]);
          else l.push(r);
        }
    }
    return {
      plain: plain.length === 0 ? EMPTY : plain,
      command: command.length === 0 ? EMPTY : command,
      byProgram,
      anyProgram: anyProgram.length === 0 ? EMPTY : anyProgram,
    };
  }
}

/**
 * The command rules of `rules` that may match `model`: those naming a program one of its
 * segments runs (by basename, invisible characters removed), those with a glob program, and all
 * of them when a segment's program is only known at run time. In rule order.
 */
export function commandCandidates(rules: ToolRules, model: CommandModel): readonly CompiledRule[] {
  if (rules.command.length === 0) return EMPTY;
  const segs = model.segments;
  if (segs.length === 1) {
    const seg = segs[0]!;
    if (seg.unknown_program) return rules.command;
    const l = rules.byProgram.get(basename(stripInvisible(seg.path)));
    if (rules.anyProgram.length === 0) return l ?? EMPTY;
    if (l === undefined) return rules.anyProgram;
  }
  const picked = new Set<CompiledRule>(rules.anyProgram);
  for (const seg of segs) {
    if (seg.unknown_program) return rules.command;
    const l = rules.byProgram.get(basename(stripInvisible(seg.path)));
    if (l !== undefined) for (const r of l) picked.add(r);
  }
  if (picked.size === 0) return EMPTY;
  return [...picked].sort((a, b) => a.index - b.index);
}
