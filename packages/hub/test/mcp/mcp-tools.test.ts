import { describe, expect, it } from 'vitest';

import { annotationRisk, type McpToolAnnotations, mcpToolSpec, toDefinition } from '../../src/runtime/mcp-tools.js';

describe('annotationRisk (§3.3, worst-case defaults)', () => {
  it.each<[McpToolAnnotations | undefined, string]>([
    [undefined, 'high'],
    [{}, 'high'],
    [{ readOnlyHint: true, openWorldHint: false }, 'low'],
    [{ readOnlyHint: true }, 'medium'],
    [{ readOnlyHint: true, openWorldHint: true }, 'medium'],
    [{ readOnlyHint: false, destructiveHint: false }, 'medium'],
    [{ destructiveHint: false, openWorldHint: false }, 'medium'],
    [{ readOnlyHint: false }, 'high'],
    [{ readOnlyHint: false, destructiveHint: true, openWorldHint: false }, 'high'],
    [{ idempotentHint: true, openWorldHint: false }, 'high'],
  ])('%o → %s', (a, risk) => {
    expect(annotationRisk(a)).toBe(risk);
  });
});

describe('mcpToolSpec', () => {
  const readOnly = {
    name: 'read_file',
    description: 'Reads a file.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
    annotations: { readOnlyHint: true, openWorldHint: false, idempotentHint: true },
  };

  it('uses the annotations of a trusted server', () => {
    expect(mcpToolSpec(readOnly, { trusted: true, timeout_ms: 5000 })).toEqual({
      name: 'read_file',
      description: 'Reads a file.',
      input_schema: readOnly.inputSchema,
      risk_level: 'low',
      capability_level: 'L0',
      side_effects: false,
      idempotent: true,
      timeout_ms: 5000,
    });
  });

  it('never goes below high, L2, side effects, not idempotent for an untrusted server', () => {
    expect(mcpToolSpec(readOnly, { trusted: false })).toEqual({
      name: 'read_file',
      description: 'Reads a file.',
      input_schema: readOnly.inputSchema,
      risk_level: 'high',
      capability_level: 'L2',
      side_effects: true,
      idempotent: false,
    });
  });

  it('a trusted tool without annotations is the worst case; only idempotentHint: true is idempotent', () => {
    expect(mcpToolSpec({ name: 'x' }, { trusted: true })).toMatchObject({
      risk_level: 'high',
      capability_level: 'L2',
      side_effects: true,
      idempotent: false,
      input_schema: { type: 'object' },
      description: '',
    });
    expect(mcpToolSpec({ name: 'x', annotations: { idempotentHint: false } }, { trusted: true }).idempotent).toBe(
      false,
    );
  });

  it("drops the top-level $schema (2020-12 is MCP's default dialect) from the registered schemas", () => {
    const dialect = 'https://json-schema.org/draft/2020-12/schema';
    const spec = mcpToolSpec(
      {
        name: 'x',
        inputSchema: { $schema: dialect, type: 'object' },
        outputSchema: { $schema: dialect, type: 'object' },
      },
      { trusted: false },
    );
    expect(spec.input_schema).toEqual({ type: 'object' });
    expect((spec.output_schema?.properties as Record<string, unknown>).structuredContent).toEqual({ type: 'object' });
  });

  it('describes structuredContent with the output schema', () => {
    const out = { type: 'object', properties: { n: { type: 'number' } } };
    expect(mcpToolSpec({ name: 'x', outputSchema: out }, { trusted: false }).output_schema).toEqual({
      type: 'object',
      required: ['content', 'structuredContent'],
      properties: { content: { type: 'array' }, structuredContent: out },
    });
  });
});

describe('toDefinition', () => {
  it('keeps the known fields and drops junk', () => {
    expect(
      toDefinition({
        name: 't',
        title: 'T',
        description: 'd',
        inputSchema: { type: 'object' },
        outputSchema: [],
        annotations: { readOnlyHint: 'yes', openWorldHint: false, extra: 1 },
        other: true,
      }),
    ).toEqual({
      name: 't',
      title: 'T',
      description: 'd',
      inputSchema: { type: 'object' },
      annotations: { openWorldHint: false },
    });
    expect(toDefinition({ description: 'no name' })).toBeNull();
    expect(toDefinition('x')).toBeNull();
  });
});
