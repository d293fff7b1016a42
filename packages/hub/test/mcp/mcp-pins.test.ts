import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { canonicalJson } from '@finger/protocol';

import { definitionHash, McpPinStore } from '../../src/runtime/mcp-pins.js';

describe('canonicalJson / definitionHash', () => {
  it('sorts keys at every level and drops undefined members', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, { z: 1, y: 2 }], c: undefined } })).toBe(
      '{"a":{"d":[1,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('is stable under key order and changes with the description, schemas or annotations', () => {
    const a = definitionHash({ name: 't', description: 'x', inputSchema: { type: 'object', properties: {} } });
    const b = definitionHash({ name: 'other', inputSchema: { properties: {}, type: 'object' }, description: 'x' });
    expect(a).toBe(b);
    expect(a).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(definitionHash({ name: 't', description: 'y', inputSchema: { type: 'object', properties: {} } })).not.toBe(
      a,
    );
    expect(definitionHash({ name: 't', description: 'x', inputSchema: { type: 'object' } })).not.toBe(a);
    const withAnn = definitionHash({
      name: 't',
      description: 'x',
      inputSchema: { type: 'object', properties: {} },
      annotations: { readOnlyHint: true },
    });
    expect(withAnn).not.toBe(a);
  });
});

describe('McpPinStore', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'finger-pins-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('persists pins per server; concurrent updates from two stores all land', async () => {
    const file = path.join(dir, 'state', 'mcp-pins.json');
    const s1 = new McpPinStore(file);
    const s2 = new McpPinStore(file);
    await Promise.all([
      s1.update('mcp.a', (p) => (p.t1 = { hash: 'sha256:1', pinned_at: 'x' })),
      s2.update('mcp.b', (p) => (p.t2 = { hash: 'sha256:2', pinned_at: 'y' })),
      s1.update('mcp.a', (p) => (p.t3 = { hash: 'sha256:3', pinned_at: 'z' })),
    ]);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      version: 1,
      servers: {
        'mcp.a': { t1: { hash: 'sha256:1', pinned_at: 'x' }, t3: { hash: 'sha256:3', pinned_at: 'z' } },
        'mcp.b': { t2: { hash: 'sha256:2', pinned_at: 'y' } },
      },
    });
    expect(await new McpPinStore(file).load('mcp.b')).toEqual({ t2: { hash: 'sha256:2', pinned_at: 'y' } });
    expect(await s1.load('mcp.none')).toEqual({});
  });

  it('refuses a corrupt file instead of re-pinning everything', async () => {
    const file = path.join(dir, 'pins.json');
    await writeFile(file, '{not json');
    await expect(new McpPinStore(file).load('mcp.a')).rejects.toMatchObject({ code: 'E_MODULE_UNHEALTHY' });
    await writeFile(file, '[]');
    await expect(new McpPinStore(file).update('mcp.a', () => undefined)).rejects.toMatchObject({
      code: 'E_MODULE_UNHEALTHY',
    });
  });

  it('keeps pins in memory without a file', async () => {
    const s = new McpPinStore(undefined);
    await s.update('mcp.a', (p) => (p.t = { hash: 'h', pinned_at: 'x' }));
    expect(await s.load('mcp.a')).toEqual({ t: { hash: 'h', pinned_at: 'x' } });
  });
});
