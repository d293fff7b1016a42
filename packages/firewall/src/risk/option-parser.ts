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

function resolveLong(spec: CommandSpec, name: string): { canonical: string; takesArg: boolean } | null {
  const a = lookup(spec.longArg, name);
  if (a !== undefined) return { canonical: a, takesArg: true };
  const b = lookup(spec.long, name);
  if (b !== undefined) return { canonical: b, takesArg: false };
  if (spec.gnuPrefix !== true || name.length < 2) return null;
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
  for (; i < argv.length; i++) {
    const w = argv[i] as string;
    const isOpt = !endOfOptions && w.length > 1 && w.startsWith('-') && (spec.isOption?.(w) ?? true);
    if (!isOpt) {
      if (stopAtOperand) return i;
      out.positionals.push(w);
      out.positionalIndex.push(i);
      continue;
    }
    if (w === '--') {
      endOfOptions = true;
      continue;
    }
    if (spec.wholeWord === true) {
      addOption(out, w, '');
      continue;
    }
    if (w.startsWith('--')) {
      const eq = w.indexOf('=');
      const name = eq < 0 ? w.slice(2) : w.slice(2, eq);
      const known = resolveLong(spec, name);
      if (known === null) {
        addOption(out, `--${name}`, eq < 0 ? '' : w.slice(eq + 1));
      } else if (eq >= 0) {
        addOption(out, known.canonical, w.slice(eq + 1));
      } else if (known.takesArg) {
        addOption(out, known.canonical, argv[i + 1] ?? '');
        i++;
      } else {
        addOption(out, known.canonical, '');
      }
      continue;
    }
    for (let k = 1; k < w.length; k++) {
      const letter = w[k] as string;
      const withArg = lookup(spec.shortArg, letter);
      if (withArg !== undefined) {
        if (k < w.length - 1) addOption(out, withArg, w.slice(k + 1));
        else {
          addOption(out, withArg, argv[i + 1] ?? '');
          i++;
        }
        break;
      }
      const optArg = lookup(spec.shortOptArg, letter);
      if (optArg !== undefined) {
        addOption(out, optArg, w.slice(k + 1));
        break;
      }
      addOption(out, lookup(spec.short, letter) ?? `-${letter}`, '');
    }
  }
  return i;
}
