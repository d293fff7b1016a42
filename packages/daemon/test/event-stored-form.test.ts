import { describe, expect, it } from 'vitest';

import type { FingerEvent } from '@finger/protocol';

import { eventStoredLine, storedEvent } from '../src/event-stored-form.js';

function ev(type: FingerEvent['type'], data: Record<string, unknown>): FingerEvent {
  return {
    id: '01K0000000000000000000000A',
    type,
    ts: '2026-11-29T10:00:00.000Z',
    request_id: 'r1',
    correlation_id: 'c1',
    session_id: '',
    workflow_id: '',
    target: 'fs.write',
    data,
  };
}

const approval = {
  id: 'ap1',
  tool_id: 'fs.write',
  args: { path: '/etc/motd', content: 'SECRET' },
  level: 'CONFIRM',
  evaluation: { reasons: ['why'], args: { content: 'SECRET' }, preview: { kind: 'diff', text: '+SECRET' } },
  binding: { args_digest: 'd'.repeat(64) },
};

describe('eventStoredLine', () => {
  it('keeps every other event as the very line subscribers got', () => {
    const e = ev('DISPATCH_RESULT', { ok: true, note: '"type":"APPROVAL_REQUESTED"' });
    const line = JSON.stringify(e);
    expect(eventStoredLine(e, line)).toBe(line);
    // another daemon's event, as JSON only: a line that merely mentions the type is parsed and kept as it was
    expect(eventStoredLine(undefined, line)).toBe(line);
    expect(eventStoredLine(undefined, 'not json "type":"INPUT_RECEIVED"')).toBe('not json "type":"INPUT_RECEIVED"');
  });

  it('drops a held call’s arguments and preview, from an event object or from JSON only', () => {
    const e = ev('APPROVAL_REQUESTED', { id: 'ap1', level: 'CONFIRM', approval });
    for (const stored of [eventStoredLine(e, JSON.stringify(e)), eventStoredLine(undefined, JSON.stringify(e))]) {
      expect(stored).not.toContain('SECRET');
      const back = JSON.parse(stored) as FingerEvent;
      expect(back).toMatchObject({ id: e.id, type: 'APPROVAL_REQUESTED', request_id: 'r1', data: { id: 'ap1' } });
      expect(back.data.approval).toEqual({
        id: 'ap1',
        tool_id: 'fs.write',
        level: 'CONFIRM',
        evaluation: { reasons: ['why'], preview: { stored: false } },
        binding: { args_digest: 'd'.repeat(64) },
      });
    }
    // the live event is not changed
    expect(approval.args.content).toBe('SECRET');
  });

  it('keeps an input as its length and SHA-256', () => {
    const e = ev('INPUT_RECEIVED', { text: 'héllo' });
    const back = JSON.parse(eventStoredLine(undefined, JSON.stringify(e))) as FingerEvent;
    // sha256 of the text's UTF-8 bytes (`printf 'héllo' | sha256sum`)
    expect(back.data).toEqual({ chars: 5, sha256: '3c48591d8d098a4538f5e013dfcf406e948eac4d3277b10bf614e295d6068179' });
    expect(e.data).toEqual({ text: 'héllo' });
  });

  it('writes exactly the JSON of the stored event, also when the text itself spells the data field', () => {
    for (const e of [
      ev('INPUT_RECEIVED', { text: 'a,"data":{"text":"b"}}' }),
      ev('INPUT_RECEIVED', { text: '' }),
      ev('APPROVAL_REQUESTED', { id: 'ap1', approval }),
      { ...ev('INPUT_RECEIVED', { text: 'from elsewhere' }), origin: 'daemon-b-1-ab' },
    ]) {
      const line = JSON.stringify(e);
      expect(eventStoredLine(e, line)).toBe(JSON.stringify(storedEvent(e)));
      expect(eventStoredLine(undefined, line)).toBe(JSON.stringify(storedEvent(e)));
    }
  });
});
