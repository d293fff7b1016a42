// Where the bash grammar's tree is not the shell's reading of a command line, and how the model
// builder mends it: the line of a here-document the grammar cannot read (spelled as the shell
// reads it, to be parsed again), and the command that the words of a redirect hung on a whole
// list belong to. Pure.

import type { HeredocLayout } from './redirect-walker.js';
import type { SyntaxNode } from './syntax-tree.js';

/**
 * How the shell reads a here-document's line where the grammar cannot, spelled so that the grammar
 * reads it so too; undefined when `error` (an ERROR child on that line) is not an operator:
 * - `cmd <<EOF args | rest` (also `&&`, `||`): the grammar reads no operator after a
 *   here-document's words; spelled `cmd args <<EOF | rest`.
 * - `cmd <<EOF; rest` (also `&`): the grammar reads no separator after one at all; spelled with
 *   `rest` on a line after the document.
 */
export function heredocLine(
  stmt: SyntaxNode,
  heredoc: SyntaxNode,
  layout: HeredocLayout,
  error: SyntaxNode,
  src: string,
): string | undefined {
  const start = layout.start;
  const token = src.slice(error.start, error.end);
  if (start === undefined || !/^[|&;]/.test(token)) return undefined;
  let text: string;
  if (/^(?:;|&(?!&))/.test(token)) {
    const lineEnd = layout.bodyStart - 1;
    if (src[lineEnd] !== '\n' || error.end > lineEnd) return undefined;
    text = `${src.slice(stmt.start, error.start)}${src.slice(lineEnd, stmt.end)}\n${src.slice(error.end, lineEnd)}`;
  } else {
    const operator = src.slice(heredoc.start, start.end);
    text = `${src.slice(stmt.start, heredoc.start)}${src.slice(start.end, error.start)} ${operator} ${src.slice(error.start, stmt.end)}`;
  }
  // nothing moved (`cmd <<EOF | x` the grammar reads; this ERROR is something else): no other reading
  return text.replace(/\s+/g, ' ') === src.slice(stmt.start, stmt.end).replace(/\s+/g, ' ') ? undefined : text;
}

/**
 * The simple command a list, pipeline or negation ends with (`a && b` → b), which the words of a
 * redirect after it belong to; undefined when it ends with a compound command.
 */
export function lastCommand(node: SyntaxNode): SyntaxNode | undefined {
  let n: SyntaxNode | undefined = node;
  while (n !== undefined) {
    switch (n.type) {
      case 'command':
      case 'declaration_command':
      case 'unset_command':
        return n;
      case 'redirected_statement':
        n = n.children.find((c) => c.field === 'body');
        break;
      case 'list':
      case 'pipeline':
      case 'negated_command':
        n = n.children.findLast((c) => c.named && c.type !== 'comment');
        break;
      default:
        return undefined;
    }
  }
  return undefined;
}

/** A character that ends an unquoted word. */
const WORD_END = /[\s;&|()<>]/;
/** A word the grammar may not read as a command name: glob characters, no quotes, expansions, escapes or `=`. */
const GLOB_NAME = /^(?=[^'"`$\\=]*$)(?:.*[?*]|.*\[[^\]]+\])/s;

/**
 * The command line with each glob word the grammar stumbles on (an ERROR starts inside it:
 * `s?do rm -rf ~`, `r[m] -rf ~`, `[s]udo …`) single-quoted, so that the grammar reads it as the
 * command name the shell sees; the model builder then judges the name as every program it may
 * match (program-globs.ts). Undefined when there is none.
 */
export function quotedGlobNames(root: SyntaxNode, src: string): string | undefined {
  const starts = new Set<number>();
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop() as SyntaxNode;
    if (n.type === 'ERROR' && n.start >= 0) starts.add(n.start);
    stack.push(...n.children);
  }
  const words: [number, number][] = [];
  for (const at of starts) {
    let from = at;
    while (from > 0 && !WORD_END.test(src[from - 1] as string)) from--;
    let to = at;
    while (to < src.length && !WORD_END.test(src[to] as string)) to++;
    if (GLOB_NAME.test(src.slice(from, to)) && !words.some(([f]) => f === from)) words.push([from, to]);
  }
  if (words.length === 0) return undefined;
  let out = src;
  for (const [from, to] of words.sort((a, b) => b[0] - a[0]))
    out = `${out.slice(0, from)}'${out.slice(from, to)}'${out.slice(to)}`;
  return out;
}
