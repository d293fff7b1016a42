import { describe, expect, it } from 'vitest';

import { bindingHolds, bindingOf, digestOf, HumanGate, verifyBinding } from '../../src/index.js';
import { diffPreview, evaluation, EventRecorder, facts, ManualClock, OPERATOR } from './gate-fixtures.js';

const SHA_A = 'a'.repeat(64);
const SHA_B = 'b'.repeat(64);

describe('approval binding', () => {
  const args = { path: '/work/a.txt', content: 'new' };
  const binding = bindingOf(args, diffPreview(SHA_A));

  it('binds the canonical args digest and the previewed file hash', () => {
    expect(binding).toEqual({ args_digest: digestOf(args), file_sha256: SHA_A });
    expect(bindingOf(args)).toEqual({ args_digest: digestOf(args) });
    expect(bindingOf(args, diffPreview(null))).toEqual({ args_digest: digestOf(args), file_sha256: null });
  });

  it('holds for the same args in any key order and the same file hash', () => {
    expect(verifyBinding(binding, { content: 'new', path: '/work/a.txt' }, SHA_A)).toEqual({ ok: true });
    expect(verifyBinding({ binding }, args, SHA_A)).toEqual({ ok: true });
  });

  it('is violated when the args change', () => {
    expect(verifyBinding(binding, { ...args, content: 'other' }, SHA_A)).toEqual({
      ok: false,
      field: 'args',
      reason: 'the arguments changed after they were approved',
    });
  });

  it('is violated when the file changed, appeared, vanished or was not rechecked', () => {
    expect(verifyBinding(binding, args, SHA_B)).toMatchObject({
      ok: false,
      field: 'file_sha256',
      reason: 'the file changed after its diff was approved',
    });
    expect(verifyBinding(binding, args, null)).toMatchObject({
      ok: false,
      reason: 'the file was removed after the approval',
    });
    expect(verifyBinding(bindingOf(args, diffPreview(null)), args, SHA_B)).toMatchObject({
      ok: false,
      reason: 'the file was created after the approval',
    });
    expect(verifyBinding(binding, args)).toMatchObject({ ok: false, field: 'file_sha256' });
    // Nothing bound: the file hash is not looked at.
    expect(verifyBinding(bindingOf(args), args)).toEqual({ ok: true });
  });

  it('bindingHolds: only for an approved decision whose binding still holds', async () => {
    const clock = new ManualClock();
    const events = new EventRecorder();
    const gate = new HumanGate({ clock, events });
    const decision = gate.hold(
      evaluation('APPROVE', { preview: diffPreview(SHA_A) }),
      facts({ tool_id: 'fs.write', args }),
    );
    const id = ((await events.next('APPROVAL_REQUESTED')).data as { id: string }).id;
    await gate.answer(id, { decision: 'approve', by: OPERATOR });
    const d = await decision;
    expect(bindingHolds(d, args, SHA_A)).toBe(true);
    expect(bindingHolds(d, { ...args, content: 'sneaky' }, SHA_A)).toBe(false);
    expect(bindingHolds(d, args, SHA_B)).toBe(false);
    expect(bindingHolds({ approved: false, decided_by: 'human', code: 'E_REJECTED_BY_HUMAN' }, args, SHA_A)).toBe(
      false,
    );
    expect(bindingHolds({ approved: true, decided_by: 'human' }, args, SHA_A)).toBe(false);
    await gate.close();
  });
});
