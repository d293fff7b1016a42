import { readFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { ERROR_CODE_LIST } from '@finger/protocol';

import { CLI_ERROR_CODES, EXIT, EXIT_BY_ERROR_CODE, exitCodeFor } from '../src/exit-codes.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('exit codes', () => {
  it('maps the classes of the brief', () => {
    expect(
      Object.fromEntries(
        [
          'E_BAD_HUB_SYNTAX',
          'E_UNAUTHENTICATED',
          'E_FORBIDDEN',
          'E_NO_TARGET',
          'E_TIMEOUT',
          'E_LEASE_EXPIRED',
          'E_MODULE_CRASHED',
          'E_HALTED',
          'E_CONFLICT',
          'E_INTERNAL',
          'E_DAEMON_NOT_RUNNING',
          'E_USAGE',
          'E_MODULE_SOMETHING_NEW',
          'E_UNKNOWN',
        ].map((c) => [c, exitCodeFor(c)]),
      ),
    ).toEqual({
      E_BAD_HUB_SYNTAX: 2,
      E_UNAUTHENTICATED: 4,
      E_FORBIDDEN: 4,
      E_NO_TARGET: 5,
      E_TIMEOUT: 6,
      E_LEASE_EXPIRED: 6,
      E_MODULE_CRASHED: 7,
      E_HALTED: 8,
      E_CONFLICT: 1,
      E_INTERNAL: 1,
      E_DAEMON_NOT_RUNNING: 3,
      E_USAGE: 2,
      E_MODULE_SOMETHING_NEW: 7,
      E_UNKNOWN: 1,
    });
  });

  it('only classifies registered codes', () => {
    for (const code of Object.keys(EXIT_BY_ERROR_CODE)) expect(ERROR_CODE_LIST).toContain(code);
  });

  it('README lists every exit code and every classified error code in its row', () => {
    const rows = new Map<number, string>();
    for (const line of readme.split('\n')) {
      const m = line.match(/^\|\s*(\d+)\s*\|(.*)$/);
      if (m) rows.set(Number(m[1]), m[2]!);
    }
    for (const exit of Object.values(EXIT)) expect(rows.has(exit)).toBe(true);
    for (const [code, exit] of Object.entries({ ...EXIT_BY_ERROR_CODE, ...CLI_ERROR_CODES })) {
      expect(rows.get(exit), `${code} → ${exit}`).toContain(code);
    }
  });
});
