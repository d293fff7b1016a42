// Code runners and REPLs with a shell escape: the command their inline code hands to a shell,
// extracted as a string and judged as a command line (as awk-code.ts does for `system("…")`):
// `dc -e '!CMD'`, m4 `syscmd(CMD)` / `esyscmd(CMD)`, `sqlite3 DB '.shell CMD'` / `.system`,
// `psql -c '\! CMD'`, `mysql -e 'system CMD'`, `expect -c 'spawn CMD'`, `lldb -o 'platform shell
// CMD'`, `emacs --eval '(shell-command "CMD")'`, gnuplot / octave / R `system("CMD")`, julia
// `run(`CMD`)`, `osascript -e 'do shell script "CMD"'`, PowerShell `Remove-Item -Recurse PATH` (as
// the `rm -rf PATH` it is), `rg --pre CMD`. Every word of the command line is searched: an escape
// in a file name is harmless to judge, one missed in an option value is not.

import { code } from './command-strings.js';
import type { Expansion, Word } from './expansion.js';

type Extract = (text: string) => string[];

/** The capture group `group` of each match of `re` in `text`, escapes `\"` `\\` undone. */
function all(re: RegExp, group = 1): Extract {
  return (text) => [...text.matchAll(re)].map((m) => (m[group] as string).replace(/\\(["'\\`])/g, '$1'));
}

const DQ = '"((?:\\\\.|[^"\\\\])*)"';
const SQ = "'((?:\\\\.|[^'\\\\])*)'";

/** `system("CMD")`-style calls of the given names, with a double- or single-quoted literal. */
function calls(names: string): Extract {
  const dq = all(new RegExp(`\\b(?:${names})\\s*\\(\\s*${DQ}`, 'g'));
  const sq = all(new RegExp(`\\b(?:${names})\\s*\\(\\s*${SQ}`, 'g'));
  return (text) => [...dq(text), ...sq(text)];
}

const join =
  (...fs: Extract[]): Extract =>
  (text) =>
    fs.flatMap((f) => f(text));

/** dc: `!` runs the rest of the line (`!<`, `!>`, `!=` are comparisons). */
const dc = all(/!(?![<>=])([^\n]*)/g);
/** m4: syscmd(CMD) / esyscmd(CMD), one level of nested parentheses. */
const m4 = all(/\be?syscmd\(((?:[^()]|\([^()]*\))*)\)/g);
/** sqlite3 dot-commands. */
const sqlite = all(/^\s*\.(?:shell|system)\s+([^\n]*)/gm);
/** psql meta-command `\! CMD`. */
const psql = all(/\\!\s*([^\n]*)/g);
/** mysql client `system CMD` / `\! CMD`, each to the end of the line or statement. */
const mysql = all(/(?:^|;)\s*(?:system|\\!)\s+([^;\n]*)/gim);
/** expect (Tcl): `spawn [-opts] CMD`, `exec CMD`, `system CMD`, each to the end of the Tcl command. */
const expect = all(/(?:^|[;\n[{])\s*(?:spawn(?:\s+-\w+)*|exec|system)\s+([^;\n\]}]*)/g);
/** lldb: `platform shell [--] CMD`. */
const lldb = all(/^\s*platform\s+shell\s+(?:-[a-z]\s+\S+\s+)*(?:--\s+)?([^\n]*)/gm);
/** Emacs Lisp: shell-command, async-shell-command, shell-command-to-string, call-process-shell-command, start-process-shell-command. */
const emacs = join(
  all(
    new RegExp(
      `\\((?:async-shell-command|shell-command(?:-to-string)?|call-process-shell-command|process-lines-ignore-status)\\s+${DQ}`,
      'g',
    ),
  ),
  all(new RegExp(`\\(start-process-shell-command\\s+"[^"]*"\\s+\\S+\\s+${DQ}`, 'g')),
);
/** gnuplot: system("CMD"), a line `!CMD`, backticks, `< CMD` as a data file. */
const gnuplot = join(calls('system'), all(/(?:^|;)\s*!([^\n;]*)/gm), all(/`([^`]*)`/g), all(/["']<\s*([^"']*)["']/g));
const octave = calls('system|shell_cmd|unix|dos|popen');
/** julia: a `cmd` literal is run by run() / read() / success() / pipeline(). */
const julia = all(/`((?:\\.|[^`\\])*)`/g);
const r = calls('system|shell|pipe');
const osascript = all(new RegExp(`do\\s+shell\\s+script\\s+${DQ}`, 'gi'));

const PS_REMOVE = /(?:^|[;|{(]|\s)(?:Remove-Item|ri|rm|del|erase|rd|rmdir)\s+([^;|\n}]*)/gi;
const PS_HOME = /^(?:\$HOME|\$env:HOME|\$env:USERPROFILE|\$\{env:HOME\}|~)(?=$|[\\/])/i;

/** PowerShell `Remove-Item -Recurse PATH…`: the `rm -rf PATH` it amounts to (`$HOME` read as `~`). */
function powershell(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(PS_REMOVE)) {
    const args = (m[1] as string).match(/"[^"]*"|'[^']*'|\S+/g) ?? [];
    if (!args.some((a) => /^-r(?:e(?:c(?:u(?:r(?:s(?:e)?)?)?)?)?)?$/i.test(a))) continue;
    const paths: string[] = [];
    for (let k = 0; k < args.length; k++) {
      const a = args[k] as string;
      if (/^-(?:Path|LiteralPath|PSPath|LP)$/i.test(a)) {
        paths.push(args[++k] ?? '');
        continue;
      }
      if (a.startsWith('-')) continue;
      paths.push(a);
    }
    for (const p of paths) {
      const bare = p.replace(/^["']|["']$/g, '').replace(PS_HOME, '~');
      out.push(`rm -rf '${bare.replaceAll("'", "'\\''")}'`);
    }
  }
  return out;
}

/** ed / ex: a command line `!CMD` runs CMD through the shell. */
const ed: Extract = all(/(?:^|\n)[ \t]*!([^\n]*)/g);

/** The extractor of each program, and whether every word is searched or only the values of these options. */
const RUNNERS: Readonly<Record<string, Extract>> = {
  dc,
  ed,
  ex: ed,
  m4,
  sqlite3: sqlite,
  sqlite: sqlite,
  psql,
  mysql,
  mariadb: mysql,
  expect,
  lldb,
  emacs,
  gnuplot,
  octave,
  'octave-cli': octave,
  julia,
  R: r,
  Rscript: r,
  osascript,
  pwsh: powershell,
  powershell,
};

/** `rg --pre CMD` / `--pre=CMD`: rg runs CMD on each file searched. */
function rgPre(words: readonly Word[]): Expansion[] {
  const out: Expansion[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as Word;
    if (w.text === '--') break;
    if (w.text === '--pre' && words[i + 1] !== undefined) {
      const v = words[++i] as Word;
      out.push(code('rg --pre', v.text, v.dynamic));
    } else if (w.text.startsWith('--pre=')) out.push(code('rg --pre', w.text.slice(6), w.dynamic));
  }
  return out;
}

/** The shell commands the inline code of a REPL or code runner hands to a shell; empty for other programs. */
export function replEscapes(program: string, words: readonly Word[]): Expansion[] {
  if (program === 'rg') return rgPre(words);
  const extract = Object.hasOwn(RUNNERS, program) ? RUNNERS[program] : undefined;
  if (extract === undefined) return [];
  const out: Expansion[] = [];
  for (const w of words.slice(1)) {
    for (const cmd of extract(w.text)) if (cmd.trim() !== '') out.push(code(`${program} shell escape`, cmd, w.dynamic));
  }
  return out;
}

/** At most this many escapes are judged from one input (each is parsed as a command line). */
const MAX_INPUT_ESCAPES = 64;

/**
 * The shell commands a REPL or code runner hands to a shell when `text` is its input (`echo
 * '!rm -rf ~' | dc`, `m4 <<EOF … esyscmd(…) … EOF`); empty for other programs.
 */
export function replEscapesOfInput(program: string, text: string): string[] {
  if (!hasReplEscapes(program)) return [];
  const out: string[] = [];
  for (const e of replEscapes(program, [
    { text: program, dynamic: false },
    { text, dynamic: false },
  ]))
    if (e.kind === 'script' && out.push(e.text) >= MAX_INPUT_ESCAPES) break;
  return out;
}

/** Whether `program` is a REPL or code runner whose input may hold shell escapes. */
export function hasReplEscapes(program: string): boolean {
  return program !== 'rg' && Object.hasOwn(RUNNERS, program);
}
