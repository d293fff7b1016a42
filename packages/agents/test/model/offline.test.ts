import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { runGuardrail } from '../../src/guardrail/json-guardrail.js';
import { OfflineAdapter, type OfflineCatalog, OfflineRouter, type OfflineTool } from '../../src/model/offline.js';

/** The tools of the real built-in modules, from their manifests. */
function builtinTools(): OfflineTool[] {
  const root = fileURLToPath(new URL('../../../../modules/', import.meta.url));
  const tools: OfflineTool[] = [];
  for (const dir of readdirSync(root)) {
    const m = JSON.parse(readFileSync(join(root, dir, 'module.json'), 'utf8')) as {
      id: string;
      tools: { name: string; description: string; input_schema?: Record<string, unknown> }[];
    };
    for (const t of m.tools) {
      tools.push({
        id: `${m.id}.${t.name}`,
        module: m.id,
        description: t.description,
        ...(t.input_schema ? { input_schema: t.input_schema } : {}),
      });
    }
  }
  return tools;
}

const catalog: OfflineCatalog = {
  tools: builtinTools(),
  agents: [{ id: 'planner', description: 'Breaks a goal into steps and runs them.' }],
};
const router = new OfflineRouter();

describe('OfflineRouter', () => {
  it('"echo hello" → dispatch_module echo with {text: "hello"}', () => {
    expect(router.route('echo hello', catalog)).toEqual({
      decision: 'dispatch_module',
      target: 'echo',
      confidence: 0.9,
      reason: 'offline router: input matches "echo"',
      payload: { text: 'hello' },
      requires_human: false,
    });
  });

  it('gibberish → ask_human, no target, requires_human', () => {
    const d = router.route('xyzzy plugh qwertyuiop', catalog);
    expect(d).toMatchObject({ decision: 'ask_human', target: null, confidence: 0, requires_human: true });
    expect(d.payload).toEqual({ text: 'xyzzy plugh qwertyuiop', candidates: [] });
  });

  it('a tool id gets the single required string property: fs.read README.md → {path}', () => {
    expect(router.route('fs.read README.md', catalog)).toMatchObject({
      decision: 'dispatch_module',
      target: 'fs.read',
      confidence: 1,
      payload: { path: 'README.md' },
    });
  });

  it('module id plus tool name names the tool: "web fetch https://example.com/"', () => {
    expect(router.route('web fetch https://example.com/', catalog)).toMatchObject({
      decision: 'dispatch_module',
      target: 'web.fetch',
      payload: { url: 'https://example.com/' },
    });
  });

  it('a tool needing several arguments → ask_human naming them', () => {
    expect(router.route('fs.write notes.txt', catalog)).toMatchObject({
      decision: 'ask_human',
      target: null,
      reason: 'offline router: "fs.write" needs path, content',
    });
  });

  it('two tools matching equally → ask_human, never first wins', () => {
    const d = router.route('read', catalog);
    expect(d.decision).toBe('ask_human');
    expect(d.reason).toMatch(/match equally/);
  });

  it('description overlap alone stays below the threshold → ask_human with candidates', () => {
    const d = router.route('workspace root files', catalog);
    expect(d.decision).toBe('ask_human');
    expect((d.payload.candidates as { target: string }[])[0]?.target).toMatch(/^fs\./);
    expect(d.confidence).toBeLessThan(0.5);
  });

  it('an agent named by id → dispatch_agent with the rest as text', () => {
    expect(router.route('planner tidy the workspace', catalog)).toMatchObject({
      decision: 'dispatch_agent',
      target: 'planner',
      payload: { text: 'tidy the workspace' },
    });
  });

  it('min_confidence is configurable: a tool name alone passes at 0.4', () => {
    expect(new OfflineRouter({ min_confidence: 0.4 }).route('fetch https://example.com/', catalog)).toMatchObject({
      decision: 'dispatch_module',
      target: 'web.fetch',
      payload: { url: 'https://example.com/' },
    });
  });

  it('an empty catalog → ask_human', () => {
    expect(router.route('echo hello', { tools: [] }).decision).toBe('ask_human');
  });
});

describe('OfflineAdapter', () => {
  const adapter = new OfflineAdapter({ catalog: () => catalog });

  it('answers the last user message with decision JSON the guardrail accepts', async () => {
    const result = await adapter.complete({
      messages: [
        { role: 'system', content: 'route this' },
        { role: 'user', content: 'echo hello' },
      ],
    });
    expect(result).toMatchObject({
      usage: { input_tokens: 0, output_tokens: 0 },
      model: 'offline-router',
      attempts: 1,
    });
    const outcome = runGuardrail(result.text, { agents: ['planner'], modules: ['echo', 'fs.read'], high_risk: [] });
    expect(outcome).toMatchObject({
      outcome: 'ok',
      decision: { decision: 'dispatch_module', target: 'echo', payload: { text: 'hello' }, requires_human: false },
    });
  });

  it('an aborted signal → E_HALTED', async () => {
    await expect(
      adapter.complete({ messages: [{ role: 'user', content: 'echo hi' }] }, { signal: AbortSignal.abort('E_HALTED') }),
    ).rejects.toMatchObject({ code: 'E_HALTED' });
  });
});
