// awk programs: the shell commands they run — `system(CMD)`, `print … | CMD`, `CMD | getline`,
// `|&` coprocesses — as string literals (judged as shell code) or built at run time
// (`system($0)`: whatever the input says), and the files they write (`print > "FILE"`, gawk's
// `-i inplace`). String and regex literals are masked first, so `/a|b/` is not a pipe.

import type { Expansion, Word } from './expansion.js';

/** The programs of an awk command line and what else matters about it. */
export interface AwkPrograms {
  programs: Word[];
  /** gawk `-i inplace`: the file operands are edited in place */
  inplace: boolean;
  /** the operands after the program (files, or `var=value`) */
  files: string[];
}

const VALUE_SHORT = /^-[FvfeilEW]$/;
const VALUE_LONG = /^--(?:field-separator|assign|file|source|include|load|exec)$/;

/** awk's options: -f FILE (no inline program), -e / --source TEXT (gawk), -i LIB. */
export function awkPrograms(words: readonly Word[]): AwkPrograms {
  const out: AwkPrograms = { programs: [], inplace: false, files: [] };
  let fromFile = false;
  let i = 1;
  for (; i < words.length; i++) {
    const word = words[i] as Word;
    const w = word.text;
    if (w === '--') {
      i++;
      break;
    }
    if (!w.startsWith('-') || w === '-') break;
    const long = /^(--[a-z-]+)=(.*)$/s.exec(w);
    const name = long?.[1] ?? (w.startsWith('--') ? w : w.slice(0, 2));
    let value: Word | undefined;
    if (long !== null) value = { text: long[2] as string, dynamic: word.dynamic };
    else if (VALUE_LONG.test(w) || VALUE_SHORT.test(w)) value = words[++i];
    else if (/^-[FvfeilEW]./.test(w)) value = { text: w.slice(2), dynamic: word.dynamic };
    else continue;
    if (value === undefined) break;
    if (name === '-f' || name === '--file' || name === '-E' || name === '--exec') fromFile = true;
    if (name === '-e' || name === '--source') out.programs.push(value);
    if ((name === '-i' || name === '--include') && value.text === 'inplace') out.inplace = true;
  }
  if (out.programs.length === 0 && !fromFile && words[i] !== undefined) out.programs.push(words[i++] as Word);
  out.files = words.slice(i).map((w) => w.text);
  return out;
}

/** The program with its string literals replaced by `\uE000N\uE000` and regex literals by `\uE001`, and the literals. */
function mask(src: string): { masked: string; strings: string[] } {
  const strings: string[] = [];
  let masked = '';
  let prev = '';
  for (let p = 0; p < src.length; p++) {
    const c = src[p] as string;
    if (c === '"') {
      let s = '';
      for (p++; p < src.length && src[p] !== '"'; p++) {
        if (src[p] === '\\' && p + 1 < src.length) {
          const e = src[++p] as string;
          s += e === 'n' ? '\n' : e === 't' ? '\t' : e;
        } else s += src[p];
      }
      masked += `\uE000${strings.length}\uE000`;
      strings.push(s);
      prev = 'x';
      continue;
    }
    if (c === '/' && (prev === '' || /[(,;{}!~&|=\n]/.test(prev))) {
      for (p++; p < src.length && src[p] !== '/' && src[p] !== '\n'; p++) if (src[p] === '\\') p++;
      masked += '\uE001';
      prev = 'x';
      continue;
    }
    masked += c;
    if (!/\s/.test(c)) prev = c;
  }
  return { masked, strings };
}

/** A masked expression: the string literal it is (alone), or null. */
function literal(expr: string, strings: readonly string[]): string | null {
  const m = /^\s*\(?\s*\uE000(\d+)\uE000\s*\)?\s*$/.exec(expr);
  return m === null ? null : (strings[Number(m[1])] ?? null);
}

function restore(expr: string, strings: readonly string[]): string {
  return expr
    .replace(/\uE000(\d+)\uE000/g, (_, k: string) => JSON.stringify(strings[Number(k)] ?? ''))
    .replace(/\uE001/g, '/…/');
}

const SHELL = /^(?:\/(?:usr\/)?bin\/)?(?:ba|da|z|k|a)?sh(?:\s+-s)?$/;
/** How far before and after a pipe its command is looked for. */
const WINDOW = 400;

/** The commands one awk program runs: [text, built at run time]. */
function commands(src: string): { text: string; dynamic: boolean }[] {
  const { masked, strings } = mask(src);
  const out: { text: string; dynamic: boolean }[] = [];
  const seen = new Set<string>();
  let dynamic = false;
  const add = (expr: string): void => {
    if (seen.has(expr)) return;
    seen.add(expr);
    const lit = literal(expr, strings);
    if (lit !== null) out.push({ text: lit, dynamic: false });
    else if (!dynamic) {
      // one command built at run time is enough to say so (the others would repeat it)
      dynamic = true;
      out.push({ text: restore(expr.trim(), strings), dynamic: true });
    }
  };
  for (const m of masked.matchAll(/\bsystem\s*\(/g)) {
    let depth = 1;
    let j = (m.index ?? 0) + m[0].length;
    const start = j;
    const end = Math.min(masked.length, start + 2 * WINDOW);
    for (; j < end && depth > 0; j++) {
      if (masked[j] === '(') depth++;
      else if (masked[j] === ')') depth--;
    }
    add(masked.slice(start, depth === 0 ? j - 1 : j));
  }
  for (const m of masked.matchAll(/(?<!\|)\|&?(?!\|)/g)) {
    const at = m.index ?? 0;
    // a bounded window on each side keeps a program of many pipes linear
    const after = masked.slice(at + m[0].length, at + m[0].length + WINDOW);
    const before = masked.slice(Math.max(0, at - WINDOW), at);
    if (/^\s*getline\b/.test(after)) {
      // CMD | getline: the command is the expression before the pipe
      add(/(?:\uE000\d+\uE000|[\w$.[\]]+|\([^()]*\))\s*$/.exec(before)?.[0] ?? '');
    } else {
      // print … | CMD: the command is the expression after it, up to the statement's end
      const cmd = /^[^;}\n]*/.exec(after)?.[0] ?? '';
      add(cmd);
      const lit = literal(cmd, strings);
      if (lit !== null && SHELL.test(lit.trim())) {
        // print X | "sh": what is printed is the shell's script
        const printed = /\bprintf?\b([^;{}\n]*)$/.exec(before)?.[1] ?? '';
        add(printed.trim() === '' ? '$0' : printed);
      }
    }
  }
  return out;
}

/** The commands an awk command line runs, as shell code. */
export function awkCode(a: AwkPrograms): Expansion[] {
  return a.programs.flatMap((w) =>
    commands(w.text).map((c) => ({
      kind: 'script' as const,
      via: 'awk',
      text: c.text,
      dynamic: c.dynamic || w.dynamic,
    })),
  );
}

/** The files an awk command line writes: `print > "FILE"` / `>>`, and its operands under `-i inplace`. */
export function awkWrites(a: AwkPrograms): string[] {
  const out = a.inplace ? a.files.filter((f) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(f)) : [];
  for (const w of a.programs) {
    const { masked, strings } = mask(w.text);
    for (const m of masked.matchAll(/\bprintf?\b[^;}\n|]*?>>?\s*\uE000(\d+)\uE000/g)) {
      const f = strings[Number(m[1])];
      if (f !== undefined) out.push(f);
    }
  }
  return out;
}

/** Whether an awk program runs the lines it reads as commands (`{system($0)}`, `{print | "sh"}`): a shell fed by stdin. */
export function awkRunsInput(a: AwkPrograms): boolean {
  return a.programs.some((w) =>
    commands(w.text).some((c) => (c.dynamic && /\$/.test(c.text)) || SHELL.test(c.text.trim())),
  );
}
