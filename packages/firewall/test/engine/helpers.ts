// Shared fixtures of the policy, sandbox and engine tests: one RiskAssessor, the real tool
// metadata of the shipped fs and shell modules, temp dirs, and a facts builder.

import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach } from 'vitest';

import { RiskAssessor } from '@finger/shell-risk';

import type { ToolCallFacts } from '../../src/engine/evaluation.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');

let assessor: Promise<RiskAssessor> | undefined;
/** One RiskAssessor per test file (the grammar loads once). */
export function sharedAssessor(): Promise<RiskAssessor> {
  assessor ??= RiskAssessor.create();
  return assessor;
}

type Tool = ToolCallFacts['tool'];

function manifestTools(module: string): Map<string, Tool> {
  const m = JSON.parse(readFileSync(path.join(REPO, 'modules', module, 'module.json'), 'utf8')) as {
    id: string;
    tools: (Tool & { name: string })[];
  };
  return new Map(
    m.tools.map((t) => [
      `${m.id}.${t.name}`,
      {
        risk_level: t.risk_level,
        capability_level: t.capability_level,
        side_effects: t.side_effects,
        ...(t.permission !== undefined ? { permission: t.permission } : {}),
        ...(t.input_schema !== undefined ? { input_schema: t.input_schema } : {}),
      },
    ]),
  );
}

/** Metadata of every tool of the shipped modules, by tool id (`fs.write`, `shell.exec`, …). */
export const TOOLS: ReadonlyMap<string, Tool> = new Map([
  ...manifestTools('fs'),
  ...manifestTools('shell'),
  ...manifestTools('echo'),
  ...manifestTools('web'),
]);

/** The metadata of a shipped tool. */
export function tool(id: string): Tool {
  const t = TOOLS.get(id);
  if (t === undefined) throw new Error(`no tool ${id}`);
  return t;
}

/** Facts of an AI (agent) call of `tool_id`; override anything. */
export function facts(tool_id: string, args: unknown, over: Partial<ToolCallFacts> = {}): ToolCallFacts {
  return {
    tool_id,
    args,
    principal: { kind: 'agent', id: 'executor-1', roles: ['agent:executor'] },
    session_id: 's1',
    request_id: 'r1',
    correlation_id: 'c1',
    direct: false,
    tool: TOOLS.get(tool_id) ?? { risk_level: 'low', capability_level: 'L0', side_effects: false },
    ...over,
  };
}

/** A fresh temp dir (real path), removed by the returned cleanup. */
export function tempDir(label: string): { dir: string; cleanup: () => void } {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), `finger-${label}-`)));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A list of cleanups the test file pushes to; each runs (newest first, awaited) after every test. */
export function cleanupsAfterEach(): (() => unknown)[] {
  const list: (() => unknown)[] = [];
  afterEach(async () => {
    while (list.length > 0) await list.pop()!();
  });
  return list;
}
