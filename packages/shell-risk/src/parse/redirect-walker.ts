// Evaluates redirects: file redirects (which write, which only duplicate a descriptor), here-documents
// (their body, literal or expanded, is what a shell reading stdin runs) and here-strings.
//
// The bash grammar hangs the words that follow a redirection on the redirection node: `cmd 2>/dev/null
// rm -rf ~` has destinations `/dev/null`, `rm`, `-rf`, `~`; `cmd <<EOF rm x` has arguments `rm`, `x`.
// To the shell they are words of the command, wherever they stand. Each walk returns them (not
// walked) so the model builder reads them with the command's own words, in source order.

import type { Redirect } from '../command-model.js';
import { isNullSink } from '../knowledge/places/paths.js';
import { stripLeadingTabs } from './substitution-scan.js';
import type { SyntaxNode } from './syntax-tree.js';
import type { WalkContext, Walker } from './walk-context.js';
import { scanNode, walkExpandedText, walkWord } from './word-walker.js';

const WRITE_OPS = new Set(['>', '>>', '&>', '&>>', '>|', '<>']);

/** The redirects of one redirect node, and the command words that stand inside it. */
export interface RedirectWalk {
  redirects: Redirect[];
  /** word nodes the shell reads as arguments of the command (not yet walked), in source order */
  words: SyntaxNode[];
}

/** Where the parts of a here-document stand in the text. */
export interface HeredocLayout {
  start: SyntaxNode | undefined;
  /**
   * The children on the operator's line, after the delimiter: arguments, further redirects, a
   * pipeline or `&&` tail, ERROR tokens. Children the grammar found past the end of that line are
   * the body misread as words and are left out: the body is read from the text.
   */
  line: SyntaxNode[];
  /** offset of the body's first line */
  bodyStart: number;
  /** offset of the delimiter line (the body ends before it) */
  bodyEnd: number;
  /**
   * The grammar read (part of) the body as words of the line — it does when the body starts with
   * a backslash: a word then starts with the line's newline. The tree is wrong past that point.
   */
  misread: boolean;
}

/** The end of the line that holds offset `from` (a backslash-newline continues it); -1 when none. */
function lineEnd(src: string, from: number): number {
  let nl = src.indexOf('\n', from);
  while (nl > 0 && src[nl - 1] === '\\') nl = src.indexOf('\n', nl + 1);
  return nl;
}

/** Offset of the first unquoted word below `node` that starts with a newline (no word can); -1 when none. */
function newlineWord(node: SyntaxNode, src: string): number {
  const stack = [node];
  while (stack.length > 0) {
    const n = stack.pop() as SyntaxNode;
    if (n.type === 'word' && src[n.start] === '\n') return n.start;
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i] as SyntaxNode);
  }
  return -1;
}

/** The layout of a `heredoc_redirect` node. */
export function heredocLayout(node: SyntaxNode, src: string): HeredocLayout {
  let start: SyntaxNode | undefined;
  let body: SyntaxNode | undefined;
  let end: SyntaxNode | undefined;
  const line: SyntaxNode[] = [];
  let pos = node.start;
  /** where the grammar ran past the line's end, when it did */
  let brokenAt = -1;
  for (const c of node.children) {
    if (c.type === 'heredoc_start') {
      start = c;
      pos = c.end;
    } else if (c.type === 'heredoc_body') {
      body = c;
    } else if (c.type === 'heredoc_end') {
      end = c;
    } else if (c.named && start !== undefined && brokenAt < 0) {
      const gap = src.slice(pos, c.start).replaceAll('\\\n', '');
      const nl = gap.includes('\n') ? lineEnd(src, pos) : newlineWord(c, src);
      if (nl >= 0) {
        brokenAt = nl;
        // a child that starts on the line and runs into the body (`| sh` + the body's first word)
        // stays: if the tree cannot be mended, its commands are still judged
        if (c.start < nl) line.push(c);
      } else {
        line.push(c);
        pos = c.end;
      }
    }
  }
  const nl = brokenAt >= 0 ? brokenAt : lineEnd(src, pos);
  const bodyStart = nl < 0 ? src.length : nl + 1;
  let bodyEnd = Math.max(node.end, body?.end ?? -1);
  if (end !== undefined) bodyEnd = src.lastIndexOf('\n', end.start - 1) + 1;
  return {
    start,
    line,
    bodyStart,
    bodyEnd: Math.max(bodyStart, Math.min(bodyEnd, src.length)),
    misread: brokenAt >= 0,
  };
}

/** More here-documents than this in one failed parse and their bodies are not blanked (bounds the work). */
const MAX_BLANKED = 64;

/** A delimiter word as the shell compares lines with it: quotes removed. */
function delimiterOf(word: string): string {
  return word.replace(/'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)/g, (_m, s?: string, d?: string, e?: string) =>
    s !== undefined ? s : d !== undefined ? d.replace(/\\(.)/g, '$1') : (e ?? ''),
  );
}

/** Whether the here-document's body, as laid out, ends at the first line the shell takes for its delimiter. */
function endsWhereShellDoes(node: SyntaxNode, layout: HeredocLayout, src: string): boolean {
  const end = node.children.find((c) => c.type === 'heredoc_end');
  if (layout.start === undefined || end === undefined) return false;
  const dash = node.children.some((c) => c.type === '<<-');
  const delimiter = delimiterOf(src.slice(layout.start.start, layout.start.end));
  const isDelimiter = (from: number, to: number): boolean =>
    (dash ? src.slice(from, to).replace(/^\t+/, '') : src.slice(from, to)) === delimiter;
  const endLine = src.indexOf('\n', layout.bodyEnd);
  if (!isDelimiter(layout.bodyEnd, endLine < 0 ? src.length : endLine)) return false;
  for (let at = layout.bodyStart; at < layout.bodyEnd;) {
    const nl = src.indexOf('\n', at);
    const to = nl < 0 ? src.length : nl;
    if (isDelimiter(at, to)) return false;
    at = to + 1;
  }
  return true;
}

/** The `heredoc_redirect` nodes below `root`. */
function heredocs(root: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop() as SyntaxNode;
    if (n.type === 'heredoc_redirect') out.push(n);
    for (const c of n.children) stack.push(c);
  }
  return out;
}

/** Whether the grammar read part of a here-document body as words of its line (see {@link HeredocLayout}). */
export function misreadsHeredoc(root: SyntaxNode, src: string): boolean {
  return heredocs(root).some((n) => heredocLayout(n, src).misread);
}

/**
 * `src` with every here-document body blanked (spaces; newlines kept, so offsets hold): what the
 * grammar parses right when only a body confused it (`\$(` in one, a body starting with `\`).
 * Null when some body does not end where the shell ends it (then nothing may be blanked) or there
 * is none.
 */
export function blankHeredocBodies(root: SyntaxNode, src: string): string | null {
  const found = heredocs(root);
  if (found.length > MAX_BLANKED) return null;
  const regions: [number, number][] = [];
  for (const node of found) {
    const layout = heredocLayout(node, src);
    if (!endsWhereShellDoes(node, layout, src)) return null;
    regions.push([layout.bodyStart, layout.bodyEnd]);
  }
  if (regions.length === 0) return null;
  regions.sort((a, b) => a[0] - b[0]);
  let out = '';
  let pos = 0;
  for (const [from, to] of regions) {
    if (to <= pos) continue;
    const start = Math.max(from, pos);
    out += src.slice(pos, start) + src.slice(start, to).replace(/[^\n]/g, ' ');
    pos = to;
  }
  return out + src.slice(pos);
}

/** The redirects of one redirect node (a heredoc may chain further redirects); sets `redirect_write` / `heredoc`. */
export function walkRedirect(walker: Walker, node: SyntaxNode, src: string, ctx: WalkContext): RedirectWalk {
  if (node.type === 'file_redirect') {
    const opNode = node.children.find((c) => !c.named);
    const op = opNode === undefined ? '>' : opNode.type;
    const dests = node.children.filter((c) => c.field === 'destination');
    const dest = dests[0];
    const w = dest === undefined ? { text: '', dynamic: false } : walkWord(walker, dest, src, ctx);
    const dup = (op === '>&' || op === '<&') && (/^\d+-?$/.test(w.text) || w.text === '-');
    const isWrite = !dup && (WRITE_OPS.has(op) || op === '>&');
    if (isWrite && !isNullSink(w.text)) walker.flags.redirect_write = true;
    const r: Redirect = { op, target: w.text, is_write: isWrite, dynamic: w.dynamic };
    const fd = node.children.find((c) => c.type === 'file_descriptor');
    if (fd !== undefined) r.fd = Number(src.slice(fd.start, fd.end));
    return { redirects: [r], words: dests.slice(1) };
  }
  if (node.type === 'heredoc_redirect') return walkHeredoc(walker, node, src, ctx);
  if (node.type === 'herestring_redirect') {
    const args = node.children.filter((c) => c.named && c.type !== 'file_descriptor');
    const arg = args[0];
    const w = arg === undefined ? { text: '', dynamic: false } : walkWord(walker, arg, src, ctx);
    return { redirects: [{ op: '<<<', target: w.text, is_write: false, dynamic: w.dynamic }], words: args.slice(1) };
  }
  scanNode(walker, node, src, ctx);
  return { redirects: [], words: [] };
}

/**
 * A here-document: its body read from the text (a quoted delimiter keeps it literal; otherwise it
 * is expanded and every substitution in it is walked as a command), the redirects and words on its line.
 */
function walkHeredoc(walker: Walker, node: SyntaxNode, src: string, ctx: WalkContext): RedirectWalk {
  walker.flags.heredoc = true;
  const layout = heredocLayout(node, src);
  const op = node.children.find((c) => !c.named && (c.type === '<<' || c.type === '<<-'))?.type ?? '<<';
  const start = layout.start;
  const literal = start !== undefined && /['"\\]/.test(src.slice(start.start, start.end));
  let body = src.slice(layout.bodyStart, layout.bodyEnd);
  if (op === '<<-') body = stripLeadingTabs(body);
  let target = body;
  let dynamic = false;
  if (!literal) {
    const expanded = walkExpandedText(walker, body, ctx);
    target = expanded.text;
    dynamic = expanded.dynamic;
  }
  const out: RedirectWalk = { redirects: [{ op, target, is_write: false, dynamic }], words: [] };
  for (const c of layout.line) {
    if (c.field === 'redirect') {
      const inner = walkRedirect(walker, c, src, ctx);
      out.redirects.push(...inner.redirects);
      out.words.push(...inner.words);
    } else if (c.field === 'argument') {
      out.words.push(c);
    }
  }
  return out;
}
