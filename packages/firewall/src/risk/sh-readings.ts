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

/** Characters that can start a differing construct: a cheap pre-check. */
const MAY_DIFFER = /\$'|&>|<<-?[ \t]*[^\s;&|<>()]*['"\\]/;

/** A here-document operator and its delimiter word, quoted in part or whole. */
const HEREDOC = /<<(-?)([ \t]*)((?:[^\s;&|<>()'"\\]|'[^']*'|"(?:[^"\\]|\\.)*"|\\.)+)/g;

/** The other readings of `text` (none when it reads the same everywhere). */
export function shReadings(text: string): string[] {
  if (!MAY_DIFFER.test(text)) return [];
  const out: string[] = [];
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
