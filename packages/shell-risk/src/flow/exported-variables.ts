// Which shell variables a command line exports, so that programs it starts later see them in their
// environment: `export K=…`, `export K`, `declare -x K=…` / `typeset -x`, and every assignment
// while `set -a` (`set -o allexport`) is on. `export -n K` and `unset K` take one back.

import type { SimpleCommand } from '../command-model.js';
import { isSecretVariable } from './exfiltration.js';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Variables that make programs (or the shell) run other code when set: a library preloaded, a
 * script sourced, a helper program git or ssh runs, the shell's prompt and trace hooks. The same
 * names classify.ts judges dangerous in an assignment.
 */
export const EXEC_VARIABLES =
  /^(?:LD_PRELOAD|LD_LIBRARY_PATH|LD_AUDIT|DYLD_INSERT_LIBRARIES|DYLD_LIBRARY_PATH|DYLD_FRAMEWORK_PATH|BASH_ENV|ENV|PROMPT_COMMAND|PS4|IFS|SHELLOPTS|BASHOPTS|GIT_SSH|GIT_SSH_COMMAND|GIT_EXTERNAL_DIFF|GIT_ASKPASS|SSH_ASKPASS|GIT_EXEC_PATH|GIT_CONFIG_COUNT|GIT_CONFIG_KEY_\d+|GIT_CONFIG_VALUE_\d+|GIT_CONFIG_PARAMETERS|GIT_CONFIG_GLOBAL|GIT_TEMPLATE_DIR|GIT_PROXY_COMMAND|NODE_OPTIONS|PYTHONSTARTUP|PYTHONPATH|PERL5OPT|PERL5LIB|RUBYOPT|LESSOPEN|LESSCLOSE|BROWSER)$/;

/** Variables naming a program to run as a pager or editor. */
export const PAGER_VARIABLES = /^(?:PAGER|GIT_PAGER|MANPAGER|EDITOR|VISUAL|GIT_EDITOR|GIT_SEQUENCE_EDITOR)$/;

/**
 * Other variables that change what later programs run or read: where they find programs and
 * configuration (PATH, HOME, XDG_*, ZDOTDIR, git's, ssh's, docker's, kubectl's, npm's), which
 * compiler, interpreter options or proxy they use, how the shell splits words and globs.
 */
const STEERING =
  /^(?:PATH|HOME|CDPATH|SHELL|TMPDIR|ZDOTDIR|GLOBIGNORE|HISTFILE|BASH_XTRACEFD|BASH_COMPAT|XDG_[A-Z_]+|LD_[A-Z_]+|DYLD_[A-Z_]+|GIT_[A-Z0-9_]+|SSH_[A-Z_]+|GNUPGHOME|KUBECONFIG|DOCKER_[A-Z_]+|AWS_CONFIG_FILE|AWS_SHARED_CREDENTIALS_FILE|(?:NPM|npm)_(?:CONFIG|config)_\w+|PIP_[A-Z_]+|CARGO_[A-Z_]+|RUSTC|RUSTC_WRAPPER|RUSTFLAGS|CC|CXX|CPP|LD|MAKEFLAGS|MFLAGS|MAKE|PKG_CONFIG_PATH|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS|JDK_JAVA_OPTIONS|MAVEN_OPTS|GRADLE_OPTS|PERL[A-Z0-9_]*|PYTHON[A-Z_]*|RUBY[A-Z_]*|GEM_[A-Z_]+|NODE_[A-Z_]+|LUA_[A-Z_0-9]+|GCONV_PATH|LOCPATH|NLSPATH|(?:http|https|ftp|all|no)_proxy|(?:HTTP|HTTPS|FTP|ALL|NO)_PROXY)$/;

/**
 * Whether setting `name` changes what later commands run or read: such a variable set by
 * `printf -v`, `read`, `mapfile`, `getopts` or `declare` is judged like an assignment of it
 * (`printf -v HOME /x; git status` reads /x/.gitconfig). A name that looks like it holds a secret
 * (`GIT_TOKEN`) is left to the secret-flow rules.
 */
export function steersPrograms(name: string): boolean {
  return (EXEC_VARIABLES.test(name) || PAGER_VARIABLES.test(name) || STEERING.test(name)) && !isSecretVariable(name);
}

/** The variables exported so far in a pass over a command line's segments. */
export class ExportedVariables {
  readonly #names = new Set<string>();
  #all = false;

  /** Takes in what a segment does to the exported set (call for every segment, in order). */
  observe(seg: SimpleCommand): void {
    const p = seg.program;
    const rest = seg.argv.slice(1);
    if (p === 'set') {
      for (let k = 0; k < rest.length; k++) {
        const w = rest[k] as string;
        const on = w.startsWith('-');
        if (/^[-+][a-zA-Z]*a/.test(w) || (/^[-+]o$/.test(w) && rest[k + 1] === 'allexport')) this.#all = on;
      }
      return;
    }
    if (p === 'unset') for (const w of rest) this.#names.delete(w);
    const declares = p === 'declare' || p === 'typeset' || p === 'local' || p === 'readonly';
    const exporting = p === 'export' || (declares && rest.some((w) => /^-[a-zA-Z]*x/.test(w)));
    const removing = p === 'export' && rest.some((w) => /^-[a-zA-Z]*n/.test(w));
    if (exporting) {
      for (const a of seg.assignments) this.#set(a.name, !removing);
      for (const w of rest) if (NAME.test(w)) this.#set(w, !removing);
    } else if (this.#all) {
      for (const a of seg.assignments) this.#names.add(a.name);
    }
  }

  /** The names exported now. */
  names(): Iterable<string> {
    return this.#names;
  }

  #set(name: string, on: boolean): void {
    if (on) this.#names.add(name);
    else this.#names.delete(name);
  }
}
