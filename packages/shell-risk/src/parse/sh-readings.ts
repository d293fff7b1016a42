// Where the command text can mean something else to the shell that runs it than to the bash
// grammar that parses it here, the other reading, spelled so that the bash grammar parses it the
// way that shell does. The assessor judges every reading and keeps the most severe: an agent
// cannot hide a command in a construct the parser reads one way and /bin/sh another.
//
// - `$'…'` (ANSI-C quoting) is a bash string; dash — /bin/sh on Debian and Ubuntu, which the shell
//   module runs — has no such quoting: `$` is literal and `'` opens an ordinary quote, so the quote
//   boundaries move (`echo $'\' ; rm -rf ~ #'` runs `rm -rf ~` under dash).
// - `&>` / `&>>` redirect both streams in bash; dash reads `&` (run in the background) and then a
//   redirection, so the words after its target start a new command (`ls &> /dev/null rm -rf ~`);
//   with no word after the target both run the same command, so that reading is left out.
// - A here-document delimiter quoted in part (`<<E"O"F`) ends at the line of the unquoted word
//   (`EOF`) in every shell; the bash grammar here ends it at the quoted spelling instead, so the
//   lines between read as document text. Spelled fully quoted, the grammar ends it where the
//   shell does.
// - A single quote inside `${…}` within double quotes: dash reads it as an ordinary character
//   (`echo "${x:-'}"; rm -rf ~; #'}"` runs `rm -rf ~` under dash), bash as a quote in some
//   operators (`${x/'/'}`) and not in others, the grammar its own way. Both are spelled out: the
//   quote as a plain character, and the quoted span as one.
// - A here-document delimiter glued to an operator (`<<EOF;`, `<<EOF|sh`, `<<EOF)`) ends before the
//   operator in every shell; the bash grammar takes the operator into the word. Spelled with a
//   space before the operator.

/** Characters that can start a differing construct: a cheap pre-check. */
const MAY_DIFFER = /\$'|&>|<<-?[ \t]*[^\s;&|<>()]*['"\\]/;

/** A here-document operator and its delimiter word, quoted in part or whole. */
const HEREDOC = /<<(-?)([ \t]*)((?:[^\s;&|<>()'"\\]|'[^']*'|"(?:[^"\\]|\\.)*"|\\.)+)/g;

/** A here-document delimiter word directly followed by an operator. */
const GLUED = /(<<-?[ \t]*(?:[^\s;&|<>()'"\\]|'[^']*'|"(?:[^"\\]|\\.)*"|\\.)+)(?=[;&|)])/g;

/** The other readings of `text` (none when it reads the same everywhere). */
export function shReadings(text: string): string[] {
  const out: string[] = [];
  if (text.includes('${') && text.includes("'") && text.includes('"')) {
    for (const quoting of [false, true]) {
      const reading = braceQuoteReading(text, quoting);
      if (reading !== null && !out.includes(reading)) out.push(reading);
    }
  }
  if (text.includes('<<')) {
    const spaced = text.replace(GLUED, '$1 ');
    if (spaced !== text) out.push(spaced);
  }
  if (!MAY_DIFFER.test(text)) return out;
  let sh = text;
  if (sh.includes("$'")) sh = sh.replaceAll("$'", "\\$'");
  // only where words follow the target: `cmd &> file` alone runs the same command either way
  if (sh.includes('&>')) sh = sh.replace(/&>(>?)([ \t]*[^\s;&|<>()]+[ \t]+[^\s;&|<>()#])/g, '& >$1$2');
  if (sh !== text) out.push(sh);
  const doc = unquotedDelimiters(text);
  if (doc !== text) out.push(doc);
  return out;
}

/** `text` with each here-document delimiter quoted in part spelled `'<word without its quotes>'`. */
function unquotedDelimiters(text: string): string {
  return text.replace(HEREDOC, (whole, dash: string, space: string, word: string) => {
    if (!/['"\\]/.test(word)) return whole;
    const bare = word.replace(/'([^']*)'|"((?:[^"\\]|\\.)*)"|\\(.)/g, (_m, s?: string, d?: string, e?: string) =>
      s !== undefined ? s : d !== undefined ? d.replace(/\\(.)/g, '$1') : (e ?? ''),
    );
    if (bare.includes("'") || bare === '') return whole;
    return `<<${dash}${space}'${bare}'`;
  });
}

/** Where the lexer of {@link braceQuoteReading} stands: code, `"…"`, `${…}` outside or inside `"…"`, backticks. */
type Scope = 'code' | 'dq' | 'brace' | 'dq-brace' | 'backtick';

/** Whether a `#` at `i` starts a comment (it begins a word). */
function startsWord(text: string, i: number): boolean {
  return i === 0 || /[\s;&|()]/.test(text[i - 1] as string);
}

/**
 * `text` with each single quote inside a `${…}` within double quotes read one way: as an
 * ordinary character (spelled `_`) or, with `quoting`, opening a quote (the quoted span spelled
 * `_`). Null when there is no such quote. One linear pass.
 */
function braceQuoteReading(text: string, quoting: boolean): string | null {
  const stack: Scope[] = ['code'];
  let out = '';
  let copied = 0;
  let found = false;
  let i = 0;
  while (i < text.length) {
    const scope = stack[stack.length - 1] as Scope;
    const c = text[i] as string;
    const next = text[i + 1];
    if (c === '\\') {
      i += 2;
      continue;
    }
    if (scope === 'backtick') {
      if (c === '`') stack.pop();
      i++;
      continue;
    }
    if (scope === 'code' || scope === 'brace') {
      if (c === "'" || (c === '$' && next === "'")) {
        // a quoted span ($'…' honours backslashes)
        let j = c === '$' ? i + 2 : i + 1;
        while (j < text.length && text[j] !== "'") j += c === '$' && text[j] === '\\' ? 2 : 1;
        i = j + 1;
        continue;
      }
      if (c === '#' && scope === 'code' && startsWord(text, i)) {
        const nl = text.indexOf('\n', i);
        i = nl < 0 ? text.length : nl;
        continue;
      }
      if (c === '"') {
        stack.push('dq');
        i++;
        continue;
      }
      if ((c === '}' && scope === 'brace') || (c === ')' && scope === 'code' && stack.length > 1)) {
        stack.pop();
        i++;
        continue;
      }
      if (c === '(' && scope === 'code' && stack.length > 1) {
        stack.push('code');
        i++;
        continue;
      }
    } else if (scope === 'dq') {
      if (c === '"') {
        stack.pop();
        i++;
        continue;
      }
    } else {
      if (c === '}') {
        stack.pop();
        i++;
        continue;
      }
      if (c === '"') {
        stack.push('dq');
        i++;
        continue;
      }
      if (c === "'") {
        found = true;
        out += `${text.slice(copied, i)}_`;
        if (quoting) {
          const close = text.indexOf("'", i + 1);
          if (close < 0) return null;
          i = close + 1;
        } else {
          i++;
        }
        copied = i;
        continue;
      }
    }
    if (c === '`') {
      stack.push('backtick');
      i++;
    } else if (c === '$' && next === '(') {
      stack.push('code');
      i += 2;
    } else if (c === '$' && next === '{') {
      stack.push(scope === 'dq' || scope === 'dq-brace' ? 'dq-brace' : 'brace');
      i += 2;
    } else {
      i++;
    }
  }
  return found ? out + text.slice(copied) : null;
}
