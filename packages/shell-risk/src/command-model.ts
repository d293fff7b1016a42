// The canonical command model of §3.8: what a shell command (or an exec'd argv) will run, after
// de-quoting, wrapper stripping and recursion into every nested command. Built by
// `model-builder.ts`, classified by `classify.ts`, matched by the firewall's policy/command-pattern.ts.

/** The RiskAssessor's verdict on a command: `safe` → AUTO, `moderate` → CONFIRM, `dangerous` → APPROVE. */
export type CommandRiskLevel = 'safe' | 'moderate' | 'dangerous';

/**
 * How a segment was reached, outermost first. Labels: `pipe` (a stage of a multi-stage pipeline),
 * `$(…)`, `` `…` ``, `<(…)`, `>(…)` (substitutions), `subshell`, `function`, `sh -c` (any shell's
 * `-c` string), `eval`, `xargs`, `find -exec`, `env -S`, and the name of every stripped wrapper
 * (`sudo`, `doas`, `timeout`, `nice`, `nohup`, `env`, `command`, `builtin`, `time`, `stdbuf`, `exec`, …).
 */
export type Via = string;

/** A redirection of one simple command. `target` is de-quoted; `is_write` for `>`, `>>`, `&>`, `>|`, `<>`, `>&file`. */
export interface Redirect {
  op: string;
  target: string;
  is_write: boolean;
  /** the target contains an expansion whose value is only known at run time */
  dynamic: boolean;
  /** the descriptor redirected when the command names one (`3< f`, `2>&1`); absent for the default 0 or 1 */
  fd?: number;
}

/** `NAME=value` before a command, or from `export` / `declare` / `local` / `readonly` / `env`. */
export interface Assignment {
  name: string;
  value: string;
  dynamic: boolean;
}

/**
 * Where a segment sits in a pipeline (`a | b | c`). Every segment nested in a stage shares its
 * position, except that a pipeline nested in a stage (`a | (b | c)`, `a | sh -c 'b | c'`) gives
 * its segments their own position, whose `outer` is the stage's.
 */
export interface PipelinePosition {
  id: number;
  index: number;
  length: number;
  /** the position of the stage this pipeline is nested in (absent at the top level) */
  outer?: PipelinePosition;
}

/** One command that will be executed. */
export interface SimpleCommand {
  /** de-quoted words (ANSI-C decoded, escapes removed); an expansion keeps its source text, e.g. `$HOME` */
  argv: string[];
  /** basename of argv[0] for bare names and absolute paths; relative paths (`./cat`) stay as written; '' when unknown */
  program: string;
  /** argv[0] as written, de-quoted */
  path: string;
  /** what a deny rule compares: the basename of argv[0] with invisible characters removed ('' when unknown) */
  name: string;
  /** indexes into argv of words holding a run-time value (variable, substitution, arithmetic) */
  dynamic: number[];
  assignments: Assignment[];
  redirects: Redirect[];
  via: Via[];
  /** this segment only wraps the segment(s) built from its arguments (sudo, timeout, sh -c, eval, xargs…) */
  wrapper: boolean;
  /** argv[0] is a relative path (`./cat`, `bin/x`): a local binary, not the command of that name */
  local_binary: boolean;
  /** argv[0] comes from a substitution or variable: what runs cannot be known */
  unknown_program: boolean;
  /** more arguments are appended at run time (xargs) */
  unknown_tail: boolean;
  pipeline: PipelinePosition | null;
  /** set on commands run by `find -exec`: `{}` stands for every file find visits under a broad root */
  find_broad?: boolean;
}

/** Facts about the whole command. */
export interface CommandFlags {
  /** `$(…)`, backticks or process substitution anywhere */
  substitution: boolean;
  /** a variable, arithmetic or substitution value anywhere in a word */
  dynamic: boolean;
  /** a variable assignment, `export`, `unset`, `declare`, `env VAR=…` */
  env_change: boolean;
  /** PATH assigned, exported or unset */
  path_change: boolean;
  subshell: boolean;
  background: boolean;
  function_def: boolean;
  /** if / for / while / until / case / `[[ ]]` / `(( ))` */
  control_flow: boolean;
  heredoc: boolean;
  /** a redirect that writes somewhere other than /dev/null, /dev/stdout, /dev/stderr */
  redirect_write: boolean;
  /** zero-width, bidi-control or other invisible / confusable characters in the raw text */
  invisible_unicode: boolean;
  /** the command is longer than the parse limit (10,000 characters) */
  too_long: boolean;
}

/**
 * `for NAME in WORDS` / `select NAME in WORDS`: the loop variable takes each word in turn while
 * the body runs. Only loops that name their words are listed (`for x; do …` iterates `"$@"`).
 */
export interface LoopVariable {
  name: string;
  /** the words iterated, de-quoted (an expansion or glob keeps its source text, e.g. `~/.ssh/*`) */
  words: string[];
  /** segments `from` up to (not including) `at` are run by substitutions in the words */
  from: number;
  /** the first segment of the loop body */
  at: number;
}

/** `name() { …; }` / `function name { …; }`: the segments of its body, which run again wherever it is called. */
export interface FunctionDefinition {
  name: string;
  /** the body is segments `from` up to (not including) `to` */
  from: number;
  to: number;
}

/** The canonical model of one command line (or one exec'd argv). */
export interface CommandModel {
  /**
   * every simple command in execution order: a substitution before the command that uses its
   * value, a wrapped command after its wrapper (`sudo` then `rm`), pipeline stages left to right
   */
  segments: SimpleCommand[];
  flags: CommandFlags;
  /** set when the text could not be parsed completely; the firewall treats it as at least CONFIRM */
  unparseable?: string;
  /** red flags found while walking (not tied to one segment), human-readable */
  notes: string[];
  /** the variables of `for` / `select` loops, in the order their loops start (absent when there are none) */
  loop_variables?: LoopVariable[];
  /** the shell functions defined, in order (absent when there are none) */
  functions?: FunctionDefinition[];
}

/** The RiskAssessor's result. */
export interface RiskAssessment {
  level: CommandRiskLevel;
  /**
   * why, one line per finding, e.g. "segment 2: rm with -r and -f on '~'". `reasons[0]` is the
   * primary reason, the one a person can act on: the most specific and severe finding, naming the
   * segment and what it does (primary-reason.ts orders them; docs/policy.md "What each reason
   * means"); "X is not a read-only command" comes first only when nothing else was found.
   */
  reasons: string[];
  model: CommandModel;
  /** the command could not be parsed completely (level is then at least `moderate`) */
  unparseable?: true;
  /**
   * path words were looked up on disk (symbolic links, real-paths.ts): the assessment holds only
   * while they lead where they did, so a verdict made from it is not cached
   */
  on_disk?: true;
  /**
   * Forbidden findings (forbidden.ts): the command reaches finger's own home, token or API, or
   * steers or stops finger itself (the latter also makes the level `dangerous`; a read of its
   * files keeps the level of a credential read). For an AI-initiated call the permission layer
   * makes each DENY, which no rule, grant, adaptation or standing answer lowers.
   */
  forbidden?: readonly string[];
  /**
   * The paths the command names (read-words.ts), for the PathSandbox to hold against the read
   * roots of the caller's policy (absolute, `~/…`, or relative to the call's directory).
   */
  reads?: readonly string[];
}

/**
 * Whether what a segment at `from` writes may reach the standard input of one at `to`: `from` is
 * in an earlier stage of the innermost pipeline they share (`a | (b | c)`: a feeds b and c, b feeds
 * c; `{ a; b; } | c`: a and b feed c, not each other).
 */
export function pipesInto(from: PipelinePosition | null, to: PipelinePosition | null): boolean {
  for (let a = from ?? undefined; a !== undefined; a = a.outer) {
    for (let b = to ?? undefined; b !== undefined; b = b.outer) if (a.id === b.id) return a.index < b.index;
  }
  return false;
}

/** A fresh all-false flag set. */
export function emptyFlags(): CommandFlags {
  return {
    substitution: false,
    dynamic: false,
    env_change: false,
    path_change: false,
    subshell: false,
    background: false,
    function_def: false,
    control_flow: false,
    heredoc: false,
    redirect_write: false,
    invisible_unicode: false,
    too_long: false,
  };
}

const RANK: Record<CommandRiskLevel, number> = { safe: 0, moderate: 1, dangerous: 2 };

/** The stricter of two levels. */
export function maxLevel(a: CommandRiskLevel, b: CommandRiskLevel): CommandRiskLevel {
  return RANK[a] >= RANK[b] ? a : b;
}
