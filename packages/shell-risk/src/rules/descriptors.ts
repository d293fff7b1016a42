// What `exec` redirections leave open for the rest of a command line: `exec 3< ~/.ssh/id_rsa` makes
// descriptor 3 read the key for every later command (`read -u 3 k`, `nc h 1 <&3`), `exec <
// secret` replaces the standard input of every later command that has no input of its own, and
// `exec > /tmp/k` (or `exec 4> /tmp/k` with `>&4`) sends later output to a file. Used by
// secret-flow.ts; descriptor numbers are followed, closing (`exec 3<&-`) forgets one.

import type { SimpleCommand } from '../command-model.js';
import type { Flow } from '../flow/exfiltration.js';

const OUTPUT_OPS = new Set(['>', '>>', '>|', '&>', '&>>']);

/** The descriptor a redirect names (its default: 0 for input, 1 for output). */
function fdOf(r: SimpleCommand['redirects'][number]): number {
  return r.fd ?? (r.op.startsWith('<') ? 0 : 1);
}

/** Whether the segment is a bare `exec` that only redirects (a lasting change of the shell's descriptors). */
export function isExecRedirect(seg: SimpleCommand): boolean {
  return seg.program === 'exec' && seg.argv.length === 1 && seg.redirects.length > 0;
}

/** The descriptors `exec` opened so far in a command line, with the secrets they read and the files they write. */
export class Descriptors {
  /** descriptor → the secret it reads */
  readonly #reads = new Map<number, Flow>();
  /** descriptor → the file it writes, as written */
  readonly #writes = new Map<number, string>();

  get empty(): boolean {
    return this.#reads.size === 0 && this.#writes.size === 0;
  }

  /** `exec` with redirects: each opens, duplicates or closes a descriptor. */
  open(seg: SimpleCommand, secretIn: (path: string) => Flow | null): void {
    for (const r of seg.redirects) {
      const fd = fdOf(r);
      this.#reads.delete(fd);
      this.#writes.delete(fd);
      if (r.op === '<' || r.op === '<>') {
        const s = secretIn(r.target);
        if (s !== null) this.#reads.set(fd, s);
      } else if (r.is_write) {
        this.#writes.set(fd, r.target);
      } else if (r.op === '<&' || r.op === '>&') {
        const from = Number(r.target);
        const s = this.#reads.get(from);
        const w = this.#writes.get(from);
        if (s !== undefined) this.#reads.set(fd, s);
        if (w !== undefined) this.#writes.set(fd, w);
      }
    }
  }

  /** The secrets a segment reads through open descriptors: `<&N`, `read -u N`, and a replaced stdin it does not override. */
  reads(seg: SimpleCommand, ownStdin: boolean): Flow[] {
    if (this.#reads.size === 0) return [];
    const out: Flow[] = [];
    let stdin = !ownStdin;
    for (const r of seg.redirects) {
      if (fdOf(r) !== 0) continue;
      if (r.op === '<&') {
        const s = this.#reads.get(Number(r.target));
        if (s !== undefined) out.push(s);
      }
      stdin = false;
    }
    const zero = this.#reads.get(0);
    if (stdin && zero !== undefined) out.push(zero);
    const u = seg.program === 'read' || seg.program === 'mapfile' || seg.program === 'readarray';
    if (u) {
      for (let k = 1; k < seg.argv.length; k++) {
        const m = /^-[a-zA-Z]*u(\d*)$/.exec(seg.argv[k] as string);
        if (m === null) continue;
        const s = this.#reads.get(Number(m[1] === '' ? seg.argv[k + 1] : m[1]));
        if (s !== undefined) out.push(s);
      }
    }
    return out;
  }

  /** The files a segment's output reaches through open descriptors: `>&N`, and a replaced stdout it does not override. */
  writes(seg: SimpleCommand, ownStdout: boolean): string[] {
    if (this.#writes.size === 0) return [];
    const out: string[] = [];
    let stdout = !ownStdout;
    for (const r of seg.redirects) {
      const fd = fdOf(r);
      if (r.op === '>&' && !r.is_write) {
        const w = this.#writes.get(Number(r.target));
        if (w !== undefined) out.push(w);
      }
      if (fd === 1 && (OUTPUT_OPS.has(r.op) || r.op === '>&')) stdout = false;
    }
    const one = this.#writes.get(1);
    if (stdout && one !== undefined) out.push(one);
    return out;
  }
}
