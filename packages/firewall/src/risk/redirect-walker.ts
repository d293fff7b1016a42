// Evaluates redirects: file redirects (which write, which only duplicate a descriptor), here-documents
// (their body, literal or interpolated, is what a shell reading stdin runs) and here-strings.

import type { Redirect } from './command-model.js';
import { isNullSink } from './paths.js';
import type { SyntaxNode } from './syntax-tree.js';
import type { WalkContext, Walker } from './walk-context.js';
import { scanNode, walkInterpolated, walkWord } from './word-walker.js';

const WRITE_OPS = new Set(['>', '>>', '&>', '&>>', '>|', '<>']);

/** The redirects of one redirect node (a heredoc may chain further redirects); sets `redirect_write` / `heredoc`. */
export function walkRedirect(walker: Walker, node: SyntaxNode, src: string, ctx: WalkContext): Redirect[] {
  if (node.type === 'file_redirect') {
    const opNode = node.children.find((c) => !c.named);
    const op = opNode === undefined ? '>' : opNode.type;
    const dest = node.children.find((c) => c.field === 'destination');
    const w = dest === undefined ? { text: '', dynamic: false } : walkWord(walker, dest, src, ctx);
    const dup = (op === '>&' || op === '<&') && (/^\d+-?$/.test(w.text) || w.text === '-');
    const isWrite = !dup && (WRITE_OPS.has(op) || op === '>&');
    if (isWrite && !isNullSink(w.text)) walker.flags.redirect_write = true;
    const r: Redirect = { op, target: w.text, is_write: isWrite, dynamic: w.dynamic };
    const fd = node.children.find((c) => c.type === 'file_descriptor');
    if (fd !== undefined) r.fd = Number(src.slice(fd.start, fd.end));
    return [r];
  }
  if (node.type === 'heredoc_redirect') {
    walker.flags.heredoc = true;
    const opNode = node.children.find((c) => !c.named && (c.type === '<<' || c.type === '<<-'));
    const start = node.children.find((c) => c.type === 'heredoc_start');
    const body = node.children.find((c) => c.type === 'heredoc_body');
    const literal = start !== undefined && /['"\\]/.test(src.slice(start.start, start.end));
    let target = '';
    let dynamic = false;
    if (body !== undefined) {
      if (literal) target = src.slice(body.start, body.end);
      else {
        const w = walkInterpolated(walker, body, body.start, body.end, src, ctx, (s) => s);
        target = w.text;
        dynamic = w.dynamic;
      }
    }
    const out: Redirect[] = [{ op: opNode?.type ?? '<<', target, is_write: false, dynamic }];
    for (const c of node.children) if (c.field === 'redirect') out.push(...walkRedirect(walker, c, src, ctx));
    return out;
  }
  if (node.type === 'herestring_redirect') {
    const arg = node.children.find((c) => c.named && c.type !== 'file_descriptor');
    const w = arg === undefined ? { text: '', dynamic: false } : walkWord(walker, arg, src, ctx);
    return [{ op: '<<<', target: w.text, is_write: false, dynamic: w.dynamic }];
  }
  scanNode(walker, node, src, ctx);
  return [];
}
