// GNU sed scripts: the commands they run (`e CMD`, `e` alone runs the pattern space, the `e` flag
// of `s///` runs the substitution's result) and the files they write (`w FILE`, `W FILE`, the `w`
// flag of `s///`). A small reader of sed's syntax (addresses, `{ }`, `!`, labels, text commands,
// `s` and `y` with any delimiter), enough to find those commands wherever they stand.

import type { Expansion, Word } from './expansion.js';

/** The scripts of a sed command line and what else matters about it. */
export interface SedScripts {
  scripts: Word[];
  /** `--sandbox`: e, r and w are refused */
  sandbox: boolean;
  /** `-i` / `--in-place` */
  inPlace: boolean;
  /** the file operands */
  files: string[];
}

/** sed's options (`-e SCRIPT`, `-f FILE`, `-l N` take a value; `-i[SUF]` an attached one). */
export function sedScripts(words: readonly Word[]): SedScripts {
  const out: SedScripts = { scripts: [], sandbox: false, inPlace: false, files: [] };
  const operands: Word[] = [];
  let fromFile = false;
  let options = true;
  for (let i = 1; i < words.length; i++) {
    const word = words[i] as Word;
    const w = word.text;
    if (!options || !w.startsWith('-') || w === '-') {
      operands.push(word);
      continue;
    }
    if (w === '--') {
      options = false;
      continue;
    }
    if (w.startsWith('--')) {
      const eq = w.indexOf('=');
      const name = w.slice(2, eq < 0 ? undefined : eq);
      const value = (): Word | undefined => (eq >= 0 ? { text: w.slice(eq + 1), dynamic: word.dynamic } : words[++i]);
      if (name.length >= 2 && 'expression'.startsWith(name)) {
        const v = value();
        if (v !== undefined) out.scripts.push(v);
      } else if (name.length >= 2 && 'file'.startsWith(name)) {
        value();
        fromFile = true;
      } else if (name.length >= 2 && 'line-length'.startsWith(name)) value();
      else if (name.length >= 2 && 'sandbox'.startsWith(name)) out.sandbox = true;
      else if (name.length >= 2 && 'in-place'.startsWith(name)) out.inPlace = true;
      continue;
    }
    for (let k = 1; k < w.length; k++) {
      const c = w[k] as string;
      if (c === 'i') {
        out.inPlace = true;
        break;
      }
      if (c === 'e' || c === 'f' || c === 'l') {
        const v: Word | undefined = k < w.length - 1 ? { text: w.slice(k + 1), dynamic: word.dynamic } : words[++i];
        if (c === 'e' && v !== undefined) out.scripts.push(v);
        if (c === 'f') fromFile = true;
        break;
      }
    }
  }
  if (out.scripts.length === 0 && !fromFile && operands[0] !== undefined) out.scripts.push(operands.shift() as Word);
  out.files = operands.map((w) => w.text);
  return out;
}

/** What one sed script runs and writes. */
interface SedEffects {
  /** commands run: text, and whether it is built at run time (the pattern space, a substitution's result) */
  runs: { text: string; dynamic: boolean }[];
  writes: string[];
}

function unescape(s: string): string {
  return s.replace(/\\(.)/gs, (_, c: string) => (c === 'n' ? '\n' : c));
}

/** Reads a sed script; unknown or broken syntax ends the reading (what was found so far stands). */
function effects(src: string): SedEffects {
  const out: SedEffects = { runs: [], writes: [] };
  let p = 0;
  const toLineEnd = (): string => {
    const nl = src.indexOf('\n', p);
    const end = nl < 0 ? src.length : nl;
    const s = src.slice(p, end);
    p = end;
    return s;
  };
  /** the part up to the next unescaped `d` (p is after the opening delimiter) */
  const delimited = (d: string): string | null => {
    let s = '';
    while (p < src.length && src[p] !== d) {
      if (src[p] === '\\' && p + 1 < src.length) {
        s += src.slice(p, p + 2);
        p += 2;
      } else s += src[p++];
    }
    if (p >= src.length) return null;
    p++;
    return s;
  };
  const address = (): boolean => {
    const c = src[p];
    if (c === undefined) return false;
    if (/\d/.test(c)) {
      while (p < src.length && /[\d~]/.test(src[p] as string)) p++;
      return true;
    }
    if (c === '$') {
      p++;
      return true;
    }
    if (c === '/' || c === '\\') {
      const d = c === '/' ? '/' : (src[++p] as string);
      p++;
      if (delimited(d) === null) return false;
      while (p < src.length && /[IM]/.test(src[p] as string)) p++;
      return true;
    }
    return false;
  };
  while (p < src.length) {
    const c = src[p] as string;
    if (/[\s;{}]/.test(c)) {
      p++;
      continue;
    }
    if (c === '#') {
      toLineEnd();
      continue;
    }
    if (address() && src[p] === ',') {
      p++;
      if (src[p] === '+' || src[p] === '~') p++;
      address();
    }
    while (src[p] === ' ' || src[p] === '\t' || src[p] === '!') p++;
    const cmd = src[p++];
    if (cmd === undefined) break;
    if (cmd === 'e') {
      const text = toLineEnd().trim();
      out.runs.push(text === '' ? { text: 'the pattern space', dynamic: true } : { text, dynamic: false });
    } else if (cmd === 'w' || cmd === 'W') {
      out.writes.push(toLineEnd().trim());
    } else if ('aicrR:btTvlLqQ'.includes(cmd)) {
      // text, file name or label to the end of the line (labels and b/t also end at `;`)
      if (':btT'.includes(cmd)) {
        while (p < src.length && !/[;\n]/.test(src[p] as string)) p++;
      } else toLineEnd();
    } else if (cmd === 's' || cmd === 'y') {
      const d = src[p++];
      if (d === undefined) break;
      const regex = delimited(d);
      const repl = regex === null ? null : delimited(d);
      if (repl === null || regex === null) break;
      if (cmd === 'y') continue;
      let flags = '';
      while (p < src.length && /[gpiImMe0-9]/.test(src[p] as string)) flags += src[p++];
      if (src[p] === 'w') {
        p++;
        out.writes.push(toLineEnd().trim());
      }
      if (flags.includes('e')) {
        const whole = /^\^?\.\*\$?$/.test(regex) && !/&|\\\d/.test(repl);
        out.runs.push({ text: unescape(repl), dynamic: !whole });
      }
    }
  }
  return out;
}

/** The commands a sed command line runs, as shell code (none under `--sandbox`). */
export function sedCode(s: SedScripts): Expansion[] {
  if (s.sandbox) return [];
  return s.scripts.flatMap((w) =>
    effects(w.text).runs.map((r) => ({
      kind: 'script' as const,
      via: 'sed e',
      text: r.text,
      dynamic: r.dynamic || w.dynamic,
    })),
  );
}

/** The files a sed command line writes with `w` / `W` / `s///w` (not its `-i` edits). */
export function sedWrites(s: SedScripts): string[] {
  return s.sandbox
    ? []
    : s.scripts.flatMap((w) => effects(w.text).writes).filter((f) => f !== '' && !f.startsWith('/dev/std'));
}
