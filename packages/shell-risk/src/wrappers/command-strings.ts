// Option values and builtin arguments a program runs as a command: `trap 'CMD' EXIT`,
// `alias x='CMD'`, `tar --to-command=CMD` / `--checkpoint-action=exec=CMD` / `-I CMD`,
// `zip -TT CMD`, `make --eval='$(shell CMD)'`, `man -P CMD`, `vim -c '!CMD'`, `sed '1e CMD'` /
// `s/x/CMD/e`, `awk 'BEGIN{system("CMD")}'`, `gdb -ex 'shell CMD'`, `rsync -e CMD`,
// `ssh -o ProxyCommand=CMD`, `git clone -u CMD` / `rebase -x CMD` / `archive --exec=CMD` /
// `ext::CMD` URLs, `less '+!CMD'`, `compgen -C CMD`, and the shell commands inline script code
// hands to system() / os.system() / execSync(). Each is handed on as shell code, judged like a
// command line; one built at run time (`system($0)`) as a string built at run time.

import { isInterpreter } from '../knowledge/programs/programs.js';
import { parseGit } from '../options/git-options.js';
import { awkCode, awkPrograms } from './awk-code.js';
import type { Expansion, Word } from './expansion.js';
import { sedCode, sedScripts } from './sed-code.js';

/** A command string run by `via`. */
export function code(via: string, text: string, dynamic: boolean): Expansion {
  return { kind: 'script', via, text, dynamic };
}

/** The value of a long option `--name=v` / `--name v` whose name abbreviates `full` (at least `min` letters), or null. */
function longValue(words: readonly Word[], i: number, full: string, min = 2): { value: Word; next: number } | null {
  const w = (words[i] as Word).text;
  if (!w.startsWith('--')) return null;
  const eq = w.indexOf('=');
  const name = w.slice(2, eq < 0 ? undefined : eq);
  if (name.length < min || !full.startsWith(name)) return null;
  if (eq >= 0) return { value: { text: w.slice(eq + 1), dynamic: (words[i] as Word).dynamic }, next: i + 1 };
  const v = words[i + 1];
  return v === undefined ? null : { value: v, next: i + 2 };
}

/** `trap [--] ACTION SIGNAL…`: ACTION runs when a signal (or EXIT) comes. */
function trap(words: readonly Word[]): Expansion[] {
  const ops = words.slice(1).filter((w, k) => !(k === 0 && (w.text === '--' || /^-[lp]+$/.test(w.text))));
  const action = ops[0];
  if (ops.length < 2 || action === undefined || action.text === '' || action.text === '-' || /^\d+$/.test(action.text))
    return [];
  return [code('trap', action.text, action.dynamic)];
}

/**
 * `sort --compress-program=PROG` (any unambiguous prefix, `--co` on): sort runs PROG with its
 * temporary data on stdin — `sh` there runs the sorted lines. Judged as data piped into PROG.
 */
function sort(words: readonly Word[]): Expansion[] {
  const out: Expansion[] = [];
  for (let i = 1; i < words.length; i++) {
    if ((words[i] as Word).text === '--') break;
    const v = longValue(words, i, 'compress-program', 2);
    if (v === null) continue;
    out.push(code('sort --compress-program', `cat | ${v.value.text}`, v.value.dynamic));
    i = v.next - 1;
  }
  return out;
}

/** `alias NAME=VALUE…`: VALUE runs wherever NAME is later used as a command (dash expands aliases in -c scripts). */
function alias(words: readonly Word[]): Expansion[] {
  return words.slice(1).flatMap((w) => {
    const eq = w.text.indexOf('=');
    return eq > 0 && !w.text.startsWith('-') ? [code('alias', w.text.slice(eq + 1), w.dynamic)] : [];
  });
}

const TAR_CODE = ['to-command', 'use-compress-program', 'info-script', 'new-volume-script', 'rsh-command'];
/** GNU tar short options that take a value (in a cluster, or old-style letters taking the next words in turn). */
const TAR_SHORT_ARG = 'bCfFgHIKLNTVX';

/** tar: the commands of --to-command, --use-compress-program / -I, --info-script / -F, --checkpoint-action=exec=, --rsh-command. */
function tar(words: readonly Word[]): Expansion[] {
  const out: Expansion[] = [];
  const shortValue = (letter: string, v: Word): void => {
    if (letter === 'I' || letter === 'F') out.push(code(`tar -${letter}`, v.text, v.dynamic));
  };
  let i = 1;
  const first = words[1];
  if (first !== undefined && !first.text.startsWith('-') && /^[A-Za-z]+$/.test(first.text)) {
    // old style: `tar cIf CMD out.tar dir` — each letter taking a value takes the next word
    let next = 2;
    for (const letter of first.text) {
      if (!TAR_SHORT_ARG.includes(letter)) continue;
      const v = words[next++];
      if (v !== undefined) shortValue(letter, v);
    }
    i = next;
  }
  for (; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w === '--') break;
    if (w.startsWith('--')) {
      const action = longValue(words, i, 'checkpoint-action', 12);
      if (action !== null) {
        const m = /^exec=(.*)$/s.exec(action.value.text);
        if (m !== null) out.push(code('tar --checkpoint-action', m[1] as string, action.value.dynamic));
        i = action.next - 1;
        continue;
      }
      for (const name of TAR_CODE) {
        const v = longValue(words, i, name, 3);
        if (v === null) continue;
        out.push(code(`tar --${name}`, v.value.text, v.value.dynamic));
        i = v.next - 1;
        break;
      }
      continue;
    }
    if (!w.startsWith('-')) continue;
    for (let k = 1; k < w.length; k++) {
      const letter = w[k] as string;
      if (!TAR_SHORT_ARG.includes(letter)) continue;
      const attached = w.slice(k + 1);
      const v: Word | undefined =
        attached !== '' ? { text: attached, dynamic: (words[i] as Word).dynamic } : words[++i];
      if (v !== undefined) shortValue(letter, v);
      break;
    }
  }
  return out;
}

/** zip -TT CMD / --unzip-command CMD: the command that tests the archive. */
function zip(words: readonly Word[]): Expansion[] {
  const out: Expansion[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w === '-TT' && words[i + 1] !== undefined)
      out.push(code('zip -TT', (words[i + 1] as Word).text, (words[i + 1] as Word).dynamic));
    else if (w.startsWith('-TT') && w.length > 3)
      out.push(code('zip -TT', w.slice(3).replace(/^=/, ''), (words[i] as Word).dynamic));
    const v = longValue(words, i, 'unzip-command', 3);
    if (v !== null) out.push(code('zip --unzip-command', v.value.text, v.value.dynamic));
  }
  return out;
}

/** The bodies of `$(shell …)` / `${shell …}` in makefile text; null when one is not closed. */
function makeShells(text: string): string[] | null {
  const out: string[] = [];
  const re = /\$([({])shell\s/g;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const open = m[1] as string;
    const close = open === '(' ? ')' : '}';
    let depth = 1;
    let j = m.index + m[0].length;
    for (; j < text.length && depth > 0; j++) {
      if (text[j] === open) depth++;
      else if (text[j] === close) depth--;
    }
    if (depth > 0) return null;
    out.push(text.slice(m.index + m[0].length, j - 1));
  }
  return out;
}

/** The recipe of a one-line rule `TARGETS: PREREQUISITES ; RECIPE` (not a `:=` assignment), or null. */
function ruleRecipe(line: string): string | null {
  const colon = line.search(/:(?!=)/);
  if (colon <= 0 || /[=#]/.test(line.slice(0, colon))) return null;
  const semi = line.indexOf(';', colon);
  return semi < 0 ? null : line.slice(semi + 1);
}

/** make --eval / -E TEXT: its `$(shell …)` and the recipes of its rules (`x: ; CMD`, tab-indented lines) run. */
function make(words: readonly Word[]): Expansion[] {
  const out: Expansion[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = (words[i] as Word).text;
    let v: Word | undefined;
    const long = longValue(words, i, 'eval', 2);
    if (long !== null) v = long.value;
    else if (w === '-E') v = words[i + 1];
    else if (w.startsWith('-E') && !w.startsWith('--')) v = { text: w.slice(2), dynamic: (words[i] as Word).dynamic };
    if (v === undefined) continue;
    const shells = makeShells(v.text);
    if (shells === null) {
      out.push(code('make --eval', v.text, true));
      continue;
    }
    for (const s of shells) out.push(code('make --eval $(shell)', s, v.dynamic));
    for (const line of v.text.split('\n')) {
      const recipe = line.startsWith('\t') ? line.slice(1) : ruleRecipe(line);
      if (recipe !== null && recipe.trim() !== '')
        out.push(code('make --eval recipe', recipe.replace(/^\s*[@+-]+/, ''), v.dynamic));
    }
  }
  return out;
}

/** man -P / --pager CMD, -H / --html=BROWSER: run through the shell. */
function man(words: readonly Word[]): Expansion[] {
  const out: Expansion[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = (words[i] as Word).text;
    const pager = longValue(words, i, 'pager', 2);
    if (pager !== null) out.push(code('man --pager', pager.value.text, pager.value.dynamic));
    else if (w === '-P' && words[i + 1] !== undefined)
      out.push(code('man -P', (words[i + 1] as Word).text, (words[i + 1] as Word).dynamic));
    else if (/^-P./.test(w)) out.push(code('man -P', w.slice(2), (words[i] as Word).dynamic));
    else if (/^--html=./.test(w)) out.push(code('man --html', w.slice(7), (words[i] as Word).dynamic));
    else if (/^-H./.test(w)) out.push(code('man -H', w.slice(2), (words[i] as Word).dynamic));
  }
  return out;
}

const VIM_OPAQUE =
  /\b(?:system|systemlist|jobstart|termopen|term(?:inal)?|py(?:thon)?3?|pyx|pythonx|lua|luado|luafile|perl|ruby|mzscheme|tcl|exe(?:cute)?|so(?:urce)?|call|norm(?:al)?|redir)\b|!/;

/** One Ex command of `vim -c` / `--cmd` / `+`: `!CMD`, `r !CMD`, `w !CMD` run CMD; system(), :terminal, :py… run what they build. */
function exCommand(via: string, w: Word): Expansion[] {
  const t = w.text
    .replace(/^[\s:]+/, '')
    .replace(/^(?:[%.$]|\d+|'[a-z<>]|,|;|[+-]\d*)*\s*/, '')
    .replace(/^sil(?:ent)?!?\s*/, '');
  const shellCmd = /^!(.*)$/s.exec(t) ?? /^(?:r|read)\s*!(.*)$/s.exec(t) ?? /^(?:w|write)\s+!(.*)$/s.exec(t);
  if (shellCmd !== null) return [code(via, shellCmd[1] as string, w.dynamic)];
  return VIM_OPAQUE.test(t) ? [code(via, t, true)] : [];
}

/** vim / nvim / vi / ex / view: the Ex commands of -c, --cmd and +. */
function vim(words: readonly Word[]): Expansion[] {
  const out: Expansion[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = words[i] as Word;
    if (w.text === '--') break;
    if ((w.text === '-c' || w.text === '--cmd') && words[i + 1] !== undefined) {
      out.push(...exCommand(`vim ${w.text}`, words[++i] as Word));
    } else if (w.text.startsWith('+') && w.text.length > 1 && !/^\+\d*$/.test(w.text) && !w.text.startsWith('+/')) {
      out.push(...exCommand('vim +', { text: w.text.slice(1), dynamic: w.dynamic }));
    }
  }
  return out;
}

/** less +CMD / ++CMD: an initial `!CMD` runs CMD. */
function less(words: readonly Word[]): Expansion[] {
  return words.slice(1).flatMap((w) => {
    const m = /^\+\+?!(.*)$/s.exec(w.text);
    return m === null ? [] : [code('less +!', m[1] as string, w.dynamic)];
  });
}

/** gdb -ex / --eval-command / -iex CMD: `shell CMD`, `!CMD` run CMD; `python …`, `pipe …` run what they build. */
function gdb(words: readonly Word[]): Expansion[] {
  const out: Expansion[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = (words[i] as Word).text;
    let v: Word | undefined;
    const m = /^--?(?:ex|eval-command|iex|init-eval-command)(?:=(.*))?$/s.exec(w);
    if (m === null) continue;
    if (m[1] !== undefined) v = { text: m[1], dynamic: (words[i] as Word).dynamic };
    else v = words[++i];
    if (v === undefined) continue;
    const t = v.text.trim();
    const sh = /^(?:shell\s+|!)(.*)$/s.exec(t);
    if (sh !== null) out.push(code('gdb shell', sh[1] as string, v.dynamic));
    else if (/^(?:python|py|pi|python-interactive|pipe|\||guile|gu)\b/.test(t)) out.push(code('gdb -ex', t, true));
  }
  return out;
}

/** rsync -e / --rsh CMD: the remote shell rsync starts. */
function rsync(words: readonly Word[]): Expansion[] {
  const out: Expansion[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = (words[i] as Word).text;
    const long = longValue(words, i, 'rsh', 3);
    if (long !== null) {
      out.push(code('rsync --rsh', long.value.text, long.value.dynamic));
      continue;
    }
    const m = /^-[a-zA-Z0-9]*?e(.*)$/s.exec(w);
    if (m === null || w.startsWith('--') || /[BfMT@]/.test(w.slice(1, w.length - (m[1] as string).length - 1)))
      continue;
    const v: Word | undefined =
      m[1] !== '' ? { text: m[1] as string, dynamic: (words[i] as Word).dynamic } : words[i + 1];
    if (v !== undefined) out.push(code('rsync -e', v.text, v.dynamic));
  }
  return out;
}

const SSH_COMMAND_OPTION = /^\s*(proxycommand|localcommand|knownhostscommand)\s*(?:=\s*|\s+)(.*)$/is;

/** ssh / scp / sftp -o ProxyCommand=… (LocalCommand, KnownHostsCommand); scp / sftp -S PROGRAM. */
function ssh(program: string, words: readonly Word[]): Expansion[] {
  const out: Expansion[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = (words[i] as Word).text;
    let opt: Word | undefined;
    if (w === '-o') opt = words[++i];
    else if (w.startsWith('-o')) opt = { text: w.slice(2), dynamic: (words[i] as Word).dynamic };
    else if (w === '-S' && program !== 'ssh' && words[i + 1] !== undefined) {
      const v = words[++i] as Word;
      out.push(code(`${program} -S`, v.text, v.dynamic));
    }
    if (opt === undefined) continue;
    const m = SSH_COMMAND_OPTION.exec(opt.text);
    if (m !== null && !/^none$/i.test((m[2] as string).trim()))
      out.push(code(`${program} -o ${m[1]}`, m[2] as string, opt.dynamic));
  }
  return out;
}

/** `ext::CMD ARGS` (`% ` a literal space): the command git's ext transport runs. */
function extUrl(w: Word): Expansion | null {
  if (!w.text.startsWith('ext::')) return null;
  const words = w.text
    .slice(5)
    .split(/(?<!%) +/)
    .map((t) => t.replace(/% /g, ' ').replace(/%%/g, '%'))
    .filter((t) => t !== '');
  if (words.length === 0) return null;
  return { kind: 'argv', via: 'git ext::', words: words.map((text) => ({ text, dynamic: w.dynamic })) };
}

/** git subcommand options whose value is a command run locally (for a local or ext:: remote), by subcommand. */
const GIT_CODE: Readonly<Record<string, readonly [string, string][]>> = {
  clone: [['u', 'upload-pack']],
  fetch: [['', 'upload-pack']],
  pull: [['', 'upload-pack']],
  'ls-remote': [['', 'upload-pack']],
  push: [
    ['', 'receive-pack'],
    ['', 'exec'],
  ],
  archive: [['', 'exec']],
  rebase: [['x', 'exec']],
  difftool: [['x', 'extcmd']],
  grep: [['O', 'open-files-in-pager']],
  'filter-branch': [
    ['', 'env-filter'],
    ['', 'tree-filter'],
    ['', 'index-filter'],
    ['', 'parent-filter'],
    ['', 'msg-filter'],
    ['', 'commit-filter'],
    ['', 'tag-name-filter'],
  ],
};

/** git: -u / --upload-pack, --receive-pack, --exec, rebase -x, difftool -x, grep -O, filter-branch filters, bisect run, submodule foreach, ext:: URLs. */
function git(words: readonly Word[]): Expansion[] {
  const parsed = { options: new Map<string, string[]>(), positionals: [] as string[], positionalIndex: [] as number[] };
  parseGit(
    words.map((w) => w.text),
    1,
    parsed,
  );
  const out: Expansion[] = [];
  for (const w of words.slice(1)) {
    const e = extUrl(w);
    if (e !== null) out.push(e);
  }
  const at = parsed.positionalIndex[0];
  if (at === undefined) return out;
  const sub = (words[at] as Word).text;
  if (sub === 'bisect' && words[at + 1]?.text === 'run' && words.length > at + 2)
    return [...out, { kind: 'argv', via: 'git bisect run', words: words.slice(at + 2) }];
  if (sub === 'submodule' && words.slice(at + 1).some((w) => w.text === 'foreach')) {
    const k = words.findIndex((w, j) => j > at && w.text === 'foreach');
    const rest = words.slice(k + 1).filter((w) => w.text !== '--recursive' && w.text !== '-q' && w.text !== '--quiet');
    const text = rest.map((w) => w.text).join(' ');
    if (text !== '')
      out.push(
        code(
          'git submodule foreach',
          text,
          rest.some((w) => w.dynamic),
        ),
      );
    return out;
  }
  const opts = GIT_CODE[sub];
  if (opts === undefined) return out;
  for (let i = at + 1; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (w === '--') break;
    for (const [short, long] of opts) {
      const lv = longValue(words, i, long, long.length);
      if (lv !== null) {
        out.push(code(`git ${sub} --${long}`, lv.value.text, lv.value.dynamic));
        i = lv.next - 1;
        break;
      }
      if (short !== '' && w === `-${short}` && words[i + 1] !== undefined) {
        const v = words[++i] as Word;
        out.push(code(`git ${sub} -${short}`, v.text, v.dynamic));
        break;
      }
      if (short !== '' && w.startsWith(`-${short}`) && !w.startsWith('--') && w.length > 2) {
        out.push(code(`git ${sub} -${short}`, w.slice(2), (words[i] as Word).dynamic));
        break;
      }
    }
  }
  return out;
}

/** compgen / complete -C CMD: the command that produces completions. */
function completion(program: string, words: readonly Word[]): Expansion[] {
  const k = words.findIndex((w) => w.text === '-C');
  const v = k < 0 ? undefined : words[k + 1];
  return v === undefined ? [] : [code(`${program} -C`, v.text, v.dynamic)];
}

/** Calls that run a string as a shell command, in the script languages' inline code. */
const SHELL_OUT: Readonly<Record<string, RegExp>> = {
  python:
    /\b(?:os\.system|os\.popen|subprocess\.getoutput|subprocess\.getstatusoutput|commands\.getoutput|pty\.spawn)\s*\(\s*[rbuf]?(["'])((?:\\.|(?!\1)[^\\])*)\1/g,
  perl: /\b(?:system|exec|qx)\s*\(?\s*(["'])((?:\\.|(?!\1)[^\\])*)\1/g,
  ruby: /\b(?:system|exec|spawn|IO\.popen|%x)\s*\(?\s*(["'])((?:\\.|(?!\1)[^\\])*)\1/g,
  node: /\b(?:execSync|exec|spawnSync|spawn)\s*\(\s*(["'`])((?:\\.|(?!\1)[^\\])*)\1/g,
  php: /\b(?:system|exec|shell_exec|passthru|popen|proc_open)\s*\(\s*(["'])((?:\\.|(?!\1)[^\\])*)\1/g,
};
const SUBPROCESS_SHELL =
  /\bsubprocess\.(?:run|call|check_call|check_output|Popen)\s*\(\s*[rbuf]?(["'])((?:\\.|(?!\1)[^\\])*)\1[^)]*shell\s*=\s*True/g;
const BACKTICKS = /`((?:\\.|[^`\\])*)`/g;

function language(program: string): string | null {
  if (program.startsWith('python') || program.startsWith('pypy')) return 'python';
  if (program === 'nodejs' || program === 'node') return 'node';
  if (program === 'perl' || program === 'ruby' || program === 'php') return program;
  return null;
}

/** The shell commands inline script code (`python3 -c`, `perl -e`, `node -e`, `ruby -e`, `php -r`) runs as string literals. */
function inlineScript(program: string, words: readonly Word[]): Expansion[] {
  const lang = language(program);
  if (lang === null) return [];
  const out: Expansion[] = [];
  for (let i = 1; i < words.length; i++) {
    const w = (words[i] as Word).text;
    if (!/^-[a-zA-Z]*[cerE]$|^--eval$|^-p$/.test(w) || words[i + 1] === undefined) continue;
    const src = (words[++i] as Word).text;
    const unescape = (s: string): string => s.replace(/\\(["'`\\])/g, '$1');
    const found = [...src.matchAll(SHELL_OUT[lang] as RegExp)].map((m) => m[2] as string);
    if (lang === 'python') found.push(...[...src.matchAll(SUBPROCESS_SHELL)].map((m) => m[2] as string));
    if (lang === 'perl' || lang === 'ruby' || lang === 'php')
      found.push(...[...src.matchAll(BACKTICKS)].map((m) => m[1] as string));
    for (const s of found) out.push(code(`${program} code`, unescape(s), false));
  }
  return out;
}

/**
 * The command strings `program` runs from its own options or arguments, as shell code (or argv);
 * empty when it has none.
 */
export function commandStrings(program: string, words: readonly Word[]): Expansion[] {
  switch (program) {
    case 'trap':
      return trap(words);
    case 'alias':
      return alias(words);
    case 'tar':
    case 'gtar':
      return tar(words);
    case 'zip':
      return zip(words);
    case 'sort':
      return sort(words);
    case 'make':
    case 'gmake':
      return make(words);
    case 'man':
      return man(words);
    case 'vim':
    case 'vi':
    case 'nvim':
    case 'view':
    case 'ex':
    case 'gvim':
    case 'rvim':
    case 'vimdiff':
    case 'evim':
      return vim(words);
    case 'less':
      return less(words);
    case 'sed':
    case 'gsed':
      return sedCode(sedScripts(words));
    case 'awk':
    case 'gawk':
    case 'mawk':
    case 'nawk':
      return awkCode(awkPrograms(words));
    case 'gdb':
      return gdb(words);
    case 'rsync':
      return rsync(words);
    case 'ssh':
    case 'scp':
    case 'sftp':
      return ssh(program, words);
    case 'git':
      return git(words);
    case 'compgen':
    case 'complete':
      return completion(program, words);
    default:
      return isInterpreter(program) ? inlineScript(program, words) : [];
  }
}
