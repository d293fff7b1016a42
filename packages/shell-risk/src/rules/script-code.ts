// What inline script code (`python3 -c`, `node -e`, `perl -e`, `ruby -e`, `php -r`) does besides
// handing a string to a shell (command-strings.ts judges those):
// - a recursive delete of home or `/` (`shutil.rmtree(os.path.expanduser("~"))`,
//   `fs.rmSync(os.homedir(),{recursive:true})`, `rmtree($ENV{HOME})`, `FileUtils.rm_rf(Dir.home)`);
// - an argv-list process API whose words are literal (`subprocess.run(["rm","-rf","/root"])`,
//   `os.execvp("rm",[…])`, `spawnSync('rm',['-rf',…])`, `system("rm","-rf",$ENV{HOME})`), judged
//   as that command (a shell's `-c` text as the commands it holds);
// - a write or append to a place a shell redirect may not write (`open('/root/.bashrc','a')`,
//   `fs.appendFileSync(…)`, `file_put_contents(…)`); `chmod(p, 0o4755)` (setuid); a fork bomb;
// - code decoded or downloaded at run time and then run (`exec(base64.b64decode(…))`,
//   `eval get("http://…")`, `.then(eval)`): the in-process form of `curl | sh`;
// - a socket together with a shell (a reverse shell), and code that reads a credential file and
//   uses the network (exfiltration).
// A bounded, linear scan with regular expressions and a small argument splitter, not a parser.

import type { CommandModel, SimpleCommand } from '../command-model.js';
import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { isBroadTarget, secretPath, sensitiveWriteTarget } from '../knowledge/places/paths.js';
import { FETCHERS, isInterpreter, readsScriptFromStdin, SHELLS } from '../knowledge/programs/programs.js';
import { lexCommands, type SegmentJudge } from '../wrappers/literal-commands.js';

/** Inline code longer than this is scanned only up to here. */
const MAX_CODE = 16384;
/** An argument list is read at most this far past its call. */
const MAX_ARGS = 400;
/** At most this many argv lists are judged per command line. */
const MAX_JUDGED = 32;

type Lang = 'python' | 'node' | 'perl' | 'ruby' | 'php';

function language(program: string): Lang | null {
  if (program.startsWith('python') || program.startsWith('pypy')) return 'python';
  if (program === 'nodejs' || program === 'node' || program === 'deno' || program === 'bun') return 'node';
  if (program === 'perl' || program === 'ruby' || program === 'php') return program;
  return null;
}

/** The inline code words of an interpreter segment (`-c CODE`, `-e CODE`, `-r CODE`, `--eval CODE`). */
function inlineCode(seg: SimpleCommand): string[] {
  const out: string[] = [];
  const a = seg.argv;
  for (let i = 1; i < a.length - 1; i++) {
    const w = a[i] as string;
    if (/^-[a-zA-Z]*[cerE]$|^--eval$|^-p$/.test(w) && !seg.dynamic.includes(i + 1)) {
      out.push((a[++i] as string).slice(0, MAX_CODE));
    }
  }
  return out;
}

/** Expressions for the user's home directory in the five languages. */
const HOME_EXPR =
  /^(?:(?:os\.path\.)?expanduser\(\s*(['"])~\/?\1\s*\)|(?:require\(\s*['"](?:node:)?os['"]\s*\)|os)?\.?homedir\(\)|(?:pathlib\.)?Path\.home\(\)|\$ENV\{\s*['"]?HOME['"]?\s*\}|ENV\[\s*['"]HOME['"]\s*\]|ENV\.fetch\(\s*['"]HOME['"]\s*\)|Dir\.home|(?:os\.)?environ(?:\.get\(|\[)\s*['"]HOME['"]\s*[\])]|(?:os\.)?getenv\(\s*['"]HOME['"]\s*\)|process\.env\.HOME|process\.env\[\s*['"]HOME['"]\s*\]|\$_SERVER\[\s*['"]HOME['"]\s*\]|~)$/;
/** A home expression inside string interpolation (`"$ENV{HOME}/x"`, `${os.homedir()}/x`, `f"{Path.home()}/x"`). */
const HOME_INTERPOLATED =
  /\$ENV\{\s*['"]?HOME['"]?\s*\}|\$\{[^}]{0,60}\}|#\{[^}]{0,60}\}|\{(?:os\.path\.expanduser\([^)]{0,8}\)|Path\.home\(\)|os\.environ\[[^\]]{0,10}\]|os\.getenv\([^)]{0,10}\))\}|\$HOME\b/g;

/**
 * Splits an argument list at its top-level commas, from just after the opening bracket to the
 * matching close (or the end of a statement when there is no bracket); bounded by MAX_ARGS.
 */
function splitArgs(text: string, from: number, close: string | null): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = from;
  const end = Math.min(text.length, from + MAX_ARGS);
  for (let i = from; i < end; i++) {
    const c = text[i] as string;
    if (c === '"' || c === "'" || c === '`') {
      let j = i + 1;
      while (j < end && text[j] !== c) j += text[j] === '\\' ? 2 : 1;
      i = j;
    } else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) {
        out.push(text.slice(start, i).trim());
        return out;
      }
      depth--;
    } else if (c === ',' && depth === 0) {
      out.push(text.slice(start, i).trim());
      start = i + 1;
    } else if (depth === 0 && close === null && (c === ';' || c === '\n')) {
      out.push(text.slice(start, i).trim());
      return out;
    }
  }
  out.push(text.slice(start, end).trim());
  return out;
}

/** The value of a string literal (quotes, a Python prefix, simple escapes), or null. */
function literal(arg: string): string | null {
  const m = /^(?:[rbuf]{1,2}|%q)?(["'`])((?:\\.|(?!\1)[^\\])*)\1$/s.exec(arg);
  if (m === null) return null;
  return (m[2] as string).replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
}

/** A path expression's value: a literal, home (`~`), `expanduser(…)`, a join or concatenation of those; null when not known. */
function pathValue(arg: string, depth = 0): string | null {
  const a = arg.trim().replace(/^(?:str|String|Path|pathlib\.Path|File\.expand_path|path\.resolve)\((.*)\)$/s, '$1');
  if (depth > 3 || a === '') return null;
  if (HOME_EXPR.test(a)) return '~';
  const lit = literal(a);
  if (lit !== null) return lit.replace(HOME_INTERPOLATED, '~').replace(/^~~/, '~');
  const expand = /^(?:os\.path\.)?expanduser\((.*)\)$/s.exec(a);
  if (expand !== null) return pathValue(expand[1] as string, depth + 1);
  const join = /^(?:os\.path|path|File|Path)\.join\((.*)\)$/s.exec(a);
  if (join !== null) {
    const parts = splitArgs(join[1] as string, 0, ')').map((p) => pathValue(p, depth + 1));
    if (parts.some((p) => p === null)) return null;
    return (parts as string[]).join('/').replace(/\/{2,}/g, '/');
  }
  const ops = a.split(/\s*(?:\+|\s\.\s|\s\/\s)\s*/);
  if (ops.length > 1 && ops.length <= 4) {
    const parts = ops.map((p) => pathValue(p, depth + 1));
    if (parts.some((p) => p === null)) return null;
    const joined = (parts as string[]).join('');
    // pathlib's `/` joins with a slash
    return (a.includes(' / ') ? (parts as string[]).join('/') : joined).replace(/\/{2,}/g, '/');
  }
  return null;
}

/** One argv word from an expression: a literal, `~` for home, otherwise a run-time value. */
function argWord(arg: string): { text: string; dynamic: boolean } {
  const v = pathValue(arg);
  return v === null ? { text: `$(${arg.slice(0, 40)})`, dynamic: true } : { text: v, dynamic: false };
}

/** The words of a list literal (`["rm","-rf","/root"]`, `%w[rm -rf /]`), or null. */
function listWords(arg: string): { text: string; dynamic: boolean }[] | null {
  const pw = /^%w[[(](.*)[\])]$/s.exec(arg);
  if (pw !== null)
    return (pw[1] as string)
      .split(/\s+/)
      .filter((w) => w !== '')
      .map((text) => ({ text, dynamic: false }));
  if (!arg.startsWith('[') && !arg.startsWith('array(')) return null;
  const body = arg.startsWith('[') ? 1 : 6;
  return splitArgs(arg, body, ']')
    .filter((w) => w !== '')
    .map(argWord);
}

const RECURSIVE_DELETE: Readonly<Record<Lang, RegExp>> = {
  python: /\bshutil\.rmtree\s*\(|(?<![\w.])rmtree\s*\(/g,
  node: /\b(?:rmSync|rmdirSync|rm|rmdir|removeSync|remove|rimraf(?:\.sync)?|emptyDirSync)\s*\(/g,
  perl: /\b(?:rmtree|remove_tree)\s*\(?/g,
  ruby: /\b(?:FileUtils\.(?:rm_rf|rm_r|remove_dir|remove_entry(?:_secure)?|rmtree)|rm_rf|rm_r)\s*\(?/g,
  php: /\b(?:rmdir|delTree|deleteDirectory)\s*\(/g,
};

/** Calls that write a file, by language: [pattern, whether the mode decides (`open(p, 'a')`)]. */
const WRITE_CALLS: Readonly<Record<Lang, readonly [RegExp, boolean][]>> = {
  python: [
    [/(?<![\w.])(?:open|io\.open|codecs\.open)\s*\(/g, true],
    [/\b(?:shutil\.(?:copy|copy2|copyfile|move)|os\.(?:rename|replace|symlink|link))\s*\(/g, false],
  ],
  node: [
    [
      /\b(?:writeFileSync|appendFileSync|writeFile|appendFile|createWriteStream|copyFileSync|copyFile|cpSync|renameSync|symlinkSync|linkSync|outputFileSync)\s*\(/g,
      false,
    ],
  ],
  perl: [[/\bopen\s*\(?/g, true]],
  ruby: [
    [/\b(?:File|IO)\.(?:write|binwrite)\s*\(?/g, false],
    [/\b(?:File|IO)\.open\s*\(?/g, true],
    [/\bFileUtils\.(?:cp|mv|ln_s|ln|install|touch)\s*\(?/g, false],
  ],
  php: [
    [/\b(?:file_put_contents|copy|rename|symlink|link|touch)\s*\(/g, false],
    [/\bfopen\s*\(/g, true],
  ],
};

/** Process APIs that take an argv list: the argument holding the list, or 'all' (every argument is a word). */
const ARGV_CALLS: Readonly<Record<Lang, readonly [RegExp, 'first' | 'second' | 'rest' | 'all' | 'cmd+list'][]>> = {
  python: [
    [/\bsubprocess\.(?:run|call|check_call|check_output|Popen)\s*\(/g, 'first'],
    [/\bos\.(?:execv|execve|execvp|execvpe|spawnv|spawnve|spawnvp|spawnvpe|posix_spawn|posix_spawnp)\s*\(/g, 'second'],
    [/\bos\.(?:execl|execle|execlp|execlpe)\s*\(/g, 'rest'],
  ],
  node: [[/\b(?:spawnSync|spawn|execFileSync|execFile)\s*\(/g, 'cmd+list']],
  perl: [[/\b(?:system|exec)\s*\(?/g, 'all']],
  ruby: [[/\b(?:system|exec|spawn|Process\.spawn|Open3\.\w+)\s*\(?/g, 'all']],
  php: [
    [/\bpcntl_exec\s*\(/g, 'cmd+list'],
    [/\bproc_open\s*\(/g, 'first'],
  ],
};

/** Calls that run code from a string (in-process). */
const EVAL_CALL =
  /(?<![\w.$>:])(?:exec|eval|compile|Function|instance_eval|class_eval|assert)\s*(?:\(|\s(?=\s*[\w$]))/g;
/** What produces code at run time: a decoder or the network. */
const RUNTIME_SOURCE =
  /\b(?:b64decode|b32decode|b16decode|a85decode|unhexlify|fromhex|decodebytes|decompress|marshal\.loads|codecs\.decode|base64_decode|decode_base64|gzinflate|gzuncompress|str_rot13|unpack1?|atob|urlopen|urlretrieve|requests\.(?:get|post)|httpx\.get|URI\.open|open-uri|Net::HTTP|LWP|HTTP::Tiny|https?\.get|readAllBytes)\b|\bfetch\s*\(|["'](?:base64|hex)["']|\bget\s*\(\s*["']https?:|\bfile_get_contents\s*\(\s*["']https?:/;
/** Shell-out calls whose argument, when it is not a literal, may be decoded or downloaded. */
const SHELL_CALL =
  /\b(?:os\.system|os\.popen|subprocess\.\w+|system|exec|shell_exec|passthru|popen|execSync|IO\.popen|qx)\s*\(/g;
const FORK_BOMB =
  /\bwhile\s*\(?\s*(?:1|True|true)\s*\)?\s*[:{]?\s*(?:os\.|Process\.|pcntl_)?fork\b|\bfork\s+while\s+fork\b|\bloop\s*(?:\{|do)\s*(?:Process\.)?fork\b|\bfor\s*\(\s*;\s*;\s*\)\s*\{?\s*(?:pcntl_)?fork\b/;
/** Inline script code that talks to the network (as exfiltration.ts's NETWORK_CODE). */
const NETWORK_CODE =
  /\b(?:urlopen|urllib|requests\.|http\.client|httpx|aiohttp|socket\.|fetch\(|https?\.request|https?\.get|net\.connect|XMLHttpRequest|axios|Net::HTTP|TCPSocket|IO::Socket|LWP|HTTP::Tiny|curl_exec|fsockopen|file_get_contents\(\s*['"]https?:)/;
const STRING_LITERAL = /(["'])((?:\\.|(?!\1)[^\\\n]){1,300})\1/g;

function quote(s: string): string {
  return `'${s.length > 60 ? `${s.slice(0, 57)}…` : s}'`;
}

/** The argument list after a call match (`f(` or, for perl and ruby, `f ` without brackets). */
function callArgs(code: string, m: RegExpExecArray): string[] {
  const end = m.index + m[0].length;
  const paren = m[0].trimEnd().endsWith('(');
  return splitArgs(code, end, paren ? ')' : null);
}

function* matches(re: RegExp, code: string): Generator<RegExpExecArray> {
  re.lastIndex = 0;
  for (let m = re.exec(code); m !== null; m = re.exec(code)) {
    if (m[0] === '') re.lastIndex++;
    yield m;
  }
}

/** The judged argv lists of one command line, within a budget, and the segment rules that judge them. */
class Budget {
  left = MAX_JUDGED;
  constructor(readonly judge: SegmentJudge) {}
}

function judgeArgv(
  words: { text: string; dynamic: boolean }[],
  at: SimpleCommand,
  index: number,
  budget: Budget,
  add: (reason: string) => void,
): void {
  const judge = budget.judge;
  if (words.length === 0 || budget.left-- <= 0) return;
  const intro = `segment ${index + 1}: ${at.program} code runs ${quote(words.map((w) => w.text).join(' '))}`;
  const first = words[0] as { text: string; dynamic: boolean };
  const prog = first.text.slice(first.text.lastIndexOf('/') + 1);
  // a shell's -c text: the commands it holds
  const c = words.findIndex((w, k) => k > 0 && /^-[a-zA-Z]*c$/.test(w.text));
  if (SHELLS.has(prog) && c > 0 && words[c + 1] !== undefined && !(words[c + 1] as { dynamic: boolean }).dynamic) {
    const cmds = lexCommands((words[c + 1] as { text: string }).text.slice(0, 8192));
    const segs = cmds.map((cmd) => synthetic(cmd.words, cmd.dynamic, at, cmd.redirects));
    const fetcher = segs.findIndex((s) => FETCHERS.has(s.program));
    const runner = segs.findIndex((s, k) => k > fetcher && readsScriptFromStdin(s));
    if (fetcher >= 0 && runner > fetcher && (words[c + 1] as { text: string }).text.includes('|'))
      add(
        `${intro}: ${(segs[runner] as SimpleCommand).program} runs what ${(segs[fetcher] as SimpleCommand).program} downloads`,
      );
    for (const s of segs.slice(0, 16)) report(judge(s, index), intro, add);
    return;
  }
  report(
    judge(
      synthetic(
        words.map((w) => w.text),
        words.map((w) => w.dynamic),
        at,
        [],
      ),
      index,
    ),
    intro,
    add,
  );
}

function report(reasons: readonly string[], intro: string, add: (reason: string) => void): void {
  for (const r of reasons) {
    const m = /^segment \d+: /.exec(r);
    if (m !== null) add(`${intro}: ${r.slice(m[0].length)}`);
  }
}

function synthetic(
  words: readonly string[],
  dynamic: readonly boolean[],
  at: SimpleCommand,
  redirects: SimpleCommand['redirects'],
): SimpleCommand {
  const path = words[0] ?? '';
  const base = path.slice(path.lastIndexOf('/') + 1);
  const relative = path.includes('/') && !path.startsWith('/');
  const dyn: number[] = [];
  dynamic.forEach((d, k) => {
    if (d) dyn.push(k);
  });
  return {
    argv: [...words],
    program: relative ? path : base,
    path,
    name: base,
    dynamic: dyn,
    assignments: [],
    redirects: [...redirects],
    via: [...at.via, `${at.program} code`],
    wrapper: false,
    local_binary: relative,
    unknown_program: dynamic[0] === true,
    unknown_tail: false,
    pipeline: at.pipeline,
  };
}

/** The argv words a process API call is given, or null when it is not a literal list. */
function argvOf(
  kind: 'first' | 'second' | 'rest' | 'all' | 'cmd+list',
  args: string[],
): { text: string; dynamic: boolean }[] | null {
  switch (kind) {
    case 'first':
      return listWords(args[0] ?? '');
    case 'second':
      return listWords(args[1] ?? '');
    case 'rest':
      return args.length > 1
        ? args
            .slice(1)
            .filter((a) => !/^\w+\s*=/.test(a))
            .map(argWord)
        : null;
    case 'all': {
      const words = args.filter((a) => a !== '' && !/^\{|^\w+:\s|^:\w+\s*=>/.test(a));
      if (words.length === 1) return listWords(words[0] as string);
      return words.length > 1 ? words.map(argWord) : null;
    }
    case 'cmd+list': {
      const cmd = literal(args[0] ?? '');
      if (cmd === null) return null;
      const rest = args[1] === undefined ? [] : (listWords(args[1]) ?? []);
      return [{ text: cmd, dynamic: false }, ...rest];
    }
  }
}

function setuidMode(args: readonly string[]): string | null {
  for (const a of args) {
    const m = /^0o?([0-7]{4,6})$/i.exec(a.trim());
    if (m !== null && (parseInt(m[1] as string, 8) & 0o6000) !== 0) return a.trim();
    if (/\bS_IS[UG]ID\b/.test(a)) return a.trim();
  }
  return null;
}

/** The mode argument of an open call says it writes (`'a'`, `'w'`, `'r+'`, `">>"`, `O_WRONLY`…). */
function writesMode(lang: Lang, args: readonly string[]): string | null {
  if (lang === 'perl') {
    // open(FH, '>>', path) / open(FH, '>>path') / open FH, ">path"
    const mode = literal(args[1] ?? '');
    if (mode === null) return null;
    if (/^\s*\+?(?:>>?|\+<)\s*$/.test(mode)) return args[2] ?? null;
    const joined = /^\s*\+?>>?\s*(.+)$/.exec(mode);
    return joined === null ? null : JSON.stringify(joined[1]);
  }
  const mode = literal(args[1] ?? '') ?? args.slice(1).join(',');
  return /[wax+]|O_WRONLY|O_RDWR|O_APPEND|O_CREAT/.test(mode) ? (args[0] ?? null) : null;
}

function scanCode(
  code: string,
  lang: Lang,
  seg: SimpleCommand,
  i: number,
  budget: Budget,
  add: (r: string) => void,
  homes: KnownHomes,
): void {
  const label = `segment ${i + 1}: ${seg.program} code`;
  for (const m of matches(RECURSIVE_DELETE[lang], code)) {
    const args = callArgs(code, m);
    const target = pathValue(args[0] ?? '');
    if (target !== null && isBroadTarget(target, homes))
      add(`${label} deletes ${quote(target)} recursively (${m[0].replace(/[\s(]+$/, '')})`);
  }
  for (const [re, moded] of WRITE_CALLS[lang]) {
    for (const m of matches(re, code)) {
      const args = callArgs(code, m);
      const candidates = moded
        ? [writesMode(lang, args)]
        : m[0].match(/cp|copy|mv|move|rename|replace|symlink|link|install|ln/i) !== null
          ? [args[1], args.at(-1)]
          : [args[0]];
      for (const c of candidates) {
        const path = c === null || c === undefined ? null : pathValue(c);
        const sens = path === null ? null : sensitiveWriteTarget(path, homes);
        if (sens !== null) {
          add(`${label} writes to ${quote(path as string)} (${sens})`);
          break;
        }
      }
    }
  }
  for (const m of matches(/\b(?:chmod|chmodSync|lchmod|fchmod)\s*\(?/g, code)) {
    const mode = setuidMode(callArgs(code, m));
    if (mode !== null) add(`${label} sets the setuid/setgid bit (chmod ${mode})`);
  }
  if (FORK_BOMB.test(code)) add(`${label} forks without end (a fork bomb)`);
  for (const [re, kind] of ARGV_CALLS[lang]) {
    for (const m of matches(re, code)) {
      const words = argvOf(kind, callArgs(code, m));
      if (words !== null) judgeArgv(words, seg, i, budget, add);
    }
  }
  let runtime = false;
  for (const m of matches(EVAL_CALL, code)) {
    const args = callArgs(code, m).join(',');
    if (RUNTIME_SOURCE.test(args)) {
      add(`${label} runs code it decodes or downloads at run time (${quote(`${m[0].trim()}${args}`)})`);
      runtime = true;
      break;
    }
  }
  if (!runtime && /\.then\(\s*(?:eval|Function|new Function)\b/.test(code) && /\bfetch\s*\(|https?\.get/.test(code))
    add(`${label} runs code it downloads at run time (fetch … then(eval))`);
  for (const m of matches(SHELL_CALL, code)) {
    const args = callArgs(code, m);
    const first = args[0] ?? '';
    if (literal(first) === null && !first.startsWith('[') && RUNTIME_SOURCE.test(first)) {
      add(`${label} runs a shell command it decodes or downloads at run time (${quote(first)})`);
      break;
    }
  }
  // a socket with a shell on it: code-shells.ts, which names the reverse or bind shell's end
  if (NETWORK_CODE.test(code)) {
    for (const m of matches(STRING_LITERAL, code)) {
      const p = (m[2] as string).replace(HOME_INTERPOLATED, '~');
      if (/\.pub$/.test(p) || secretPath(p, homes) === null) continue;
      add(`${label} reads the credential file ${quote(p)} and uses the network (exfiltration)`);
      break;
    }
  }
}

/** Adds the dangerous findings of inline script code: deletes, writes, argv lists, run-time code, reverse shells. */
export function scriptCodeRules(
  model: CommandModel,
  add: (reason: string) => void,
  judge: SegmentJudge,
  homes: KnownHomes,
): void {
  const budget = new Budget(judge);
  model.segments.forEach((seg, i) => {
    if (seg.wrapper || seg.argv.length < 3 || !isInterpreter(seg.program)) return;
    const lang = language(seg.program);
    if (lang === null) return;
    for (const code of inlineCode(seg)) scanCode(code, lang, seg, i, budget, add, homes);
  });
}
