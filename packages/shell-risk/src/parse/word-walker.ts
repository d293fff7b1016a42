// Evaluates word nodes: de-quoted text and whether a word holds a run-time value; command and
// process substitutions inside a word are walked as commands (via the Walker).

import type { Word } from '../wrappers/expansion.js';
import { staticPipelineOutput } from './script-text.js';
import { type ExpandedText, expandText } from './substitution-scan.js';
import type { SyntaxNode } from './syntax-tree.js';
import type { WalkContext, Walker } from './walk-context.js';
import { decodeAnsiC, decodeDoubleQuoted, decodeUnquoted } from './words.js';

/** Evaluates a word node: de-quoted text, whether it holds a run-time value; walks nested commands. */
export function walkWord(walker: Walker, node: SyntaxNode, src: string, ctx: WalkContext): Word {
  const raw = src.slice(node.start, node.end);
  switch (node.type) {
    case 'word':
      return { text: decodeUnquoted(raw), dynamic: false };
    case 'number':
    case 'file_descriptor':
    case 'variable_name':
    case 'brace_expression':
    case 'extglob_pattern':
      return { text: raw, dynamic: false };
    case 'raw_string':
      return { text: raw.slice(1, raw.endsWith("'") && raw.length > 1 ? -1 : undefined), dynamic: false };
    case 'ansi_c_string':
      return {
        text: decodeAnsiC(raw.slice(2, raw.endsWith("'") && raw.length > 2 ? -1 : undefined)),
        dynamic: false,
      };
    case 'command_name':
      return node.children[0] === undefined
        ? { text: raw, dynamic: false }
        : walkWord(walker, node.children[0], src, ctx);
    case 'string':
    case 'translated_string': {
      const open = raw.startsWith('$"') ? 2 : 1;
      const close = raw.length > open && raw.endsWith('"') ? 1 : 0;
      return walkInterpolated(walker, node, node.start + open, node.end - close, src, ctx, decodeDoubleQuoted);
    }
    case 'concatenation':
      return walkInterpolated(walker, node, node.start, node.end, src, ctx, decodeUnquoted);
    case 'simple_expansion':
    case 'expansion':
    case 'arithmetic_expansion':
      walker.flags.dynamic = true;
      scanNode(walker, node, src, ctx);
      return { text: raw, dynamic: true };
    case 'command_substitution':
    case 'process_substitution': {
      walker.flags.dynamic = true;
      walker.flags.substitution = true;
      const opener = node.children[0]?.type ?? '$(';
      const label = opener === '`' ? '`…`' : opener === '<(' ? '<(…)' : opener === '>(' ? '>(…)' : '$(…)';
      const from = walker.segments.length;
      const inner: WalkContext = { via: [...ctx.via, label], pipeline: null, depth: ctx.depth };
      if (opener === '`' && raw.includes('\\')) {
        // inside backticks \` \$ \\ are escapes: the body is unescaped, then parsed (nested backticks)
        const close = raw.length > 1 && raw.endsWith('`') ? -1 : undefined;
        walker.script(raw.slice(1, close).replace(/\\([$`\\])/g, '$1'), { ...inner, depth: ctx.depth + 1 });
      } else {
        walker.statements(node, src, inner);
      }
      const value = node.type === 'command_substitution' ? staticPipelineOutput(walker.segments.slice(from)) : null;
      return value === null ? { text: raw, dynamic: true } : { text: raw, dynamic: true, value };
    }
    default: {
      scanNode(walker, node, src, ctx);
      const dynamic = /[$`]/.test(raw);
      if (dynamic) walker.flags.dynamic = true;
      return { text: raw, dynamic };
    }
  }
}

/** A word made of literal gaps and child words (a double-quoted string, a concatenation, a heredoc body). */
export function walkInterpolated(
  walker: Walker,
  node: SyntaxNode,
  from: number,
  to: number,
  src: string,
  ctx: WalkContext,
  decode: (s: string) => string,
): Word {
  let text = '';
  let dynamic = false;
  let value: string | null = '';
  let pos = from;
  for (const child of node.children) {
    // anonymous tokens carry no positions; the literal gaps around children cover them
    if (!child.named || child.start < pos || child.end > to) continue;
    const gap = decode(src.slice(pos, child.start));
    text += gap;
    if (value !== null) value += gap;
    if (child.type === 'string_content' || child.type === 'heredoc_content') {
      const lit = decode(src.slice(child.start, child.end));
      text += lit;
      if (value !== null) value += lit;
    } else {
      const w = walkWord(walker, child, src, ctx);
      text += w.text;
      dynamic ||= w.dynamic;
      if (value !== null) value = w.dynamic ? (w.value === undefined ? null : value + w.value) : value + w.text;
    }
    pos = child.end;
  }
  const tail = decode(src.slice(pos, to));
  text += tail;
  if (dynamic && value !== null) return { text, dynamic, value: value + tail };
  return { text, dynamic };
}

/**
 * Walks every substitution in text the shell expands without the grammar's help (a here-document
 * body, the operand of a `${…}` left as a plain word): see substitution-scan.ts.
 */
export function walkExpandedText(walker: Walker, text: string, ctx: WalkContext): ExpandedText {
  const expanded = expandText(text);
  if (expanded.dynamic) walker.flags.dynamic = true;
  for (const s of expanded.substitutions) {
    walker.flags.substitution = true;
    if (s.script.trim() !== '')
      walker.script(s.script, { via: [...ctx.via, s.label], pipeline: null, depth: ctx.depth + 1 });
  }
  return expanded;
}

/**
 * Whether single-quoted text below `node` is expanded all the same: an arithmetic expression
 * (`(( … ))`, `$(( … ))`) is expanded as if double-quoted, and an array subscript
 * (`a['…']=1`, `${a['…']}`) is evaluated again, so `(( a['$(cmd)'] ))` runs cmd.
 */
function expandsQuotes(node: SyntaxNode): boolean {
  return (
    node.type === 'arithmetic_expansion' ||
    node.type === 'subscript' ||
    (node.type === 'compound_statement' && node.children[0]?.type === '((')
  );
}

/**
 * Finds nested substitutions (and marks expansions) anywhere below a node that is not a word;
 * `live`: single-quoted text below it is expanded (see {@link expandsQuotes}).
 */
export function scanNode(walker: Walker, node: SyntaxNode, src: string, ctx: WalkContext, live = false): void {
  const quotesExpand = live || expandsQuotes(node);
  for (const child of node.children) {
    switch (child.type) {
      case 'raw_string':
        if (quotesExpand)
          walkExpandedText(walker, src.slice(child.start + 1, Math.max(child.start + 1, child.end - 1)), ctx);
        break;
      case 'command_substitution':
      case 'process_substitution':
      case 'simple_expansion':
      case 'expansion':
        walkWord(walker, child, src, ctx);
        break;
      case 'word':
        // the grammar leaves the operand of `${x:-…}` a plain word when it holds backticks: they still run
        if (node.type === 'expansion' && /[`$]/.test(src.slice(child.start, child.end)))
          walkExpandedText(walker, src.slice(child.start, child.end), ctx);
        break;
      default:
        if (child.children.length > 0) scanNode(walker, child, src, ctx, quotesExpand);
    }
  }
}
