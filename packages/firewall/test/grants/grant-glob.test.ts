import { describe, expect, it } from 'vitest';

import { compileGrantGlob, grantRole } from '../../src/index.js';

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    return (e as { code?: string }).code;
  }
  return undefined;
}

describe('grant globs', () => {
  it('treat the dots of tool ids as separators: fs.* matches fs.write, not fsx.write', () => {
    const fs = compileGrantGlob('fs.*');
    expect(['fs.write', 'fs.read', 'fsx.write', 'fs.a.b', 'xfs.write', 'fs'].filter(fs)).toEqual([
      'fs.write',
      'fs.read',
    ]);
  });

  it('match MCP ids by server with mcp.files.*, and across segments with **', () => {
    const files = compileGrantGlob('mcp.files.*');
    expect(
      ['mcp.files.read_file', 'mcp.files.write_file', 'mcp.other.read_file', 'mcp.filesx.read'].filter(files),
    ).toEqual(['mcp.files.read_file', 'mcp.files.write_file']);
    expect(['mcp.files.read_file', 'mcp.x.y', 'fs.read'].filter(compileGrantGlob('mcp.**'))).toEqual([
      'mcp.files.read_file',
      'mcp.x.y',
    ]);
    expect(['fs.read', 'mcp.files.read_file'].filter(compileGrantGlob('**'))).toEqual([
      'fs.read',
      'mcp.files.read_file',
    ]);
    expect(compileGrantGlob('*')('fs.read')).toBe(false);
  });

  it('support exact ids, ?, braces and brackets', () => {
    expect(compileGrantGlob('fs.read')('fs.read')).toBe(true);
    expect(compileGrantGlob('fs.read')('fs.readx')).toBe(false);
    expect(['fs.read', 'fs.list', 'fs.stat'].filter(compileGrantGlob('fs.{read,list}'))).toEqual([
      'fs.read',
      'fs.list',
    ]);
    expect(['web.a', 'web.ab'].filter(compileGrantGlob('web.?'))).toEqual(['web.a']);
    expect(['a.x1', 'a.x2', 'a.x3'].filter(compileGrantGlob('a.x[12]'))).toEqual(['a.x1', 'a.x2']);
  });

  it('refuse negation, extglobs, slashes and empty globs with E_INVALID_ARGS', () => {
    for (const bad of ['!fs.*', 'fs.@(read)', 'fs/read', '', 'fs read', '\\fs']) {
      expect(codeOf(() => compileGrantGlob(bad))).toBe('E_INVALID_ARGS');
    }
  });

  it('normalise agent roles and refuse bad role names', () => {
    expect(grantRole('agent:executor')).toBe('executor');
    expect(grantRole('reviewer')).toBe('reviewer');
    expect(grantRole('module:fs')).toBe('module:fs');
    for (const bad of ['', 'Exec', 'a b', 'agent:', '1x']) expect(codeOf(() => grantRole(bad))).toBe('E_INVALID_ARGS');
  });
});
