// Forms of commands that look risky by their program or their run-time values and are not:
// printing variables that hold no secret (`echo $PATH`), `sudo -l` (which runs nothing), a git
// pager key set to a plain pager (`git -c core.pager=cat`). Pure.

import type { CommandModel, SimpleCommand } from '../../command-model.js';

/** A pager or editor that runs nothing else (the value of PAGER, GIT_PAGER, `core.pager`…). */
export const BENIGN_PAGER = /^(?:cat|less|more|true|vi|vim|nvim|nano|emacs|code --wait|)(?: -[A-Za-z]+)*$/;

/** A pager or editor key set to a plain pager or editor (`-c core.pager=cat`): nothing else runs. */
export function benignGitProgram(key: string, value: string | undefined): boolean {
  return (
    value !== undefined &&
    /^(?:core\.(?:pager|editor)|sequence\.editor|pager\.[^.]+)$/i.test(key) &&
    BENIGN_PAGER.test(value)
  );
}

/**
 * `sudo -l` (what may I run?), `sudo -V`, `sudo -k`: a privileged program asked about itself, no
 * command to run. Anything else given to it is taken as a command.
 */
export function runsNothing(seg: SimpleCommand): boolean {
  if (seg.program !== 'sudo') return false;
  const a = seg.argv.slice(1);
  if (a.length === 0 || seg.dynamic.length > 0) return false;
  const list = a.some((w) => /^-[a-zA-Z]*l/.test(w) || w === '--list');
  for (let i = 0; i < a.length; i++) {
    const w = a[i] as string;
    if (/^(?:-(?:l{1,2}|V|h|k|K|n)|--(?:list|version|help|reset-timestamp|remove-timestamp|non-interactive))$/.test(w))
      continue;
    // the user whose rights -l lists
    if (list && (w === '-U' || w === '--other-user') && i + 1 < a.length) {
      i++;
      continue;
    }
    return false;
  }
  return true;
}

/**
 * Variables whose values are no secret and run nothing: printing them (`echo $PATH`, `printf '%s'
 * "$HOME"`) tells an agent about its environment, as `pwd` does.
 */
const BENIGN_VARS = new Set([
  'PATH',
  'HOME',
  'PWD',
  'OLDPWD',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'TERM',
  'HOSTNAME',
  'HOSTTYPE',
  'OSTYPE',
  'MACHTYPE',
  'TMPDIR',
  'SHLVL',
  'UID',
  'EUID',
  'BASH_VERSION',
  'NODE_ENV',
  'VIRTUAL_ENV',
  'CONDA_DEFAULT_ENV',
  'GOPATH',
  'GOROOT',
  'JAVA_HOME',
  'PYTHONPATH',
  'NODE_PATH',
  'XDG_CONFIG_HOME',
  'XDG_DATA_HOME',
  'XDG_CACHE_HOME',
  'XDG_RUNTIME_DIR',
  'COLUMNS',
  'LINES',
]);

/** `$NAME` / `${NAME}` references; a word whose every expansion is one of BENIGN_VARS prints nothing secret. */
const VAR_REF = /\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g;

function benignWord(word: string): boolean {
  let rest = word;
  for (const m of word.matchAll(VAR_REF)) {
    if (!BENIGN_VARS.has((m[1] ?? m[2]) as string)) return false;
    rest = rest.replace(m[0], '');
  }
  return !/[$`]/.test(rest);
}

/** `echo` / `printf` (not `printf -v`) whose run-time arguments only expand {@link BENIGN_VARS}. */
export function printsOnlyBenign(seg: SimpleCommand): boolean {
  if (seg.program !== 'echo' && seg.program !== 'printf') return false;
  if (seg.program === 'printf' && seg.argv.some((a) => a.startsWith('-v'))) return false;
  return seg.dynamic.length <= 16 && seg.dynamic.every((i) => benignWord(seg.argv[i] ?? '$'));
}

/** Every run-time value of the command is a benign variable printed ({@link printsOnlyBenign}). */
export function onlyBenignPrints(model: CommandModel): boolean {
  let printed = false;
  for (const seg of model.segments) {
    if (seg.assignments.length > 0 || seg.redirects.some((r) => /[$`]/.test(r.target))) return false;
    if (seg.dynamic.length === 0) continue;
    if (!printsOnlyBenign(seg)) return false;
    printed = true;
  }
  return printed;
}
