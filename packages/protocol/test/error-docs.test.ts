import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { ERROR_CODE_LIST, ERROR_CODES } from '@finger/protocol';

// docs/errors.md and the registry in src/error-codes.ts must say the same thing (STYLE.md
// "Errors": one registry file, a test keeps it and the docs identical).

const DOC = fileURLToPath(new URL('../../../docs/errors.md', import.meta.url));
const HEADER = ['code', 'HTTP', 'retryable', 'thrown when'];

interface DocRow {
  code: string;
  status: number;
  retryable: boolean;
  when: string;
}

/** Splits a Markdown table row on unescaped `|`; `\|` inside a cell stands for a literal pipe. */
function cells(line: string): string[] {
  const inner = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  return inner.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

/** The rows of the first table whose header is exactly `code | HTTP | retryable | thrown when`. */
function parseErrorTable(markdown: string): DocRow[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim().startsWith('|') && JSON.stringify(cells(l)) === JSON.stringify(HEADER));
  if (start < 0) throw new Error(`docs/errors.md has no table with the header | ${HEADER.join(' | ')} |`);
  const sep = cells(lines[start + 1] ?? '');
  if (sep.length !== HEADER.length || !sep.every((c) => /^:?-{3,}:?$/.test(c))) {
    throw new Error('docs/errors.md: the error table header is not followed by a separator row');
  }
  const rows: DocRow[] = [];
  for (let i = start + 2; i < lines.length && lines[i]!.trim().startsWith('|'); i++) {
    const c = cells(lines[i]!);
    if (c.length !== 4) throw new Error(`docs/errors.md line ${i + 1}: expected 4 cells, got ${c.length}`);
    const [code, status, retryable, when] = c as [string, string, string, string];
    const m = /^`(E_[A-Z0-9_]+)`$/.exec(code);
    if (!m) throw new Error(`docs/errors.md line ${i + 1}: code cell must be \`E_…\`, got ${code}`);
    if (!/^\d{3}$/.test(status)) throw new Error(`docs/errors.md line ${i + 1}: HTTP must be a status, got ${status}`);
    if (retryable !== 'yes' && retryable !== 'no')
      throw new Error(`docs/errors.md line ${i + 1}: retryable must be yes or no, got ${retryable}`);
    rows.push({ code: m[1]!, status: Number(status), retryable: retryable === 'yes', when });
  }
  return rows;
}

describe('docs/errors.md', () => {
  const rows = parseErrorTable(readFileSync(DOC, 'utf8'));
  const registry: DocRow[] = ERROR_CODE_LIST.map((code) => ({
    code,
    status: ERROR_CODES[code].status,
    retryable: ERROR_CODES[code].retryable,
    when: ERROR_CODES[code].when,
  }));

  it('lists exactly the registry, row for row, in registry order', () => {
    expect(rows).toEqual(registry);
  });

  it('documents every registered code (registry → doc)', () => {
    const documented = new Set(rows.map((r) => r.code));
    expect(ERROR_CODE_LIST.filter((c) => !documented.has(c))).toEqual([]);
  });

  it('documents no code the registry lacks (doc → registry)', () => {
    expect(rows.map((r) => r.code).filter((c) => !(c in ERROR_CODES))).toEqual([]);
  });

  it('lists each code once', () => {
    expect(new Set(rows.map((r) => r.code)).size).toBe(rows.length);
  });

  it('parses escaped pipes in cells', () => {
    expect(cells('| `E_X` | 400 | no | a \\| b |')).toEqual(['`E_X`', '400', 'no', 'a | b']);
  });
});
