// Parses one argv against a program's option table (short clusters, long options with GNU
// prefixes, `--` end of options); shared by the per-program parsers.

import { type CommandSpec, lookup } from './option-spec.js';

/** The options and operands of one argv, after normalisation. */
export interface ParsedArgs {
  /** canonical option name → its values ('' when it takes none), in order of appearance */
  options: Map<string, string[]>;
  /** operands, in order */
  positionals: string[];
  /** argv index of each operand */
  positionalIndex: number[];
}

/** Records one occurrence of option `name` with `value` ('' when it takes none). */
export function addOption(out: ParsedArgs, name: string, value: string): void {
  const list = out.options.get(name);
  if (list === undefined) out.options.set(name, [value]);
  else list.push(value);
}

/**
 * The option `--name` stands for: its own entry, or (gnuPrefix) the one option it abbreviates —
 * getopt_long takes any unambiguous prefix, even one letter. Null when unknown or ambiguous.
 */
export function resolveLong(spec: CommandSpec, name: string): { canonical: string; takesArg: boolean } | null {
  const a = lookup(spec.longArg, name);
  if (a !== undefined) return { canonical: a, takesArg: true };
  const b = lookup(spec.long, name);
  if (b !== undefined) return { canonical: b, takesArg: false };
  if (spec.gnuPrefix !== true || name === '') return null;
  let found: { canonical: string; takesArg: boolean } | null = null;
  for (const [table, takesArg] of [
    [spec.long, false],
    [spec.longArg, true],
  ] as const) {
    for (const [full, canonical] of Object.entries(table ?? {})) {
      if (!full.startsWith(name)) continue;
      if (found !== null && found.canonical !== canonical) return null; // ambiguous
      found = { canonical, takesArg };
    }
  }
  return found;
}

/**
 * Whether `word` is `--name` or `--name=…` with `name` a prefix of one of `options`: how a check
 * that knows only a program's dangerous long options must read them (an abbreviation may be one).
 */
export function abbreviatesAny(word: string, options: readonly string[]): boolean {
  if (!word.startsWith('--') || word.length < 3) return false;
  const name = word.slice(2).split('=', 1)[0] as string;
  return options.some((o) => o.startsWith(name));
}

/** Parses argv[start…] against a spec; returns the index where parsing stopped (end of argv). */
export function parseWithSpec(
  spec: CommandSpec,
  argv: readonly string[],
  start: number,
  out: ParsedArgs,
  stopAtOperand: boolean,
): number {
  let i = start;
  let endOfOptions = false;
  while (i < argv.length) {
    const w = argv[i] as string;
    const isOpt = !endOfOptions && w.length > 1 && w.startsWith('-') && (spec.isOption?.(w) ?? true);
    if (!isOpt) {
      if (stopAtOperand) return i;
      out.positionals.push(w);
      out.positionalIndex.push(i++);
      continue;
    }
    if (w === '--') {
      endOfOptions = true;
      i++;
      continue;
    }
    i = parseOption(spec, argv, i, out);
  }
  return i;
}

/**
 * Reads the option word argv[i] (not `--`) into `out`: each option of a short cluster, or one
 * long option; a value is the rest of the cluster, the `=value` or the next word. Returns the
 * index of the word after it (and after its value).
 */
export function parseOption(spec: CommandSpec, argv: readonly string[], i: number, out: ParsedArgs): number {
  const w = argv[i] as string;
  if (spec.wholeWord === true) {
    addOption(out, w, '');
    return i + 1;
  }
  if (w.startsWith('--')) {
    const eq = w.indexOf('=');
    const name = eq < 0 ? w.slice(2) : w.slice(2, eq);
    const known = resolveLong(spec, name);
    if (known === null) addOption(out, `--${name}`, eq < 0 ? '' : w.slice(eq + 1));
    else if (eq >= 0) addOption(out, known.canonical, w.slice(eq + 1));
    else if (known.takesArg) {
      addOption(out, known.canonical, argv[i + 1] ?? '');
      return i + 2;
    } else addOption(out, known.canonical, '');
    return i + 1;
  }
  for (let k = 1; k < w.length; k++) {
    const letter = w[k] as string;
    const withArg = lookup(spec.shortArg, letter);
    if (withArg !== undefined) {
      if (k < w.length - 1) {
        addOption(out, withArg, w.slice(k + 1));
        return i + 1;
      }
      addOption(out, withArg, argv[i + 1] ?? '');
      return i + 2;
    }
    const optArg = lookup(spec.shortOptArg, letter);
    if (optArg !== undefined) {
      addOption(out, optArg, w.slice(k + 1));
      return i + 1;
    }
    addOption(out, lookup(spec.short, letter) ?? `-${letter}`, '');
  }
  return i + 1;
}
