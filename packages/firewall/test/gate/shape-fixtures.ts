// Shape facts for the gate tests: the real RiskAssessor's command models, a workspace `/work` and
// a fake file system of real paths (a symlink out of the workspace included).

import type { Principal } from '@finger/protocol';

import { createShapeResolver, RiskAssessor, type ShapeResolver } from '../../src/index.js';

/** The workspace root of the fixtures. */
export const WS = '/work';

/** Real paths of the fake file system: `/work/src/link` leads out of the workspace. */
const LINKS: Record<string, string> = { '/work/src/link': '/etc/outside' };
const EXISTING = new Set(['/', '/work', '/work/src', '/work/src/lib', '/etc', '/etc/outside', '/home', '/home/u']);

/** realpath over the fake file system: throws for a path that does not exist. */
export function fakeRealpath(p: string): string {
  for (const [from, to] of Object.entries(LINKS)) {
    if (p === from || p.startsWith(`${from}/`)) return fakeRealpath(to + p.slice(from.length));
  }
  if (EXISTING.has(p)) return p;
  throw Object.assign(new Error(`ENOENT ${p}`), { code: 'ENOENT' });
}

let assessor: RiskAssessor | undefined;

/** A ShapeResolver over the real RiskAssessor, roots [`/work`], the fake file system. */
export async function shapeResolver(): Promise<ShapeResolver> {
  assessor ??= await RiskAssessor.create({ cacheSize: 0, home_dir: '/home/u' });
  const a = assessor;
  return createShapeResolver({
    assess: (command, context) => a.assess(command, context),
    sandbox: {
      commandCwd: () => WS,
      workspaceOf: (_p: Principal | undefined) => undefined,
      baseFor: () => WS,
      defaultRoots: [WS],
    },
    isShellTool: (id) => id === 'shell.exec',
    realpath: fakeRealpath,
    homeDir: '/home/u',
  });
}

/** The principal of gate-fixtures.ts facts(). */
export const EXECUTOR_PRINCIPAL: Principal = { kind: 'agent', id: 'executor-1', roles: ['agent:executor'] };
