import { createHash } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { type AuditRecord, draftEntry, GENESIS_HASH, sealedEntry, sealEntry } from '../../src/audit/audit-entry.js';
import { canonicalJson } from '../../src/audit/canonical-json.js';

const TS = '2026-11-29T12:00:00.000Z';

/** Records whose lines differ in every part the draft builds: nulls, details, escapes, a long verdict. */
const RECORDS: AuditRecord[] = [
  { type: 'halt' },
  {
    type: 'tool.call',
    actor: { kind: 'human', id: 'op' },
    request_id: '01M8KH29RASCNWBV59273SDT0T',
    correlation_id: '01M8KH29RASCNWBV59273SDT0S',
    tool: 'echo.echo',
    args: { text: 'hello' },
    verdict: {
      decision_id: '01M8KH29RASCNWBV59273SDT0X',
      level: 'AUTO',
      action: 'allow',
      layer: 'default',
      matched_rules: [{ source: 'builtin', id: 'tool.risk_level', level: 'AUTO', reason: 'tool default' }],
      reasons: ['AUTO: tool default'],
    },
    decision: 'allow',
  },
  {
    type: 'approval.resolved',
    actor: { kind: 'agent', id: 'a "quoted"\nid\u00e9' },
    request_id: 'r\\1',
    tool: 'fs.write',
    result: ['x'.repeat(300)],
    verdict: { preview: { kind: 'diff', text: 'secret' }, reasons: ['y'.repeat(500)] },
    decision: 'approve',
    details: { reason: 'ok', nested: { b: 2, a: [1, null] } },
  },
];

describe('sealEntry', () => {
  it('writes the canonical JSON of the sealed entry and hashes it without `hash`, after prev_hash', () => {
    let prev = GENESIS_HASH;
    for (let i = 0; i < RECORDS.length; i++) {
      const draft = draftEntry(RECORDS[i]!, TS);
      const { hash, line } = sealEntry(draft, i + 1, prev);
      const entry = sealedEntry(draft, i + 1, prev, hash);
      const { hash: _hash, ...rest } = entry;
      expect(hash).toBe(
        createHash('sha256')
          .update(prev + canonicalJson(rest))
          .digest('hex'),
      );
      expect(line).toBe(`${canonicalJson(entry)}\n`);
      prev = hash;
    }
  });
});
