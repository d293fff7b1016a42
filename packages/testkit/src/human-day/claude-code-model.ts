import { dirname, isAbsolute, relative, resolve } from 'node:path';

import type { DayCall } from './day-script.js';

/**
 * The variant of the model: `rules` is Claude Code's documented default (read-only tools run,
 * Bash asks unless an allow rule matches, edits ask until accepted for the session); `read-only`
 * adds the CLI's built-in list of read-only Bash commands and accept-edits' file-system commands
 * (see test/fixtures/human-day/README.md for the sources and what is assumed).
 */
export type ClaudeCodeVariant = 'rules' | 'read-only';

/** What the model says happened to one call. */
export interface ModelOutcome {
  index: number;
  /** The person was asked. */
  asked: boolean;
  ran: boolean;
  /** A standing answer the person gave (an allow rule, accept-edits, a read directory) let it run. */
  by_standing: boolean;
  /** The rule or mode that let it run unasked, or why it asked. */
  note: string;
}

/** Programs whose first word after the program is a subcommand (`git push`, `npm test`). */
const SUBCOMMAND_PROGRAMS = new Set(['git', 'npm', 'npx', 'cargo', 'pip', 'yarn', 'pnpm', 'docker', 'go', 'gh']);

/** Read-only commands the CLI approves without a rule (the reading that claims less: see README). */
const READ_ONLY = new Set(['ls', 'cat', 'head', 'tail', 'wc', 'grep', 'rg', 'find', 'diff', 'pwd', 'stat', 'file']);
const READ_ONLY_GIT = new Set(['status', 'log', 'diff', 'show', 'branch', 'tag']);
/** File-system commands accept-edits approves in the working directory (docs: permission modes). */
const ACCEPT_EDITS_COMMANDS = new Set(['mkdir', 'touch', 'cp', 'mv']);

/** Splits a command line at `&&`, `||`, `;`, `|`, `&` and line breaks outside quotes; drops `(`/`)`. */
export function bashSegments(command: string): string[] {
  const segments: string[] = [];
  let cur = '';
  let quote: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const ch = command[i]!;
    if (quote) {
      cur += ch;
      if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === "'" || ch === '"') {
      quote = ch;
      cur += ch;
    } else if (ch === '\\' && i + 1 < command.length) {
      cur += ch + command[++i]!;
    } else if (ch === ';' || ch === '\n' || ch === '|' || ch === '(' || ch === ')') {
      if (ch === '|' && command[i + 1] === '|') i++;
      segments.push(cur);
      cur = '';
    } else if (ch === '&') {
      // `>&` and `&>` are redirections, not separators
      const prev = cur.trimEnd().at(-1);
      if (command[i + 1] === '>' || prev === '>' || prev === '<') {
        cur += ch;
        continue;
      }
      if (command[i + 1] === '&') i++;
      segments.push(cur);
      cur = '';
    } else {
      cur += ch;
    }
  }
  segments.push(cur);
  return segments.map((s) => s.trim()).filter((s) => s.length > 0);
}

function words(segment: string): string[] {
  return segment.split(/\s+/).filter((w) => w.length > 0);
}

/** The prefix "don't ask again" offers for a segment: the program, and its subcommand for git, npm… */
export function bashPrefix(segment: string): string {
  const [program = '', sub] = words(segment);
  if (SUBCOMMAND_PROGRAMS.has(program) && sub !== undefined && !sub.startsWith('-')) return `${program} ${sub}`;
  return program;
}

/** `Bash(prefix:*)`: the segment is the prefix or starts with it and a space. */
function matches(rule: string, segment: string): boolean {
  return segment === rule || segment.startsWith(`${rule} `);
}

/** True when `p` (absolute) lies in `dir` or is `dir`. */
function inside(p: string, dir: string): boolean {
  const r = relative(dir, p);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

/** The path arguments of a segment reach outside the working directory (`~`, `/…`, `..`) or redirect. */
function leavesWorkingDir(segment: string): boolean {
  return words(segment).some((w, i) => i > 0 && (/^~|^\/|(^|\/)\.\.(\/|$)/.test(w) || /^\d*>/.test(w)));
}

function builtinReadOnly(segment: string): boolean {
  const [program = '', sub] = words(segment);
  if (leavesWorkingDir(segment)) return false;
  if (program === 'git') return sub !== undefined && READ_ONLY_GIT.has(sub) && !/\s(-d|-D|--delete|-f)\b/.test(segment);
  if (program === 'find') return !/\s-(exec|execdir|delete|ok|fprint)/.test(segment);
  return READ_ONLY.has(program);
}

/**
 * Claude Code's permission rules applied to the day, in order, for a person who answers each
 * prompt as the script says: `always` is "Yes, and don't ask again" (a `Bash(prefix:*)` rule per
 * segment not yet allowed, accept-edits for the session, or reads of that directory for the
 * session), `approve` is "Yes" for this call, `reject` is "No". Pure: no I/O.
 */
export function claudeCodeDay(
  calls: readonly DayCall[],
  workingDir: string,
  variant: ClaudeCodeVariant = 'rules',
): ModelOutcome[] {
  const rules = new Set<string>();
  const readDirs: string[] = [];
  let acceptEdits = false;
  const out: ModelOutcome[] = [];
  const decided = (c: DayCall, note: string, learn: () => void): ModelOutcome => {
    if (c.decide === 'always') learn();
    return { index: c.index, asked: true, ran: c.decide !== 'reject', by_standing: false, note };
  };
  for (const c of calls) {
    const path = typeof c.args.path === 'string' ? resolve(workingDir, c.args.path) : undefined;
    if (c.tool === 'fs.read' || c.tool === 'fs.list' || c.tool === 'fs.stat') {
      if (path !== undefined && inside(path, workingDir)) {
        out.push({ index: c.index, asked: false, ran: true, by_standing: false, note: 'read-only tool' });
      } else if (path !== undefined && readDirs.some((d) => inside(path, d))) {
        out.push({ index: c.index, asked: false, ran: true, by_standing: true, note: 'read allowed for the session' });
      } else {
        out.push(decided(c, 'read outside the working directory', () => readDirs.push(dirname(path ?? '/'))));
      }
    } else if (c.tool === 'fs.write' || c.tool === 'fs.patch' || c.tool === 'fs.delete') {
      if (path !== undefined && inside(path, workingDir) && acceptEdits) {
        out.push({ index: c.index, asked: false, ran: true, by_standing: true, note: 'accept edits (session)' });
      } else if (path !== undefined && inside(path, workingDir)) {
        out.push(decided(c, 'edit', () => (acceptEdits = true)));
      } else {
        out.push(decided(c, 'edit outside the working directory', () => undefined));
      }
    } else {
      const command = typeof c.args.command === 'string' ? c.args.command : '';
      const segments = bashSegments(command);
      const open = segments.filter((s) => {
        if ([...rules].some((r) => matches(r, s))) return false;
        if (variant === 'read-only' && builtinReadOnly(s)) return false;
        const program = words(s)[0] ?? '';
        return !(variant === 'read-only' && acceptEdits && ACCEPT_EDITS_COMMANDS.has(program) && !leavesWorkingDir(s));
      });
      if (open.length === 0) {
        const byRule = segments.some((s) => [...rules].some((r) => matches(r, s)));
        out.push({
          index: c.index,
          asked: false,
          ran: true,
          by_standing: byRule,
          note: byRule ? 'allow rule' : 'built-in',
        });
      } else {
        out.push(
          decided(c, `Bash: ${open.map(bashPrefix).join(', ')}`, () => {
            for (const s of open) rules.add(bashPrefix(s));
          }),
        );
      }
    }
  }
  return out;
}
