// Builds the canonical CommandModel from a bash syntax tree: every simple command of every list,
// pipeline, subshell, substitution, function body and control structure becomes a segment, with
// de-quoted argv, assignments and redirects; wrappers (sudo, timeout, env, xargs, find -exec…)
// add the command they run as a further segment; `sh -c`, `eval` and scripts piped into a shell
// are parsed again (up to MAX_DEPTH levels).

import {
  type Assignment,
  type CommandFlags,
  type CommandModel,
  emptyFlags,
  type FunctionDefinition,
  type LoopVariable,
  type Redirect,
  type SimpleCommand,
} from '../command-model.js';
import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { readsScriptFromStdin } from '../knowledge/programs/programs.js';
import { conditionalCode, evaluatedWords, testWords } from '../rules/evaluated-words.js';
import type { Expansion, Word } from '../wrappers/expansion.js';
import { hasReplEscapes, replEscapesOfInput } from '../wrappers/repl-escapes.js';
import { expandWrapper } from '../wrappers/wrappers.js';
import { heredocLine, lastCommand, quotedGlobNames } from './grammar-repairs.js';
import { blankHeredocBodies, heredocLayout, misreadsHeredoc, walkRedirect } from './redirect-walker.js';
import { clip, describeError, isWordNode, staticOutput } from './script-text.js';
import { buildSegment } from './segment-builder.js';
import type { BashGrammar, SyntaxNode } from './syntax-tree.js';
import type { WalkContext, Walker } from './walk-context.js';
import { scanNode, walkWord } from './word-walker.js';

/** How many times a string may be re-parsed inside another (`sh -c "eval 'bash -c …'"`). */
export const MAX_DEPTH = 8;
/** More segments than this and the command is reported unparseable (a flood is not a command). */
export const MAX_SEGMENTS = 1000;
/** More scripts parsed than this (here-document substitutions are one each) and the command is unparseable. */
const MAX_SCRIPTS = 2000;

const CONTROL = new Set([
  'if_statement',
  'while_statement',
  'for_statement',
  'c_style_for_statement',
  'case_statement',
  'test_command',
]);

/** Collects the model of one command; use {@link ModelBuilder.script} or {@link ModelBuilder.argv} once, then {@link ModelBuilder.model}. */
export class ModelBuilder {
  readonly segments: SimpleCommand[] = [];
  readonly flags: CommandFlags = emptyFlags();
  readonly redFlags: string[] = [];
  readonly loopVariables: LoopVariable[] = [];
  readonly functions: FunctionDefinition[] = [];
  unparseable: string | undefined;
  #pipelines = 0;
  #scripts = 0;
  /** Words found inside a redirect that the grammar hung on a list, for the list's last command. */
  readonly #wordsOf = new Map<SyntaxNode, SyntaxNode[]>();
  readonly #grammar: BashGrammar;
  /** the homes of the assessor that builds (known-homes.ts): whether find -exec visits a broad root */
  readonly #homes: KnownHomes;
  /** What the word and redirect walkers recurse through. */
  readonly #walker: Walker = {
    segments: this.segments,
    flags: this.flags,
    script: (text, ctx) => this.script(text, ctx),
    statements: (node, src, ctx) => this.#statements(node, src, ctx),
  };

  constructor(grammar: BashGrammar, homes: KnownHomes) {
    this.#grammar = grammar;
    this.#homes = homes;
  }

  /** The context of a top-level command. */
  static rootContext(): WalkContext {
    return { via: [], pipeline: null, depth: 0 };
  }

  /** The finished model. */
  model(): CommandModel {
    const m: CommandModel = { segments: this.segments, flags: this.flags, notes: this.redFlags };
    if (this.unparseable !== undefined) m.unparseable = this.unparseable;
    if (this.loopVariables.length > 0) m.loop_variables = this.loopVariables;
    if (this.functions.length > 0) m.functions = this.functions;
    return m;
  }

  #markUnparseable(reason: string): void {
    this.unparseable ??= reason;
  }

  /** Parses and walks a shell script (the command text, an `sh -c` string, an eval'd string). */
  script(text: string, ctx: WalkContext): void {
    if (ctx.depth > MAX_DEPTH) {
      this.#markUnparseable(`commands nested more than ${MAX_DEPTH} levels deep`);
      return;
    }
    // every substitution of a here-document body is a script of its own: no parse past the bounds
    if (this.segments.length > MAX_SEGMENTS || ++this.#scripts > MAX_SCRIPTS) {
      this.#markUnparseable(`more than ${MAX_SEGMENTS} commands`);
      return;
    }
    const { root, hasError } = this.#grammar.parse(text);
    // a here-document body the grammar misread as code (`\$(` in it, a first line starting with
    // `\`): the shell reads it as text, and so does the heredoc walk (from `text`); with the bodies
    // blanked, the grammar reads the rest as the shell does
    const misread = text.includes('<<') && misreadsHeredoc(root, text);
    if (!hasError && !misread) {
      this.#statements(root, text, ctx);
      return;
    }
    const blanked = text.includes('<<') ? blankHeredocBodies(root, text) : null;
    if (blanked !== null) {
      const alt = this.#grammar.parse(blanked);
      if (!alt.hasError) {
        this.#statements(alt.root, text, ctx);
        return;
      }
    }
    if (!hasError) {
      this.#markUnparseable('the parser misreads a here-document');
      this.#statements(root, text, ctx);
      return;
    }
    this.#markUnparseable(describeError(root, text));
    // a command name with glob characters the grammar cannot read (`s?do …`, `r[m] …`): read quoted
    const named = quotedGlobNames(root, text);
    if (named !== undefined) {
      const alt = this.#grammar.parse(named);
      if (!alt.hasError) {
        this.#statements(alt.root, named, ctx);
        return;
      }
    }
    if (text.includes('((')) {
      // bash reads `((cmd) )` / `$((cmd) )` as nested subshells when they are not arithmetic;
      // the grammar does not: walk the spaced-out form so nothing inside goes unseen
      const spaced = text.replace(/(\$?)\(\(/g, '$1( (');
      const alt = this.#grammar.parse(spaced);
      if (!alt.hasError) {
        this.#statements(alt.root, spaced, ctx);
        return;
      }
    }
    this.#statements(root, text, ctx);
  }

  /** Walks an exec'd argv (no shell parsing; wrappers and `sh -c` inside it still recurse). */
  argv(words: string[], ctx: WalkContext): void {
    this.#addCommand(
      words.map((text) => ({ text, dynamic: false })),
      [],
      [],
      ctx,
    );
  }

  // ---- statements ----------------------------------------------------------------------------

  #statements(node: SyntaxNode, src: string, ctx: WalkContext): void {
    for (const child of node.children) {
      if (!child.named) {
        if (child.type === '&') this.flags.background = true;
        continue;
      }
      this.#statement(child, src, ctx);
    }
  }

  #statement(node: SyntaxNode, src: string, ctx: WalkContext): void {
    if (this.segments.length > MAX_SEGMENTS) {
      this.#markUnparseable(`more than ${MAX_SEGMENTS} commands`);
      return;
    }
    switch (node.type) {
      case 'comment':
        return;
      case 'command':
        this.#redirectedCommand(node, node, [], src, ctx);
        return;
      case 'redirected_statement': {
        const body = node.children.find((c) => c.field === 'body') ?? null;
        const redirects = node.children.filter((c) => c.field === 'redirect');
        this.#redirectedCommand(node, body, redirects, src, ctx);
        return;
      }
      case 'pipeline':
        this.#pipeline(
          node.children.filter((c) => c.named && c.type !== 'comment'),
          src,
          ctx,
        );
        return;
      case 'subshell':
        this.flags.subshell = true;
        this.#statements(node, src, { ...ctx, via: [...ctx.via, 'subshell'] });
        return;
      case 'compound_statement':
        if (node.children[0]?.type === '((') {
          this.flags.control_flow = true;
          scanNode(this.#walker, node, src, ctx);
        } else {
          this.#statements(node, src, ctx);
        }
        return;
      case 'function_definition':
        this.#functionDefinition(node, src, ctx);
        return;
      case 'for_statement':
        this.#forStatement(node, src, ctx);
        return;
      case 'file_redirect': {
        // `$(< file)`: a substitution of a bare input redirect prints the file
        const walked = walkRedirect(this.#walker, node, src, ctx);
        this.#addCommand(this.#words(walked.words, src, ctx), [], walked.redirects, ctx);
        return;
      }
      case 'declaration_command':
      case 'unset_command':
        this.#declaration(node, src, ctx);
        return;
      case 'variable_assignment':
        this.#addCommand([], [this.#assignment(node, src, ctx)], [], ctx);
        return;
      case 'variable_assignments':
        this.#addCommand(
          [],
          node.children.filter((c) => c.type === 'variable_assignment').map((c) => this.#assignment(c, src, ctx)),
          [],
          ctx,
        );
        return;
      default:
        break;
    }
    if (CONTROL.has(node.type)) this.flags.control_flow = true;
    if (node.type === 'test_command') {
      scanNode(this.#walker, node, src, ctx);
      // `[[ -v 'a[$(cmd)]' ]]`, `[[ x -eq 'a[$(cmd)]' ]]`: bash evaluates these operands again
      for (const e of conditionalCode(testWords(node, src))) if (e.kind === 'script') this.#evaluated(e, ctx);
      return;
    }
    // lists, negations, control structures, ERROR recovery: statements inside, words scanned
    for (const child of node.children) {
      if (!child.named) {
        if (child.type === '&') this.flags.background = true;
        continue;
      }
      if (isWordNode(child)) walkWord(this.#walker, child, src, ctx);
      else this.#statement(child, src, ctx);
    }
  }

  #pipeline(stages: SyntaxNode[], src: string, ctx: WalkContext, first?: (ctx: WalkContext) => void): void {
    const length = stages.length + (first === undefined ? 0 : 1);
    const id = ++this.#pipelines;
    const starts: number[] = [];
    let index = 0;
    const outer = ctx.pipeline;
    const stageCtx = (): WalkContext => ({
      ...ctx,
      via: [...ctx.via, 'pipe'],
      pipeline: outer === null ? { id, index: index++, length } : { id, index: index++, length, outer },
    });
    if (first !== undefined) {
      starts.push(this.segments.length);
      first(stageCtx());
    }
    for (const stage of stages) {
      starts.push(this.segments.length);
      this.#statement(stage, src, stageCtx());
    }
    starts.push(this.segments.length);
    this.#feedPipedScripts(starts, ctx);
  }

  /** `echo 'rm -rf x' | sh`, `cat <<EOF | bash`: the text a shell reads from the pipe is parsed too. */
  #feedPipedScripts(starts: number[], ctx: WalkContext): void {
    for (let k = 1; k + 1 < starts.length; k++) {
      const reader = this.#firstDirect(starts[k] as number, starts[k + 1] as number);
      if (reader === undefined) continue;
      const shell = readsScriptFromStdin(reader);
      if (!shell && !hasReplEscapes(reader.program)) continue;
      const writer = this.#firstDirect(starts[k - 1] as number, starts[k] as number);
      if (writer === undefined) continue;
      const text = staticOutput(writer);
      if (text === null) continue;
      const inner = { ...ctx, via: [...reader.via], pipeline: reader.pipeline, depth: ctx.depth + 1 };
      // a shell runs the text; a REPL (`| dc`, `| m4`, `| ed`) runs the shell escapes in it
      if (shell) this.script(text, inner);
      else for (const cmd of replEscapesOfInput(reader.program, text)) this.script(cmd, inner);
    }
  }

  /** The first non-wrapper segment of a stage (what the stage really runs). */
  #firstDirect(from: number, to: number): SimpleCommand | undefined {
    for (let i = from; i < to; i++) {
      const s = this.segments[i] as SimpleCommand;
      if (!s.wrapper) return s;
    }
    return undefined;
  }

  /**
   * A command (or compound statement) with redirects. A heredoc may carry the rest of the line
   * (`cat <<EOF | sh`, `cat <<EOF && rm x`): the pipeline tail and the `&&` right side are walked too.
   * Words that stand after a redirection are the command's words (`env 2>/dev/null rm -rf ~`).
   */
  #redirectedCommand(
    stmt: SyntaxNode,
    body: SyntaxNode | null,
    redirectNodes: SyntaxNode[],
    src: string,
    ctx: WalkContext,
  ): void {
    const all = [
      ...redirectNodes,
      ...(body?.type === 'command' ? body.children.filter((c) => c.field === 'redirect') : []),
    ];
    let tail: SyntaxNode | undefined;
    const rights: SyntaxNode[] = [];
    let respelled: string | undefined;
    for (const r of all) {
      if (r.type !== 'heredoc_redirect') continue;
      const layout = heredocLayout(r, src);
      for (const c of layout.line) {
        if (c.type === 'pipeline' && c.field === null) tail = c;
        else if (c.field === 'right') rights.push(c);
        else if (c.type === 'ERROR') {
          if (/^&(?!&)/.test(src.slice(c.start, c.end))) this.flags.background = true;
          respelled ??= heredocLine(stmt, r, layout, c, src);
        }
      }
    }
    const emit = (c: WalkContext): void => {
      const walked = redirectNodes.map((r) => walkRedirect(this.#walker, r, src, c));
      const redirects = walked.flatMap((w) => w.redirects);
      const words = walked.flatMap((w) => w.words);
      if (body === null) {
        this.#addCommand(this.#words(words, src, c), [], redirects, c);
      } else if (body.type === 'command') {
        this.#command(body, redirects, words, src, c);
      } else {
        const from = this.segments.length;
        // `a && b 2>/dev/null c`: the grammar hangs the redirect on the list; its words are b's
        const last = words.length > 0 ? lastCommand(body) : undefined;
        if (last !== undefined) this.#wordsOf.set(last, words);
        this.#statement(body, src, c);
        if (last === undefined && words.length > 0) this.#strayWords(words, src, c);
        for (let i = from; i < this.segments.length; i++)
          (this.segments[i] as SimpleCommand).redirects.push(...redirects);
      }
    };
    if (tail === undefined) emit(ctx);
    else
      this.#pipeline(
        tail.children.filter((c) => c.named && c.type !== 'comment'),
        src,
        ctx,
        emit,
      );
    for (const r of rights) this.#statement(r, src, ctx);
    // `cmd <<EOF args | sh`, `cmd <<EOF; rest`: the line as the shell reads it is walked as well
    if (respelled !== undefined) this.script(respelled, { ...ctx, depth: ctx.depth + 1 });
  }

  /**
   * Words after the redirections of a compound command or function (`{ env; } 2>/dev/null rm -rf ~`):
   * a syntax error to bash; never dropped, they are judged as a command of their own.
   */
  #strayWords(nodes: SyntaxNode[], src: string, ctx: WalkContext): void {
    const first = nodes.reduce((a, b) => (b.start < a.start ? b : a));
    this.#markUnparseable(`words after the redirections of a compound command ('${clip(src.slice(first.start))}')`);
    this.#addCommand(this.#words(nodes, src, ctx), [], [], ctx);
  }

  #command(
    node: SyntaxNode,
    outerRedirects: Redirect[],
    outerWords: SyntaxNode[],
    src: string,
    ctx: WalkContext,
  ): void {
    const assignments: Assignment[] = [];
    const redirects: Redirect[] = [];
    const nodes: SyntaxNode[] = [];
    for (const child of node.children) {
      if (child.type === 'variable_assignment') {
        assignments.push(this.#assignment(child, src, ctx));
      } else if (child.field === 'redirect') {
        const walked = walkRedirect(this.#walker, child, src, ctx);
        redirects.push(...walked.redirects);
        nodes.push(...walked.words);
      } else if (child.field === 'name' || child.field === 'argument') {
        nodes.push(child);
      }
    }
    nodes.push(...outerWords, ...this.#takeWords(node));
    this.#addCommand(this.#words(nodes, src, ctx), assignments, [...redirects, ...outerRedirects], ctx);
  }

  /** The words a redirect hung on an enclosing list holds for `node` (once). */
  #takeWords(node: SyntaxNode): SyntaxNode[] {
    const words = this.#wordsOf.get(node);
    if (words === undefined) return [];
    this.#wordsOf.delete(node);
    return words;
  }

  /** The words of a command from its word nodes (own and from inside its redirections), in source order. */
  #words(unordered: SyntaxNode[], src: string, ctx: WalkContext): Word[] {
    const nodes = unordered.length > 1 ? [...unordered].sort((a, b) => a.start - b.start) : unordered;
    const words: Word[] = [];
    let prevEnd = -1;
    for (let i = 0; i < nodes.length; i++) {
      const child = nodes[i] as SyntaxNode;
      // zero-width nodes are tokens the parser inserted to recover from an error
      if (child.start === child.end) continue;
      let w: Word;
      if (!child.named && child.type === '$') {
        // $"…" (a translated string) arrives as `$` + string: the `$` is dropped
        const next = nodes[i + 1];
        if (next !== undefined && next.start === child.end && next.field === 'argument') {
          w = walkWord(this.#walker, next, src, ctx);
          i++;
        } else {
          w = { text: '$', dynamic: false };
        }
      } else {
        w = walkWord(this.#walker, child, src, ctx);
      }
      const gap = prevEnd < 0 ? '' : src.slice(prevEnd, child.start);
      if (words.length > 0 && (gap === '\\\n' || gap === '\\\r\n')) {
        // backslash-newline continues the previous word: r\<newline>m → rm
        const last = words[words.length - 1] as Word;
        words[words.length - 1] = { text: last.text + w.text, dynamic: last.dynamic || w.dynamic };
      } else {
        words.push(w);
      }
      prevEnd = (nodes[i] as SyntaxNode).end;
    }
    return words;
  }

  /** `for NAME in WORDS; do …; done` (and `select`): the words, then the body; the loop variable is recorded. */
  #forStatement(node: SyntaxNode, src: string, ctx: WalkContext): void {
    this.flags.control_flow = true;
    let name: string | undefined;
    let inWords = false;
    const words: string[] = [];
    const from = this.segments.length;
    for (const child of node.children) {
      if (!child.named) {
        if (child.type === 'in') inWords = true;
        else if (child.type === '&') this.flags.background = true;
        continue;
      }
      if (name === undefined && child.type === 'variable_name') {
        name = src.slice(child.start, child.end);
      } else if (isWordNode(child)) {
        const w = walkWord(this.#walker, child, src, ctx);
        if (inWords) words.push(w.text);
      } else {
        if (inWords && name !== undefined) {
          this.loopVariables.push({ name, words, from, at: this.segments.length });
          inWords = false;
        }
        this.#statement(child, src, ctx);
      }
    }
  }

  #functionDefinition(node: SyntaxNode, src: string, ctx: WalkContext): void {
    this.flags.function_def = true;
    const nameNode = node.children.find((c) => c.field === 'name');
    const name = nameNode === undefined ? '' : src.slice(nameNode.start, nameNode.end);
    const from = this.segments.length;
    const inner: WalkContext = { ...ctx, via: [...ctx.via, 'function'] };
    for (const c of node.children) {
      if (c.field === 'body') this.#statement(c, src, inner);
    }
    if (name !== '') this.functions.push({ name, from, to: this.segments.length });
    const walked = node.children
      .filter((c) => c.field === 'redirect')
      .map((r) => walkRedirect(this.#walker, r, src, inner));
    const redirects = walked.flatMap((w) => w.redirects);
    const words = walked.flatMap((w) => w.words);
    if (words.length > 0) this.#strayWords(words, src, ctx);
    for (let i = from; i < this.segments.length; i++) {
      const s = this.segments[i] as SimpleCommand;
      s.redirects.push(...redirects);
      if (name !== '' && s.program === name) {
        this.redFlags.push(`function '${name}' calls itself (fork bomb pattern)`);
        break;
      }
    }
  }

  /** `export`, `local`, `unset`…, with the words a redirect after it holds (`export 2>/dev/null PATH=x`). */
  #declaration(node: SyntaxNode, src: string, ctx: WalkContext): void {
    const extra = this.#takeWords(node);
    this.flags.env_change = true;
    const words: Word[] = [];
    const assignments: Assignment[] = [];
    for (const c of node.children) {
      if (!c.named) {
        if (words.length === 0) words.push({ text: c.type, dynamic: false });
        continue;
      }
      if (c.type === 'variable_assignment') {
        const a = this.#assignment(c, src, ctx);
        assignments.push(a);
        words.push({ text: `${a.name}=${a.value}`, dynamic: a.dynamic });
      } else {
        const w = walkWord(this.#walker, c, src, ctx);
        words.push(w);
        if (words[0]?.text === 'unset' && w.text === 'PATH') this.flags.path_change = true;
      }
    }
    for (const w of this.#words(extra, src, ctx)) {
      words.push(w);
      const m = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(w.text);
      if (words[0]?.text === 'unset') {
        if (w.text === 'PATH') this.flags.path_change = true;
      } else if (m !== null) {
        const name = m[1] as string;
        assignments.push({ name, value: w.text.slice(name.length + 1), dynamic: w.dynamic });
        if (name === 'PATH') this.flags.path_change = true;
      }
    }
    const seg = buildSegment(words, assignments, [], ctx);
    this.segments.push(seg);
    // what the builtin evaluates again (`declare 'a[$(cmd)]=1'`, `local -i x='…'`) is judged as code
    // (the assignments themselves are this segment's: only the evaluated code is walked)
    for (const e of evaluatedWords(seg.program, words)) if (e.kind === 'script') this.#evaluated(e, ctx);
  }

  #assignment(node: SyntaxNode, src: string, ctx: WalkContext): Assignment {
    const nameNode = node.children.find((c) => c.field === 'name');
    const valueNode = node.children.find((c) => c.field === 'value');
    const name = nameNode === undefined ? '' : src.slice(nameNode.start, nameNode.end);
    if (nameNode?.type === 'subscript') scanNode(this.#walker, nameNode, src, ctx);
    let value = '';
    let dynamic = false;
    if (valueNode !== undefined) {
      if (valueNode.type === 'array') {
        const parts = valueNode.children.filter((c) => c.named).map((c) => walkWord(this.#walker, c, src, ctx));
        value = `(${parts.map((p) => p.text).join(' ')})`;
        dynamic = parts.some((p) => p.dynamic);
      } else {
        const w = walkWord(this.#walker, valueNode, src, ctx);
        value = w.text;
        dynamic = w.dynamic;
      }
    }
    this.flags.env_change = true;
    if (name === 'PATH') this.flags.path_change = true;
    return { name, value, dynamic };
  }

  // ---- commands and wrappers -----------------------------------------------------------------

  #addCommand(words: Word[], assignments: Assignment[], redirects: Redirect[], ctx: WalkContext): void {
    for (const a of assignments) {
      this.flags.env_change = true;
      if (a.name === 'PATH') this.flags.path_change = true;
    }
    const seg = buildSegment(words, assignments, redirects, ctx);
    this.segments.push(seg);
    if (words.length === 0 || seg.unknown_program) return;
    this.#expand(seg, words, ctx);
    if (readsScriptFromStdin(seg)) {
      for (const r of seg.redirects) {
        if (r.op !== '<<' && r.op !== '<<-' && r.op !== '<<<') continue;
        if (r.dynamic) this.redFlags.push(`${seg.program} reads a script built at run time from a here-document`);
        else this.script(r.target, { via: [...ctx.via, 'heredoc'], pipeline: ctx.pipeline, depth: ctx.depth + 1 });
      }
    } else if (hasReplEscapes(seg.program)) {
      // `m4 <<EOF … esyscmd(…) … EOF`, `dc <<< '!cmd'`: the shell escapes in the input run
      for (const r of seg.redirects) {
        if ((r.op !== '<<' && r.op !== '<<-' && r.op !== '<<<') || r.dynamic) continue;
        for (const cmd of replEscapesOfInput(seg.program, r.target))
          this.script(cmd, { via: [...ctx.via, 'heredoc'], pipeline: ctx.pipeline, depth: ctx.depth + 1 });
      }
    }
  }

  /** Code a builtin or a test evaluates again (`: "a[$(cmd)]"`), walked as a script. */
  #evaluated(e: Expansion & { kind: 'script' }, ctx: WalkContext): void {
    this.script(e.text, { via: [...ctx.via, e.via], pipeline: ctx.pipeline, depth: ctx.depth + 1 });
  }

  /** The commands a wrapper runs and the code a builtin evaluates again, walked as commands and scripts. */
  #expand(seg: SimpleCommand, words: Word[], ctx: WalkContext): void {
    const exp = expandWrapper(seg.program, words, this.#homes);
    if (exp !== null) {
      seg.wrapper = exp.wrapper;
      for (const inner of exp.inner) {
        const via = [...ctx.via, inner.via];
        if (inner.kind === 'argv') {
          const next: WalkContext = { via, pipeline: ctx.pipeline, depth: ctx.depth };
          if (inner.findBroad !== undefined) next.findBroad = inner.findBroad;
          if (inner.unknownTail === true || ctx.unknownTail === true) next.unknownTail = true;
          this.#addCommand(inner.words, inner.assignments ?? [], [], next);
        } else if (inner.dynamic) {
          this.redFlags.push(`${inner.via} runs a string built at run time ('${clip(inner.text)}')`);
          // its value may still be known (`eval "$(echo cm0gLXJmIH4= | base64 -d)"`): walk it too
          if (inner.value !== undefined)
            this.script(inner.value, { via, pipeline: ctx.pipeline, depth: ctx.depth + 1 });
        } else {
          this.script(inner.text, { via, pipeline: ctx.pipeline, depth: ctx.depth + 1 });
        }
      }
    }
  }
}
