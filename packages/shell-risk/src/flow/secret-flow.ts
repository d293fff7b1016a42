// Secrets that travel within one command line before they reach a network sender: through a
// variable (`K=$(cat ~/.ssh/id_rsa); curl -d "$K" …`, `read -r K < ~/.aws/credentials`), a file
// written earlier (`cp ~/.ssh/id_rsa /tmp/k && curl -F f=@/tmp/k …`), a loop (`while read l; do
// …; done < secret`, `for f in ~/.ssh/*`), a descriptor `exec` left open, or a function's
// arguments. One pass over the segments in execution order (a function body again at each call)
// keeps the variables holding a secret, the variables naming a credential file, and the files
// written from a secret (tainted-files.ts); what a segment reads through them is handed to the
// exfiltration rules, which decide whether it is sent. The secret sources are exfiltration.ts's
// (a credential printer in `$(…)` stays an authentication value there, and so it does here).
// Lexical, and flow-insensitive around loops: a later assignment does not reach an earlier use.

import type { CommandModel, FunctionDefinition, LoopVariable, SimpleCommand } from '../command-model.js';
import type { KnownHomes } from '../knowledge/places/known-homes.js';
import { isNullSink } from '../knowledge/places/paths.js';
import { FILE_WRITERS, type WrittenFile, writtenFiles } from '../knowledge/places/written-files.js';
import { isInterpreter, NO_CONTENT } from '../knowledge/programs/programs.js';
import { listedFiles, READERS, readTargets } from '../knowledge/programs/read-builtins.js';
import { Descriptors, isExecRedirect } from '../rules/descriptors.js';
import {
  ARCHIVERS,
  credentialCommand,
  credentialFile,
  type Flow,
  fromSubstitutions,
  NETWORK_PROGRAMS,
  outputSecrets,
  PRINTS_ARGS,
  redirectsOf,
  stdinSecrets,
  stdinSink,
} from './exfiltration.js';
import { ExportedVariables } from './exported-variables.js';
import { Feeders } from './feeders.js';
import { foundSecretFiles } from './found-files.js';
import { GitCommits, type TaintQuery } from './git-commits.js';
import { authenticationFiles, authenticationValue, CLOUD_CLIS, cloudUpload, fileCandidates } from './network-files.js';
import { LEADING_REF, TaintedFiles } from './tainted-files.js';
import { mayCarrySecrets } from './trail-gate.js';
import { fileOf, label, quote, refs } from './trail-words.js';

/** What a secret reaching segment i through a variable, a written file or a loop adds to the exfiltration rules. */
export interface SecretTrail {
  /** secrets in segment j's output that it reads through the trail (a secret variable it prints, a written file it reads) */
  output(j: number): readonly Flow[];
  /** secrets segment i reads on stdin through the trail (`< /tmp/copy`, `< $f`, `<<< "$K"`) */
  stdin(i: number): readonly Flow[];
  /** what segment i sends besides its stdin: its arguments for a network program (`-d "$K"`, `-F f=@/tmp/copy`), an upload, a git push, script code's environment */
  args(i: number): readonly Flow[];
}

const NONE: readonly Flow[] = Object.freeze([]);
/** A secret on its way; `auth`: a credential printed to authenticate with (not exfiltration in a header). */
type Secret = Flow & { auth?: boolean };
const DEV_SOCKET = /^\/dev\/(?:tcp|udp)\//;
/** Function calls walk at most this many body segments again, in all. */
const MAX_CALL_SEGMENTS = 2000;
class Trail implements SecretTrail {
  readonly #segs: readonly SimpleCommand[];
  /** variable → the secret it holds (`auth`: a credential printed for the command to authenticate with) */
  readonly #vars = new Map<string, { what: string; auth: boolean }>();
  /** variable → the credential file it names */
  readonly #paths = new Map<string, string>();
  /** the homes of the assessor that judges (known-homes.ts) */
  readonly #homes: KnownHomes;
  readonly #files: TaintedFiles;
  readonly #out: (readonly Flow[])[] = [];
  readonly #in: (readonly Flow[])[] = [];
  readonly #args: (readonly Flow[])[] = [];
  readonly #direct = new Map<number, Flow[]>();
  readonly #feeders: Feeders;
  readonly #fds = new Descriptors();
  readonly #exported = new ExportedVariables();
  readonly #git = new GitCommits();
  readonly #query: TaintQuery = {
    file: (w) => this.#fileIn(w, true),
    value: (w) => this.#valueIn(w),
    anyRelative: () => this.#files.anyRelative(),
  };
  /** segment → the loops whose body starts there */
  readonly #loopsAt = new Map<number, LoopVariable[]>();
  readonly #functions: readonly FunctionDefinition[];
  /** the functions whose body is being walked again for a call (no recursion) */
  readonly #calling = new Set<string>();
  /** how many more segments calls may walk again */
  #budget = MAX_CALL_SEGMENTS;
  /** the segment of the top-level pass (a call inside a function body happens when it is reached) */
  #now = 0;

  constructor(model: CommandModel, homes: KnownHomes) {
    this.#homes = homes;
    this.#files = new TaintedFiles(homes);
    this.#segs = model.segments;
    this.#feeders = new Feeders(model.segments);
    for (const v of model.loop_variables ?? []) {
      const list = this.#loopsAt.get(v.at);
      if (list === undefined) this.#loopsAt.set(v.at, [v]);
      else list.push(v);
    }
    this.#functions = model.functions ?? [];
    for (let i = 0; i < this.#segs.length; i++) {
      this.#now = i;
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
  #valueIn(text: string): Secret | null {
    let found: Secret | null = null;
    for (const name of refs(text)) {
      const v = this.#vars.get(name);
      if (v !== undefined && (found === null || found.auth === true)) found = v;
    }
    return found;
  }

  /** The credential file a path word reaches: a variable naming one, or a file written from a secret. */
  #fileIn(word: string, recursive: boolean): Flow | null {
    const m = LEADING_REF.exec(word);
    if (m !== null) {
      const what = this.#paths.get(m[1] as string);
      if (what !== undefined) return { what };
    }
    const what = this.#files.find(word, recursive);
    return what === null ? null : { what };
  }

  #loop(name: string, words: readonly string[], from: number, at: number): void {
    this.#files.rebind(name, null);
    const secret: Flow[] = [];
    for (let j = from; j < at; j++) {
      for (const what of outputSecrets(this.#segs[j] as SimpleCommand, this.#homes, true))
        secret.push({ what, from: j });
      secret.push(...this.output(j));
    }
    for (const w of words) {
      const v = this.#valueIn(w);
      if (v !== null) secret.push(v);
    }
    this.#assign(name, secret, 'loop variable');
    for (const w of words) {
      const named = credentialFile(w, this.#homes) ?? this.#fileIn(w, false)?.what ?? null;
      if (named !== null) {
        this.#paths.set(name, `${named} through the loop variable '$${name}'`);
        return;
      }
    }
  }

  /** The variable now holds `secret` (an authentication value only when all of it is one). */
  #assign(name: string, secret: readonly Secret[], kind = 'variable'): void {
    const first = secret.find((f) => f.auth !== true) ?? secret[0];
    if (first === undefined) this.#vars.delete(name);
    else this.#vars.set(name, { what: `${label(first)} through the ${kind} '$${name}'`, auth: first.auth === true });
    this.#paths.delete(name);
  }

  /** What segment j's output carries, all sources together (memoised; j is behind the pass). */
  #directOf(j: number): Flow[] {
    let v = this.#direct.get(j);
    if (v === undefined) {
      const s = this.#segs[j] as SimpleCommand;
      v = outputSecrets(s, this.#homes).map((what) => ({ what, from: j }));
      if (PRINTS_ARGS.has(s.program)) v.push(...fromSubstitutions(this.#segs, j, this.#homes));
      v.push(...this.output(j));
      this.#direct.set(j, v);
    }
    return v;
  }

  /** What the earlier stages of segment i's pipeline feed it. */
  #upstream(i: number): Flow[] {
    return this.#feeders.upstream(i).flatMap((j) => this.#directOf(j));
  }

  /** The secrets of the `$(…)` in segment i's words, through the trail too (`$(cat /tmp/copy)`). */
  #substituted(i: number): Flow[] {
    return [...fromSubstitutions(this.#segs, i, this.#homes), ...this.#substitutionTrail(i)];
  }

  /** The credentials printed by the `$(…)` in segment i's words (`T=$(gh auth token)`): authentication values. */
  #printed(i: number): Secret[] {
    const out: Secret[] = [];
    for (const j of this.#feeders.substitutions(i)) {
      const c = credentialCommand(this.#segs[j] as SimpleCommand);
      if (c !== null) out.push({ what: c, from: j, auth: true });
    }
    return out;
  }

  /** What the `$(…)` in segment i's words read through the trail. */
  #substitutionTrail(i: number): Flow[] {
    return this.#feeders.substitutions(i).flatMap((j) => this.output(j));
  }

  #visit(i: number): void {
    const seg = this.#segs[i] as SimpleCommand;
    this.#feeders.pass(i);
    for (const v of this.#loopsAt.get(i) ?? []) this.#loop(v.name, v.words, v.from, v.at);
    if (isExecRedirect(seg)) {
      this.#fds.open(seg, (t) => {
        const c = credentialFile(t, this.#homes);
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
        ...stdinSecrets(redirectsOf(this.#segs, i), this.#homes).map((what) => ({ what, from: i })),
        ...this.stdin(i),
        ...this.#upstream(i),
        ...this.#substituted(i),
      ];
      const listed = listedFiles(
        this.#segs,
        [...this.#feeders.upstream(i), ...this.#feeders.substitutions(i)],
        this.#homes,
      );
      for (const name of readTargets(seg)) {
        this.#assign(name, input);
        if (listed !== null) this.#paths.set(name, `${listed} through the variable '$${name}'`);
      }
    }
    if (seg.program === 'printf' && seg.argv[1] === '-v' && seg.argv[2] !== undefined) {
      const v = seg.argv.slice(3).map((w) => this.#valueIn(w));
      this.#assign(seg.argv[2], [...v.filter((x): x is Flow => x !== null), ...this.#substituted(i)]);
    }
    if (isInterpreter(seg.program) && stdinSink(seg) !== null) this.#environment(i, seg);
    for (const a of seg.assignments) this.#assignment(i, a);
    this.#exported.observe(seg);
    if (seg.program === 'unset') for (const name of seg.argv.slice(1)) this.#assign(name, NONE);
    this.#writes(i, seg);
    const found = NETWORK_PROGRAMS.has(seg.program) ? foundSecretFiles(this.#segs, i, this.#homes) : null;
    if (found !== null) this.#args[i] = [...(this.#args[i] ?? []), { what: found }];
    if (seg.program === 'git') {
      this.#git.observe(i, seg, this.#query);
      const sent = this.#git.pushed(seg);
      if (sent !== null) this.#args[i] = [...(this.#args[i] ?? []), sent];
    }
    if (this.#functions.length > 0) this.#call(i, seg);
  }

  /** A call of a function defined before: its arguments become `$1`…, `$@`, and its body runs again here. */
  #call(i: number, seg: SimpleCommand): void {
    let def: FunctionDefinition | undefined;
    for (const f of this.#functions) if (f.name === seg.program && f.to <= this.#now) def = f;
    if (def === undefined || this.#calling.has(def.name) || this.#budget < def.to - def.from) return;
    const substituted = this.#substituted(i);
    const all: Flow[] = [];
    let anyNamed: string | null = null;
    for (let k = 1; k < seg.argv.length && k < 10; k++) {
      const w = seg.argv[k] as string;
      const secret = seg.dynamic.includes(k) ? [this.#valueIn(w), ...(/\$\(|`/.test(w) ? substituted : [])] : [];
      const flows = secret.filter((x): x is Flow => x !== null);
      this.#assign(String(k), flows, 'argument');
      all.push(...flows);
      const named = credentialFile(w, this.#homes) ?? this.#fileIn(w, false)?.what ?? null;
      if (named !== null) this.#paths.set(String(k), `${named} through the argument '$${k}'`);
      anyNamed ??= named;
    }
    for (const name of ['@', '*']) {
      this.#assign(name, all, 'arguments');
      if (anyNamed !== null) this.#paths.set(name, `${anyNamed} through the arguments '$${name}'`);
    }
    this.#calling.add(def.name);
    this.#budget -= Math.max(1, def.to - def.from);
    for (let j = def.from; j < def.to; j++) {
      this.#direct.delete(j);
      this.#visit(j);
    }
    this.#calling.delete(def.name);
  }

  /** Script code that talks to the network gets the exported variables and its own prefix assignments. */
  #environment(i: number, seg: SimpleCommand): void {
    const flows: Flow[] = [];
    for (const name of this.#exported.names()) {
      const v = this.#vars.get(name);
      if (v !== undefined && !v.auth) flows.push({ what: `${v.what} (in its environment)` });
    }
    for (const a of seg.assignments) {
      const v = this.#valueIn(a.value);
      flows.push(...(v === null ? [] : [v]), ...(/\$\(|`/.test(a.value) ? this.#substituted(i) : []));
    }
    if (flows.length > 0) this.#args[i] = [...(this.#args[i] ?? []), ...flows];
  }

  #assignment(i: number, a: SimpleCommand['assignments'][number]): void {
    this.#files.rebind(a.name, a.dynamic ? null : a.value);
    const secret: Secret[] = [];
    if (a.dynamic) {
      const v = this.#valueIn(a.value);
      if (v !== null) secret.push(v);
      if (/\$\(|`/.test(a.value)) secret.push(...this.#substituted(i), ...this.#printed(i));
    }
    this.#assign(a.name, secret);
    const named = credentialFile(a.value, this.#homes) ?? this.#fileIn(a.value, false)?.what ?? null;
    if (named !== null) this.#paths.set(a.name, `${named} through the variable '$${a.name}'`);
  }

  /** What segment i reads through the trail: its stdin, the files and variables in its words. */
  #reads(i: number, seg: SimpleCommand): void {
    const redirects = redirectsOf(this.#segs, i);
    const piped = seg.pipeline !== null && seg.pipeline.index > 0;
    const stdin: Flow[] = this.#fds.empty ? [] : this.#fds.reads({ ...seg, redirects }, piped);
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
    // script code that talks to the network sends what the shell expands into it
    const code = !network && isInterpreter(p) && stdinSink(seg) !== null;
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
        // a printed credential in a header or password option authenticates (as `$(gh auth token)` does)
        if ((network || code) && !(v.auth === true && authenticationValue(seg, k))) args.push(v);
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
        const f = this.#fileIn(w, recursive || ARCHIVERS.has(p));
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
    // a function body walked again for a call adds to what it found before
    if (stdin.length > 0) this.#in[i] = [...(this.#in[i] ?? []), ...stdin];
    if (out.length > 0) this.#out[i] = [...(this.#out[i] ?? []), ...out];
    if (args.length > 0) this.#args[i] = [...(this.#args[i] ?? []), ...args];
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
    if (!this.#fds.empty)
      for (const path of this.#fds.writes({ ...seg, redirects }, piped))
        targets.push({ path, tree: false, replaces: false, read: false });
    if (targets.length === 0) return;
    // (a redirect of a whole pipeline sits on every stage: only the first secret is looked for)
    const up = this.#feeders.first(i, (j) => this.#directOf(j).length > 0);
    const first = this.#directOf(i)[0] ?? (up === undefined ? undefined : this.#directOf(up)[0]);
    if (first === undefined && this.#files.size === 0) return;
    for (const t of targets) {
      const what = first === undefined ? null : `${label(first)} written to ${quote(t.path)}`;
      this.#files.write(t.path, what, t.tree, t.replaces, t.read);
    }
  }
}

/** The secrets that reach each segment through variables, written files and loops (nothing for most commands). */
export function traceSecrets(model: CommandModel, homes: KnownHomes): SecretTrail | undefined {
  return mayCarrySecrets(model) ? new Trail(model, homes) : undefined;
}
