import { afterEach, describe, expect, it } from 'vitest';

import type { RiskLevel, ToolSpec } from '@finger/protocol';

import { firstSentence, MessageHub } from '../../src/index.js';
import { manifest, objectRuntimes, rejectionOf } from '../helpers.js';

const hubs: MessageHub[] = [];
afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close(100)));
});

const RISKS: RiskLevel[] = ['critical', 'low', 'medium', 'high'];
const LEVEL = { low: 'L0', medium: 'L1', high: 'L2', critical: 'L2' } as const;
const COST = { low: 40, medium: 50, high: 60, critical: 70 } as const;

/** 40 tools `kit.tool01`…`kit.tool40`, risk round-robin, cost by risk (10 × (40+50+60+70) = 2,200 tokens). */
function fortyTools(declareCost = true): (Partial<ToolSpec> & { name: string })[] {
  return Array.from({ length: 40 }, (_, k) => {
    const i = k + 1;
    const risk = RISKS[i % 4]!;
    const t: Partial<ToolSpec> & { name: string } = {
      name: `tool${String(i).padStart(2, '0')}`,
      description: `Does thing number ${i} to the workspace. Longer explanation that the summary leaves out.`,
      input_schema: { type: 'object', required: ['path'], properties: { path: { type: 'string' } } },
      risk_level: risk,
      capability_level: LEVEL[risk],
      side_effects: risk !== 'low',
    };
    if (declareCost) t.context_cost = COST[risk];
    return t;
  });
}

async function hubWith(tools: (Partial<ToolSpec> & { name: string })[]) {
  const mods = { kit: { tools: Object.fromEntries(tools.map((t) => [t.name, () => null])) } };
  const hub = new MessageHub({ createRuntime: objectRuntimes(mods) });
  hubs.push(hub);
  await hub.registry.register(manifest('kit', tools), { baseDir: '.' });
  return hub;
}

describe('capability snapshot', () => {
  it('fits 40 tools into a 2,000-token budget by dropping the lowest-priority ones, named', async () => {
    const hub = await hubWith(fortyTools());
    const ids = hub.tools.list().map((t) => t.id);
    expect(ids).toHaveLength(40);
    const snap = hub.tools.snapshot({ tool_ids: ids, budget_tokens: 2000 });
    // low (10×40) + medium (10×50) + high (10×60) = 1,500; 7 critical (7×70) bring it to 1,990
    expect(snap.dropped).toEqual(['kit.tool32', 'kit.tool36', 'kit.tool40']);
    expect(snap.unknown).toEqual([]);
    expect(snap.used_tokens).toBe(1990);
    expect(snap.budget_tokens).toBe(2000);
    expect(snap.tools).toHaveLength(37);
    expect(snap.tools.reduce((n, s) => n + s.context_cost, 0)).toBe(snap.used_tokens);
    expect(snap.used_tokens).toBeLessThanOrEqual(2000);
    // lower risk and L0 first
    expect(snap.tools.slice(0, 3).map((s) => s.id)).toEqual(['kit.tool01', 'kit.tool05', 'kit.tool09']);
    expect(snap.tools[0]).toEqual({
      id: 'kit.tool01',
      purpose: 'Does thing number 1 to the workspace.',
      constraints: ['requires path', 'L0 read-only', 'no side effects'],
      risk: 'low',
      context_cost: 40,
    });
    expect(snap.tools.find((s) => s.id === 'kit.tool04')).toEqual({
      id: 'kit.tool04',
      purpose: 'Does thing number 4 to the workspace.',
      constraints: ['requires path', 'L2 exec/network', 'side effects'],
      risk: 'critical',
      context_cost: 70,
    });
  });

  it('estimates undeclared costs as ceil(JSON length / 4) and follows a caller priority', async () => {
    const hub = await hubWith(fortyTools(false));
    const ids = hub.tools.list().map((t) => t.id);
    // the caller prefers high numbers: tool40 first, tool01 last
    const snap = hub.tools.snapshot({ tool_ids: ids, budget_tokens: 1000, priority: (id) => Number(id.slice(-2)) });
    for (const s of snap.tools) {
      const { context_cost, ...body } = s;
      expect(context_cost).toBe(Math.ceil(JSON.stringify(body).length / 4));
    }
    expect(snap.used_tokens).toBe(snap.tools.reduce((n, s) => n + s.context_cost, 0));
    expect(snap.used_tokens).toBeLessThanOrEqual(1000);
    expect(snap.tools.length + snap.dropped.length).toBe(40);
    expect(snap.dropped.length).toBeGreaterThan(0);
    const kept = snap.tools.map((s) => Number(s.id.slice(-2)));
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, k) => 40 - k));
    expect(snap.dropped).toEqual(
      Array.from({ length: snap.dropped.length }, (_, k) => `kit.tool${String(40 - kept.length - k).padStart(2, '0')}`),
    );
  });

  it('names unknown ids apart, deduplicates, resolves short names, refuses a bad budget', async () => {
    const hub = await hubWith(fortyTools().slice(0, 2));
    const snap = hub.tools.snapshot({
      tool_ids: ['tool01', 'kit.tool01', 'kit.nope', 'kit.tool02'],
      budget_tokens: 40,
    });
    expect(snap.tools.map((s) => s.id)).toEqual(['kit.tool01']);
    expect(snap.dropped).toEqual(['kit.tool02']);
    expect(snap.unknown).toEqual(['kit.nope']);
    const e = await rejectionOf(Promise.resolve().then(() => hub.tools.snapshot({ tool_ids: [], budget_tokens: -1 })));
    expect(e.code).toBe('E_INVALID_ARGS');
  });

  it('takes the first sentence of a description as the purpose, at most 160 characters', () => {
    expect(firstSentence('Reads a file. Returns its bytes.')).toBe('Reads a file.');
    expect(firstSentence('Returns the arguments unchanged, e.g. {"text":"hi"} → {"text":"hi"}.')).toBe(
      'Returns the arguments unchanged, e.g. {"text":"hi"} → {"text":"hi"}.',
    );
    expect(firstSentence('  Multi\n  line   text without a stop')).toBe('Multi line text without a stop');
    const long = firstSentence(`${'word '.repeat(60)}end.`);
    expect(long).toHaveLength(160);
    expect(long.endsWith('…')).toBe(true);
  });
});
