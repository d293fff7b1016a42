// Builtin arguments bash evaluates again: an array subscript in a variable name
// (`printf -v 'a[$(cmd)]' x`, `test -v 'a[$(cmd)]'`, `read 'a[…]'`, `unset 'a[…]'`,
// `declare 'a[…]=v'`) and an arithmetic expression (`let '…'`, `declare -i x='…'`) undergo
// expansion when the builtin runs, so a `$(…)` or backquote in them runs even inside single
// quotes. Each such word is handed on as shell code (judged like the command line it runs), and a
// variable these builtins set that changes what later programs do (`printf -v HOME …`, `read
// LD_PRELOAD`) as the assignment it amounts to.

import type { Assignment } from '../command-model.js';
import { steersPrograms } from '../flow/exported-variables.js';
import { readNameWords } from '../knowledge/programs/read-builtins.js';
import { isWordNode } from '../parse/script-text.js';
import type { SyntaxNode } from '../parse/syntax-tree.js';
import type { Expansion, Word } from '../wrappers/expansion.js';

/** A word holding an expansion bash performs when it evaluates the word (`$…`, a backquote). */
const EXPANDS = /[$`]/;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const DECLARERS: ReadonlySet<string> = new Set(['declare', 'typeset', 'local', 'readonly', 'export']);

/**
 * The code bash runs when it evaluates `text` as a subscript or arithmetic expression, as a
 * script whose one command expands it: `: "a[$(cmd)]"` (unquoted when the text has a double
 * quote of its own). Null when the text expands nothing.
 */
export function evaluatedCode(via: string, text: string): Expansion | null {
  if (!EXPANDS.test(text)) return null;
  const quoted = text.includes('"') || text.endsWith('\\') ? text : `"${text}"`;
  return { kind: 'script', via, text: `: ${quoted}`, dynamic: false };
}

/** A variable name word (`a[sub]` evaluates sub). */
function nameCode(via: string, w: Word | undefined): Expansion | null {
  return w !== undefined && w.text.includes('[') ? evaluatedCode(via, w.text) : null;
}

/**
 * The assignment a builtin makes of `name`, when that variable changes what later programs do. A
 * value read at run time is written `$NAME`: what the variable carries stays what the builtin gave it.
 */
function setting(via: string, name: string, value: string, dynamic: boolean): Expansion | null {
  if (!NAME.test(name) || !steersPrograms(name)) return null;
  const a: Assignment = { name, value, dynamic };
  return { kind: 'argv', via, words: [], assignments: [a] };
}

/** printf's output as far as it is known statically: a format without conversions, or `%s` of one word. */
function printfValue(args: readonly Word[]): { value: string; dynamic: boolean } {
  const [format, ...rest] = args;
  if (format === undefined) return { value: '', dynamic: false };
  const dynamic = args.some((w) => w.dynamic);
  if (!format.dynamic && !/[%\\]/.test(format.text) && rest.length === 0) return { value: format.text, dynamic };
  if (!format.dynamic && format.text === '%s' && rest.length === 1)
    return { value: (rest[0] as Word).text, dynamic: (rest[0] as Word).dynamic };
  return { value: args.map((w) => w.text).join(' '), dynamic: true };
}

function printf(words: Word[]): Expansion[] {
  const out: (Expansion | null)[] = [];
  for (let i = 1; i < words.length; i++) {
    const t = (words[i] as Word).text;
    if (t === '--' || !t.startsWith('-v')) break;
    const at = t === '-v' ? i + 1 : i;
    const name = at === i ? { ...(words[i] as Word), text: t.slice(2) } : words[at];
    if (name === undefined) break;
    out.push(nameCode('printf -v', name));
    const value = printfValue(words.slice(at + 1));
    // a value known only at run time is the variable's own (secret-flow.ts keeps what it carries)
    const dynamic = value.dynamic || name.dynamic;
    out.push(setting('printf -v', name.text, dynamic ? `$${name.text}` : value.value, dynamic));
    break;
  }
  return out.filter((e): e is Expansion => e !== null);
}

/** `test -v NAME` / `[ -v NAME ]` (also `-R`): the name's subscript is evaluated. */
function test(words: Word[]): Expansion[] {
  const out: (Expansion | null)[] = [];
  for (let i = 1; i + 1 < words.length; i++) {
    const t = (words[i] as Word).text;
    if (t === '-v' || t === '-R') out.push(nameCode(`test ${t}`, words[i + 1]));
  }
  return out.filter((e): e is Expansion => e !== null);
}

/** declare / typeset / local / readonly / export given as words (`command declare …`, `eval 'declare …'`). */
function declare(program: string, words: Word[]): Expansion[] {
  const out: (Expansion | null)[] = [];
  let integer = false;
  let options = true;
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as Word;
    if (options && w.text === '--') {
      options = false;
      continue;
    }
    if (options && /^[-+][a-zA-Z]+$/.test(w.text)) {
      if (w.text.startsWith('-') && w.text.includes('i')) integer = true;
      continue;
    }
    const eq = w.text.indexOf('=');
    const name = eq < 0 ? w.text : w.text.slice(0, eq);
    out.push(integer ? evaluatedCode(program, w.text) : nameCode(program, w));
    if (eq >= 0) out.push(setting(program, name, w.text.slice(eq + 1), w.dynamic));
  }
  return out.filter((e): e is Expansion => e !== null);
}

/** read / mapfile / readarray NAME…: subscripts evaluated, the variables set from the input; mapfile's -C callback is shell code. */
function reader(program: string, words: Word[]): Expansion[] {
  const { names, callback } = readNameWords(
    program,
    words.map((w) => w.text),
  );
  const out: (Expansion | null)[] = [];
  for (const i of names) {
    const w = words[i] as Word;
    out.push(nameCode(program, w));
    out.push(setting(program, w.text, `$${w.text}`, true));
  }
  for (const i of callback) {
    const w = words[i] as Word;
    const text = w.text.startsWith('-') ? w.text.slice(w.text.indexOf('C') + 1) : w.text;
    out.push({ kind: 'script', via: `${program} -C`, text, dynamic: w.dynamic });
  }
  return out.filter((e): e is Expansion => e !== null);
}

/**
 * What a builtin evaluates in its words (subscripts, arithmetic, a callback) as shell code, and the
 * variables it sets that steer later programs, as assignments. Empty for other commands.
 */
export function evaluatedWords(program: string, words: Word[]): Expansion[] {
  switch (program) {
    case 'printf':
      return printf(words);
    case 'test':
    case '[':
      return test(words);
    case 'let':
      return words
        .slice(1)
        .map((w) => evaluatedCode('let', w.text))
        .filter((e): e is Expansion => e !== null);
    case 'read':
    case 'mapfile':
    case 'readarray':
      return reader(program, words);
    case 'unset':
      return words
        .slice(1)
        .map((w) => nameCode('unset', w))
        .filter((e): e is Expansion => e !== null);
    case 'getopts': {
      const name = words[2];
      if (name === undefined) return [];
      return [nameCode('getopts', name), setting('getopts', name.text, `$${name.text}`, true)].filter(
        (e): e is Expansion => e !== null,
      );
    }
    case 'wait': {
      const k = words.findIndex((w) => w.text === '-p');
      const name = k < 0 ? undefined : words[k + 1];
      return name === undefined ? [] : [nameCode('wait -p', name)].filter((e): e is Expansion => e !== null);
    }
    default:
      return DECLARERS.has(program) ? declare(program, words) : [];
  }
}

/**
 * The operands `[[ … ]]` evaluates as arithmetic (both sides of -eq, -ne, -lt, -le, -gt, -ge) or
 * as a subscript (`-v NAME`), as shell code: for the model builder's walk of a test command.
 */
export function conditionalCode(words: readonly Word[]): Expansion[] {
  const out: (Expansion | null)[] = [];
  for (let i = 0; i < words.length; i++) {
    const t = (words[i] as Word).text;
    if (/^-(?:eq|ne|lt|le|gt|ge)$/.test(t)) {
      const l = words[i - 1];
      const r = words[i + 1];
      if (l !== undefined) out.push(evaluatedCode('[[ ]]', l.text));
      if (r !== undefined) out.push(evaluatedCode('[[ ]]', r.text));
    } else if (t === '-v' || t === '-R') out.push(nameCode('[[ ]]', words[i + 1]));
  }
  return out.filter((e): e is Expansion => e !== null);
}

/**
 * The operators and operands of a test command in order, quotes taken off (`raw_string` and
 * `string` lose their outer quotes; other words stay as written): what `conditionalCode` reads.
 */
export function testWords(node: SyntaxNode, src: string): Word[] {
  const out: Word[] = [];
  const visit = (n: SyntaxNode): void => {
    const text = src.slice(n.start, n.end);
    if (n.type === 'test_operator') out.push({ text, dynamic: false });
    else if (n.type === 'raw_string' || n.type === 'string') out.push({ text: text.slice(1, -1), dynamic: false });
    else if (n.named && isWordNode(n)) out.push({ text, dynamic: false });
    else for (const c of n.children) visit(c);
  };
  for (const c of node.children) visit(c);
  return out;
}
