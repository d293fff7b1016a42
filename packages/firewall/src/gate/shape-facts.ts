// The I/O half of call shapes: turns a held call into the ShapeFacts that call-shape.ts judges —
// the RiskAssessor's command model (as the engine made it: from the call's own directory), the
// real paths of its path arguments and the caller's real workspace roots. The gate asks it once
// per hold (to offer a shape, and to look for a standing approval).

import { realpathSync } from 'node:fs';
import path from 'node:path';

import type { Principal } from '@finger/protocol';
import type { AssessContext, RiskAssessment } from '@finger/shell-risk';

import { isPathArg, pathValues } from '../sandbox/path-args.js';
import type { ShapeFacts, ShapePath } from './call-shape.js';

/** What the resolver needs (the RiskAssessor, the PathSandbox and the policy satisfy it). */
export interface ShapeResolverOptions {
  assess(command: string | readonly string[], context?: AssessContext): RiskAssessment;
  sandbox: {
    commandCwd(args: unknown, principal?: Principal): string | null | undefined;
    workspaceOf(principal: Principal | undefined): string | undefined;
    baseFor(principal: Principal | undefined): string | undefined;
    readonly defaultRoots: readonly string[];
  };
  /** Whether the tool's `command`/`argv` is a shell command (the admin policy's `shell.tools`). */
  isShellTool(tool_id: string): boolean;
  /** Real path of an existing path (default `fs.realpathSync.native`); throws when it does not exist. */
  realpath?: (p: string) => string;
  homeDir?: string;
}

/** Resolves a call's shape facts (see the file comment). */
export interface ShapeResolver {
  facts(call: {
    tool_id: string;
    args: unknown;
    principal: Principal;
    tool?: { input_schema?: Record<string, unknown> };
  }): ShapeFacts;
  /** The caller's workspace (real path): a task's own root, else the first workspace root. */
  workspaceOf(principal: Principal): string | undefined;
}

function commandOf(args: unknown): string | readonly string[] | undefined {
  if (typeof args !== 'object' || args === null) return undefined;
  const a = args as Record<string, unknown>;
  if (typeof a.command === 'string') return a.command;
  if (Array.isArray(a.argv) && a.argv.length > 0 && a.argv.every((x) => typeof x === 'string')) return a.argv;
  return undefined;
}

/** Builds a {@link ShapeResolver}. */
export function createShapeResolver(o: ShapeResolverOptions): ShapeResolver {
  const real = o.realpath ?? ((p: string) => realpathSync.native(p));
  /** The real path of `p`: its nearest existing ancestor's real path plus the rest; null when unsure. */
  const realOf = (p: string): string | null => {
    let head = p;
    const rest: string[] = [];
    for (let i = 0; i < 4096; i++) {
      try {
        return path.join(real(head), ...rest.reverse());
      } catch {
        const up = path.dirname(head);
        if (up === head) return null;
        rest.push(path.basename(head));
        head = up;
      }
    }
    return null;
  };
  const roots = (principal: Principal): string[] => {
    const own = o.sandbox.workspaceOf(principal);
    const out: string[] = [];
    for (const r of [...(own !== undefined ? [own] : []), ...o.sandbox.defaultRoots]) {
      const rr = realOf(r);
      if (rr !== null && !out.includes(rr)) out.push(rr);
    }
    return out;
  };
  return {
    facts({ tool_id, args, principal, tool }) {
      const f: ShapeFacts = { tool_id, args, roots: roots(principal) };
      const rec =
        typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
      const command = o.isShellTool(tool_id) ? commandOf(args) : undefined;
      if (command !== undefined) {
        // a shell call whose stdin or environment changes what runs has no shape: it is asked every time
        if (rec.stdin !== undefined || rec.env !== undefined) {
          f.command = { segments: [], flags: {} as never, notes: [], unparseable: 'stdin or env' };
          return f;
        }
        const cwd = o.sandbox.commandCwd(args, principal);
        if (cwd === null) {
          f.command = { segments: [], flags: {} as never, notes: [], unparseable: 'cwd' };
          return f;
        }
        f.command = o.assess(command, { cwd }).model;
        return f;
      }
      const paths: ShapePath[] = [];
      const base = o.sandbox.baseFor(principal);
      for (const [k, v] of Object.entries(rec)) {
        if (!isPathArg(k, tool?.input_schema)) continue;
        for (const raw of pathValues(v)) {
          // `..` is resolved lexically by path.resolve but physically by the kernel: never guess
          if (raw.split('/').includes('..') || raw.includes('\0')) {
            paths.push({ arg: k, path: null });
            continue;
          }
          const expanded =
            raw === '~' || raw.startsWith('~/') ? (o.homeDir !== undefined ? o.homeDir + raw.slice(1) : null) : raw;
          if (expanded === null || (!path.isAbsolute(expanded) && base === undefined)) {
            paths.push({ arg: k, path: null });
            continue;
          }
          paths.push({ arg: k, path: realOf(path.resolve(base ?? '/', expanded)) });
        }
      }
      f.paths = paths;
      return f;
    },
    workspaceOf(principal) {
      return roots(principal)[0];
    },
  };
}
