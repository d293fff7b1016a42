// Shell command patterns for policy rules, matched against the CommandModel (never against raw
// text). A DENY pattern matches every spelling: any segment at any depth, the program by basename
// after de-quoting, options normalised, operands as an ordered subsequence, `*` for any arguments.
// An ALLOW pattern matches only a command that is exactly one plain segment of that shape.

import { FingerError } from '@finger/protocol';
import type { CommandModel, ParsedArgs, SimpleCommand } from '@finger/shell-risk';
import { isStandardProgramPath, parseArgs, splitPatternWords, SUBCOMMAND_PROGRAMS } from '@finger/shell-risk';

import { compileValueGlob, type Matcher } from '../value-glob.js';
import { compileWildcardWords, matchWildcardWords } from '../wildcard-words.js';

/** A compiled command pattern. */
export interface CommandPattern {
  readonly source: string;
  readonly mode: 'deny' | 'allow';
  /** Whether the pattern matches the command. */
  test(model: CommandModel): boolean;
  /** Index of the first matching segment (for an allow pattern: 0), or -1. */
  firstMatch(model: CommandModel): number;
}

const GLOB_CHARS = /[*?[]/;

/** Command-pattern words are globs without backslash escapes (the words arrive de-quoted). */
const compileGlob = (glob: string): Matcher => compileValueGlob(glob, false);

const OPERATORS = new Set(['|', '||', '&&', ';', '&', '|&', ';;']);

function basename(p: string): string {
  const slash = p.lastIndexOf('/');
  return slash < 0 ? p : p.slice(slash + 1);
}

const parsedCache = new WeakMap<SimpleCommand, Map<string, ParsedArgs>>();
function parsedAs(seg: SimpleCommand, program: string): ParsedArgs {
  let byProgram = parsedCache.get(seg);
  if (byProgram === undefined) {
    byProgram = new Map();
    parsedCache.set(seg, byProgram);
  }
  let p = byProgram.get(program);
  if (p === undefined) {
    p = parseArgs(program, seg.argv);
    byProgram.set(program, p);
  }
  return p;
}

function invalid(pattern: string, why: string): FingerError {
  return new FingerError('E_INVALID_ARGS', `invalid command pattern ${JSON.stringify(pattern)}: ${why}`, { pattern });
}

function compileDeny(source: string, words: string[]): CommandPattern {
  const progWord = basename(words[0] as string);
  const progIsGlob = GLOB_CHARS.test(progWord);
  const progMatch = compileGlob(progWord);
  const specName = progIsGlob ? '' : progWord;
  const parsed = parseArgs(specName, words);
  const options = [...parsed.options].map(([name, values]) => {
    const wanted = values.filter((v) => v !== '' && v !== '*').map(compileGlob);
    return { name, wanted };
  });
  const operands = parsed.positionals.filter((p) => p !== '*').map(compileGlob);
  const anchored = SUBCOMMAND_PROGRAMS.has(specName) && parsed.positionals[0] !== '*';

  const segmentMatches = (seg: SimpleCommand): boolean => {
    if (seg.argv.length === 0) return false;
    if (!seg.unknown_program && (progIsGlob ? !progMatch(seg.name) : seg.name !== progWord)) return false;
    const args = parsedAs(seg, specName);
    const open = seg.unknown_tail; // xargs may append any option or operand
    for (const o of options) {
      const have = args.options.get(o.name);
      if (have === undefined) {
        if (open) continue;
        return false;
      }
      if (o.wanted.length > 0 && !o.wanted.some((m) => have.some((v) => m(v)))) return false;
    }
    // operands: an ordered subsequence (the first one anchored for subcommand programs)
    let k = 0;
    for (let i = 0; i < args.positionals.length && k < operands.length; i++) {
      const value = args.positionals[i] as string;
      const wild =
        seg.dynamic.includes(args.positionalIndex[i] as number) || (value === '{}' && seg.via.includes('find -exec'));
      if (wild || (operands[k] as Matcher)(value)) k++;
      else if (anchored && k === 0) return false;
    }
    return k === operands.length || open;
  };

  return {
    source,
    mode: 'deny',
    firstMatch(model) {
      const segs = model.segments;
      for (let i = 0; i < segs.length; i++) if (segmentMatches(segs[i] as SimpleCommand)) return i;
      return -1;
    },
    test(model) {
      return this.firstMatch(model) >= 0;
    },
  };
}

function compileAllow(source: string, words: string[]): CommandPattern {
  const prog = words[0] as string;
  const progHasSlash = prog.includes('/');
  const tokens = compileWildcardWords(words.slice(1));

  const plain = (model: CommandModel): SimpleCommand | null => {
    if (model.segments.length !== 1 || model.unparseable !== undefined || model.notes.length > 0) return null;
    const f = model.flags;
    if (f.substitution || f.dynamic || f.env_change || f.path_change || f.background || f.function_def) return null;
    if (f.control_flow || f.heredoc || f.redirect_write || f.invisible_unicode || f.too_long || f.subshell) return null;
    const seg = model.segments[0] as SimpleCommand;
    if (seg.wrapper || seg.unknown_program || seg.unknown_tail || seg.redirects.length > 0) return null;
    if (seg.assignments.length > 0 || seg.dynamic.length > 0 || seg.via.length > 0) return null;
    return seg;
  };

  return {
    source,
    mode: 'allow',
    firstMatch(model) {
      const seg = plain(model);
      if (seg === null) return -1;
      const progOk = progHasSlash
        ? seg.path === prog
        : seg.path === prog || (seg.program === prog && !seg.local_binary && isStandardProgramPath(seg.path));
      return progOk && matchWildcardWords(tokens, seg.argv, 1) ? 0 : -1;
    },
    test(model) {
      return this.firstMatch(model) >= 0;
    },
  };
}

/**
 * Compiles a policy shell pattern once (`rm -rf *`, `git push --force`, `curl * | sh` is refused:
 * one command per pattern). `deny` matches every spelling of the command anywhere in the model;
 * `allow` matches only a whole command of exactly that shape. Throws `E_INVALID_ARGS` for an
 * empty pattern, an open quote or a shell operator.
 */
export function compileCommandPattern(pattern: string, mode: 'deny' | 'allow'): CommandPattern {
  const words = splitPatternWords(pattern);
  if (words === null) throw invalid(pattern, 'unterminated quote');
  if (words.length === 0) throw invalid(pattern, 'empty pattern');
  const op = words.find((w) => OPERATORS.has(w));
  if (op !== undefined) throw invalid(pattern, `'${op}': a pattern describes one command`);
  if (mode !== 'deny' && mode !== 'allow') throw invalid(pattern, `mode must be 'deny' or 'allow'`);
  return mode === 'deny' ? compileDeny(pattern, words) : compileAllow(pattern, words);
}
