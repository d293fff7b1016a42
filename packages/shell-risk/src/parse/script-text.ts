// Pure helpers of the model builder over finished pieces: which nodes are words, what a command
// writes to stdout when that is known statically (so `echo … | sh`, `eval "$(echo … | base64 -d)"`
// can be walked), and how a syntax error is described.

import type { SimpleCommand } from '../command-model.js';
import type { SyntaxNode } from './syntax-tree.js';
import { decodeAnsiC } from './words.js';

/** Whether a node is a word (evaluated as a value, not walked as a statement). */
export function isWordNode(node: SyntaxNode): boolean {
  switch (node.type) {
    case 'word':
    case 'string':
    case 'raw_string':
    case 'ansi_c_string':
    case 'concatenation':
    case 'simple_expansion':
    case 'expansion':
    case 'command_substitution':
    case 'process_substitution':
    case 'arithmetic_expansion':
    case 'number':
    case 'translated_string':
    case 'brace_expression':
    case 'variable_name':
    case 'extglob_pattern':
    case 'heredoc_body':
    case 'regex':
    case 'test_operator':
    case 'special_variable_name':
      return true;
    default:
      return false;
  }
}

/** The text a command writes to stdout when it is known statically (echo, printf without %, a heredoc). */
export function staticOutput(seg: SimpleCommand): string | null {
  for (const r of seg.redirects) {
    if (r.op === '<<' || r.op === '<<-' || r.op === '<<<') {
      if (seg.program === 'cat' && seg.argv.length === 1 && !r.dynamic) return r.target;
    }
  }
  if (seg.dynamic.length > 0 || seg.unknown_program) return null;
  if (seg.program === 'echo') {
    let args = seg.argv.slice(1);
    while (args[0] !== undefined && /^-[neE]+$/.test(args[0])) args = args.slice(1);
    return args.join(' ');
  }
  if (seg.program === 'printf' && seg.argv.length >= 2) {
    const format = seg.argv[1] as string;
    if (format.includes('%')) return null;
    return decodeAnsiC(format);
  }
  return null;
}

/**
 * The output of a substitution when it is known statically: `echo`/`printf` of static text,
 * optionally piped through `base64 -d` or `rev` (what obfuscated commands do). Null otherwise.
 */
export function staticPipelineOutput(segs: SimpleCommand[]): string | null {
  if (segs.length === 0 || segs.length > 4) return null;
  for (let i = 0; i < segs.length; i++) {
    const s = segs[i] as SimpleCommand;
    if (s.wrapper || s.assignments.length > 0 || s.redirects.length > 0 || s.dynamic.length > 0) return null;
    if (segs.length > 1 && s.pipeline?.index !== i) return null;
  }
  let text = staticOutput(segs[0] as SimpleCommand);
  for (const s of segs.slice(1)) {
    if (text === null) return null;
    if (s.program === 'base64' && s.argv.slice(1).some((a) => a === '--decode' || /^-[a-zA-Z]*[dD]$/.test(a))) {
      text = Buffer.from(text, 'base64').toString('utf8');
    } else if (s.program === 'rev' && s.argv.length === 1) {
      text = text
        .split('\n')
        .map((l) => [...l].reverse().join(''))
        .join('\n');
    } else {
      return null;
    }
  }
  return text === null ? null : text.replace(/\n+$/, '');
}

/** Shortens text for a reason line. */
export function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** "syntax error at offset N near '…'" for the first ERROR node, or a missing-token message. */
export function describeError(root: SyntaxNode, src: string): string {
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop() as SyntaxNode;
    if (n.type === 'ERROR') return `syntax error at offset ${n.start} near '${clip(src.slice(n.start, n.end))}'`;
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i] as SyntaxNode);
  }
  return 'incomplete command (a closing token is missing)';
}
