// Shell text that a command line holds as data and runs later in the same line, judged as the
// commands it is:
// - an alias used after it is defined (`alias r=rm; r -rf ~`, `alias g='rm -rf'; g ~`): the use is
//   the alias body followed by its arguments, the body's own command words expanded again when they
//   name another alias (`alias a=b; alias b='rm -rf'; a ~`), up to MAX_ALIAS_DEPTH deep. Bash
//   expands aliases only in interactive shells or under `shopt -s expand_aliases`, and only on a
//   line read after the definition; judged strictly, as if it always did.
// - a script written from literal text (`printf 'rm -rf ~' > /tmp/r.sh`, `echo … > x.sh`,
//   `cat > f <<'EOF' … EOF`) and then run by a shell or `source` (`bash /tmp/r.sh`, `. f`,
//   `sh < f`, `./f`): the text is the script.
// The text is split into simple commands by a small lexer (quotes, escapes, `;` `&` `|` newlines,
// redirections, reserved words; a `$…` or `` `…` `` word is a run-time value), not the bash
// grammar, which is not at hand here; each command is judged by the segment rules
// (classify.ts's classifySegment, passed down by classify.ts as a {@link SegmentJudge}: classify.ts
// imports this module's callers, so it cannot be imported here). Only dangerous findings are reported.

import type { CommandModel, Redirect, SimpleCommand } from '../command-model.js';
import { SHELLS } from '../knowledge/programs/programs.js';
import { runsFile, scriptKey } from '../rules/download-run.js';

/** The dangerous reasons of one segment, judged alone ("segment N: …"). */
export type SegmentJudge = (seg: SimpleCommand, index: number) => string[];

/** How deep aliases of aliases are expanded. */
const MAX_ALIAS_DEPTH = 8;
/** At most this many synthetic commands are judged per command line (each costs linear time). */
const MAX_JUDGED = 64;
/** Literal script text longer than this is not lexed (the command line is at most 32 KB). */
const MAX_TEXT = 8192;

/** One simple command lexed from text. */
interface Lexed {
  words: string[];
  dynamic: boolean[];
  redirects: Redirect[];
}

const RESERVED = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'while',
  'until',
  '{',
  '}',
  '!',
  'esac',
  'time',
]);

/**
 * The simple commands of shell text: words split at unquoted blanks, quotes and backslashes
 * removed, commands split at unquoted `;` `&` `|` `(` `)` and newlines; `<`/`>` operators take
 * the next word as their target; `#` at a word's start comments to the end of the line.
 * Linear in the text.
 */
export function lexCommands(text: string): Lexed[] {
  const out: Lexed[] = [];
  let cur: Lexed = { words: [], dynamic: [], redirects: [] };
  let word = '';
  let inWord = false;
  let dyn = false;
  let redirectOp: string | null = null;
  const endWord = (): void => {
    if (!inWord) return;
    if (redirectOp !== null) {
      cur.redirects.push({ op: redirectOp, target: word, is_write: redirectOp.includes('>'), dynamic: dyn });
      redirectOp = null;
    } else if (cur.words.length === 0 && !dyn && RESERVED.has(word)) {
      // a reserved word is not the command
    } else {
      cur.words.push(word);
      cur.dynamic.push(dyn);
    }
    word = '';
    inWord = false;
    dyn = false;
  };
  const endCommand = (): void => {
    endWord();
    if (cur.words.length > 0) out.push(cur);
    cur = { words: [], dynamic: [], redirects: [] };
    redirectOp = null;
  };
  /** Copies a `$(…)` or `` `…` `` starting at i into the word; returns the index after it. */
  const substitution = (i: number): number => {
    const close = text[i] === '`' ? '`' : ')';
    let depth = 0;
    let k = i;
    for (; k < text.length; k++) {
      const c = text[k] as string;
      if (close === ')' && c === '(') depth++;
      else if (c === close && (close === '`' ? k > i : --depth === 0)) break;
    }
    word += text.slice(i, k + 1);
    return k + 1;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i] as string;
    if (c === '\\') {
      if (text[i + 1] !== '\n') {
        word += text[i + 1] ?? '';
        inWord = true;
      }
      i += 2;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      const stop = end < 0 ? text.length : end;
      word += text.slice(i + 1, stop);
      inWord = true;
      i = stop + 1;
    } else if (c === '"') {
      inWord = true;
      i++;
      while (i < text.length && text[i] !== '"') {
        const d = text[i] as string;
        if (d === '\\' && '"$`\\'.includes(text[i + 1] ?? '')) {
          word += text[i + 1];
          i += 2;
        } else if (d === '$' || d === '`') {
          dyn = true;
          if (d === '`' || text[i + 1] === '(') i = substitution(d === '`' ? i : i + 1);
          else {
            word += d;
            i++;
          }
        } else {
          word += d;
          i++;
        }
      }
      i++;
    } else if (c === '$' || c === '`') {
      dyn = true;
      inWord = true;
      if (c === '`' || text[i + 1] === '(') {
        if (c === '$') word += '$';
        i = substitution(c === '`' ? i : i + 1);
      } else {
        word += c;
        i++;
      }
    } else if (c === ' ' || c === '\t') {
      endWord();
      i++;
    } else if (c === '\n' || c === ';' || c === '&' || c === '|' || c === '(' || c === ')') {
      if (c === '&' && text[i + 1] === '>') {
        endWord();
        let op = '&>';
        i += 2;
        if (text[i] === '>') {
          op += '>';
          i++;
        }
        redirectOp = op;
        continue;
      }
      endCommand();
      i++;
    } else if (c === '<' || c === '>') {
      const fd = /^\d+$/.test(word) && inWord && !dyn;
      if (fd) {
        word = '';
        inWord = false;
      } else endWord();
      let op = '';
      while (i < text.length && /[<>&|]/.test(text[i] as string)) op += text[i++];
      if (op.endsWith('&') && /\d|-/.test(text[i] ?? '')) {
        while (i < text.length && /[\d-]/.test(text[i] as string)) i++;
        continue; // a descriptor duplication (`2>&1`) names no file
      }
      redirectOp = op;
    } else if (c === '#' && !inWord) {
      while (i < text.length && text[i] !== '\n') i++;
    } else {
      word += c;
      inWord = true;
      i++;
    }
  }
  endCommand();
  return out;
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/** A segment for one lexed command, run where `at` runs (its position, wrappers and pipeline). */
function synthetic(cmd: Lexed, at: SimpleCommand, via: string, redirects: readonly Redirect[]): SimpleCommand {
  let start = 0;
  const assignments: SimpleCommand['assignments'] = [];
  for (; start < cmd.words.length - 1; start++) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(cmd.words[start] as string);
    if (m === null) break;
    const w = cmd.words[start] as string;
    assignments.push({ name: m[1] as string, value: w.slice(m[0].length), dynamic: cmd.dynamic[start] === true });
  }
  const argv = cmd.words.slice(start);
  const path = argv[0] ?? '';
  const relative = path.includes('/') && !path.startsWith('/');
  const dynamic: number[] = [];
  cmd.dynamic.slice(start).forEach((d, k) => {
    if (d) dynamic.push(k);
  });
  return {
    argv,
    program: relative ? path : basename(path),
    path,
    name: basename(path),
    dynamic,
    assignments,
    redirects: [...cmd.redirects, ...redirects],
    via: [...at.via, via],
    wrapper: false,
    local_binary: relative,
    unknown_program: dynamic[0] === 0,
    unknown_tail: at.unknown_tail,
    pipeline: at.pipeline,
  };
}

/** Judges synthetic segments, within the per-line budget; reports each dangerous finding with `intro`. */
class Judged {
  #budget = MAX_JUDGED;
  constructor(
    private readonly add: (reason: string) => void,
    private readonly rules: SegmentJudge,
  ) {}
  get spent(): boolean {
    return this.#budget <= 0;
  }
  judge(seg: SimpleCommand, index: number, intro: string): void {
    if (this.#budget-- <= 0) return;
    for (const r of this.rules(seg, index)) {
      const m = /^segment \d+: /.exec(r);
      if (m !== null) this.add(`segment ${index + 1}: ${intro}: ${r.slice(m[0].length)}`);
    }
  }
}

/** `alias NAME=VALUE…` definitions, and later uses of NAME as a command. */
function aliasRules(segs: readonly SimpleCommand[], judged: Judged): void {
  const aliases = new Map<string, string>();
  /** each alias body lexed once (a body is redefined rarely, used often) */
  const lexed = new Map<string, Lexed[]>();
  segs.forEach((seg, i) => {
    if (judged.spent) return;
    if (seg.program === 'alias') {
      seg.argv.slice(1).forEach((w, k) => {
        const eq = w.indexOf('=');
        if (eq <= 0 || w.startsWith('-')) return;
        lexed.delete(w.slice(0, eq));
        if (seg.dynamic.includes(k + 1)) aliases.delete(w.slice(0, eq));
        else aliases.set(w.slice(0, eq), w.slice(eq + 1));
      });
      return;
    }
    if (seg.program === 'unalias') {
      for (const w of seg.argv.slice(1)) if (w === '-a') aliases.clear();
      for (const w of seg.argv.slice(1)) aliases.delete(w);
      return;
    }
    if (seg.wrapper || aliases.size === 0 || seg.argv.length === 0 || !aliases.has(seg.path)) return;
    const dynamic = new Set(seg.dynamic);
    const use: Lexed = {
      words: seg.argv,
      dynamic: seg.argv.map((_, k) => dynamic.has(k)),
      redirects: [],
    };
    for (const cmd of expandAliases(use, aliases, lexed, new Set(), 0))
      judged.judge(
        synthetic(cmd, seg, 'alias', seg.redirects),
        i,
        `'${seg.path}' is an alias, which runs ${show(cmd)}`,
      );
  });
}

/** The commands `use` is when its first word is an alias: the body's commands, the last followed by its arguments. */
function expandAliases(
  use: Lexed,
  aliases: ReadonlyMap<string, string>,
  lexed: Map<string, Lexed[]>,
  seen: Set<string>,
  depth: number,
  room = { left: MAX_JUDGED },
): Lexed[] {
  if (room.left <= 0) return [];
  const name = use.words[0] as string;
  const body = aliases.get(name);
  if (body === undefined || seen.has(name) || depth >= MAX_ALIAS_DEPTH || use.dynamic[0] === true) {
    room.left--;
    return [use];
  }
  let known = lexed.get(name);
  if (known === undefined) {
    known = lexCommands(body.slice(0, MAX_TEXT));
    lexed.set(name, known);
  }
  const cmds = [...known];
  const last = cmds.at(-1);
  if (last === undefined) return [{ ...use, words: use.words.slice(1), dynamic: use.dynamic.slice(1) }];
  cmds[cmds.length - 1] = {
    words: [...last.words, ...use.words.slice(1)],
    dynamic: [...last.dynamic, ...use.dynamic.slice(1)],
    redirects: [...last.redirects, ...use.redirects],
  };
  const inner = new Set(seen).add(name);
  return cmds
    .flatMap((c) => expandAliases(c, aliases, lexed, inner, depth + 1, room))
    .filter((c) => c.words.length > 0);
}

function show(cmd: Lexed): string {
  const t = cmd.words.join(' ');
  return `'${t.length > 60 ? `${t.slice(0, 57)}…` : t}'`;
}

/** The text a segment writes to its standard output from its own words or here-document, or null. */
function literalOutput(seg: SimpleCommand): string | null {
  const a = seg.argv;
  if (seg.program === 'echo') {
    let k = 1;
    let escapes = false;
    for (; k < a.length && /^-[neE]+$/.test(a[k] as string); k++) escapes ||= (a[k] as string).includes('e');
    const text = a.slice(k).join(' ');
    return escapes ? unescape(text) : text;
  }
  if (seg.program === 'printf') {
    let k = 1;
    if (a[k] === '--') k++;
    const format = a[k];
    if (format === undefined || format.startsWith('-')) return null;
    const args = a.slice(k + 1);
    let used = 0;
    const text = unescape(format).replace(/%(?:%|[-+ #0-9.]*[sbdqc])/g, (m) =>
      m === '%%' ? '%' : (args[used++] ?? ''),
    );
    return [text, ...args.slice(used)].join(' ');
  }
  if (seg.program === 'cat' && a.length === 1) {
    const doc = seg.redirects.find((r) => r.op === '<<' || r.op === '<<-' || r.op === '<<<');
    return doc === undefined ? null : doc.target;
  }
  return null;
}

function unescape(text: string): string {
  return text.replace(/\\([ntr\\])/g, (_, c: string) =>
    c === 'n' ? '\n' : c === 't' ? '\t' : c === 'r' ? '\r' : '\\',
  );
}

/** Scripts written from literal text and run by a later segment. */
function writtenScriptRules(segs: readonly SimpleCommand[], judged: Judged): void {
  const texts = new Map<string, { text: string; from: number; lexed?: Lexed[] }>();
  const files = new Map<string, number>();
  segs.forEach((seg, i) => {
    if (judged.spent) return;
    if (files.size > 0 && !seg.wrapper) {
      let ran = runsFile(seg, files);
      // shell text: a shell or `source` runs it, or it is run as a program (no #! line: /bin/sh)
      if (
        ran !== null &&
        !SHELLS.has(seg.program) &&
        seg.program !== 'source' &&
        seg.program !== '.' &&
        ran !== seg.path
      )
        ran = null;
      const written = ran === null ? undefined : texts.get(scriptKey(ran));
      if (ran !== null && written !== undefined && written.from !== i) {
        written.lexed ??= lexCommands(written.text.slice(0, MAX_TEXT));
        for (const cmd of written.lexed)
          judged.judge(
            synthetic(cmd, seg, 'script', []),
            i,
            `${seg.program} runs '${ran}', written with literal text in segment ${written.from + 1}, which runs ${show(cmd)}`,
          );
      }
    }
    const out = seg.wrapper ? null : literalOutput(seg);
    for (const r of seg.redirects) {
      if (!r.is_write || r.dynamic || (r.fd !== undefined && r.fd !== 1)) continue;
      const k = scriptKey(r.target);
      const before = r.op.endsWith('>>') ? (texts.get(k)?.text ?? '') : '';
      if (out === null) {
        texts.delete(k);
        files.delete(k);
      } else if (before.length <= MAX_TEXT) {
        // (appends past MAX_TEXT are not kept: the text judged stays bounded)
        texts.set(k, { text: before === '' ? out : `${before}\n${out}`, from: i });
        files.set(k, i);
      }
    }
  });
}

/** Adds the dangerous findings of aliases used later and of scripts written from literal text and run. */
export function literalCommandRules(model: CommandModel, add: (reason: string) => void, judge: SegmentJudge): void {
  const judged = new Judged(add, judge);
  aliasRules(model.segments, judged);
  writtenScriptRules(model.segments, judged);
}
