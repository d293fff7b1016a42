// What the model builder's walkers share: the context of the command being walked, and the
// builder state they write into (segments, flags) with the two entry points they recurse through.

import type { CommandFlags, PipelinePosition, SimpleCommand, Via } from '../command-model.js';
import type { SyntaxNode } from './syntax-tree.js';

/** Where a command sits: what it was reached through, its pipeline stage, how deep in re-parsed strings. */
export interface WalkContext {
  via: Via[];
  pipeline: PipelinePosition | null;
  depth: number;
  findBroad?: boolean;
  unknownTail?: boolean;
}

/** The builder as the word and redirect walkers see it (ModelBuilder provides it). */
export interface Walker {
  readonly segments: SimpleCommand[];
  readonly flags: CommandFlags;
  /** Parses and walks a shell string (an `sh -c` string, a backtick body). */
  script(text: string, ctx: WalkContext): void;
  /** Walks the statements below a node (a substitution's body). */
  statements(node: SyntaxNode, src: string, ctx: WalkContext): void;
}
