// The words of the secret-flow pass: which variables a word expands, which file a network
// command's file word names, and how a secret's way through the command is described.

import type { Flow } from './exfiltration.js';

const VARIABLE_REF = /\$\{?[#!]?([A-Za-z_][A-Za-z0-9_]*|[0-9@*])/g;
/** A reason names at most this much of a secret's path through the command. */
const MAX_WHAT = 240;

/** A word quoted for a reason, shortened past 80 characters. */
export function quote(s: string): string {
  return `'${s.length > 80 ? `${s.slice(0, 77)}…` : s}'`;
}

/** "the credential file '…' (segment 1)": a flow described with where it was read. */
export function label(f: Flow): string {
  const what = f.from === undefined ? f.what : `${f.what} (segment ${f.from + 1})`;
  return what.length > MAX_WHAT ? `${what.slice(0, MAX_WHAT - 1)}…` : what;
}

/** The variables a word expands (`$K`, `${K}`, `${#K}`, `$1`, `$@`). */
export function refs(text: string): string[] {
  if (!text.includes('$')) return [];
  return [...text.matchAll(VARIABLE_REF)].map((m) => m[1] as string);
}

/** The path a file word of a network command names (`@f`, `<f`, `name=@f` as curl takes them). */
export function fileOf(candidate: string): string {
  const at = candidate.indexOf('=@');
  if (at >= 0) return candidate.slice(at + 2);
  return candidate.startsWith('@') || candidate.startsWith('<') ? candidate.slice(1) : candidate;
}
