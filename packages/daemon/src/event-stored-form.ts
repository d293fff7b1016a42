// What the daemon's event files keep of an event (FileEventStore's `stored_line`): what a reader of
// the history needs — ids, types, levels, reasons, digests — but not what only a person deciding
// live needs: a held call's arguments and preview (a file's new content) and an input's text.
// Those stay in the audit log (the hash-chained record of what ran, where they belong) and, while
// a call is held, in GET /v1/approvals/:id; subscribers of the live stream get the event whole.

import { hash } from 'node:crypto';

import type { FingerEvent } from '@finger/protocol';

const MAY_CARRY = ['"type":"APPROVAL_REQUESTED"', '"type":"INPUT_RECEIVED"'];

function sha256(text: string): string {
  // one-shot: no Hash object per event
  return hash('sha256', text, 'hex');
}

/** A held call's approval without its arguments and preview (`binding.args_digest` names the arguments). */
function storedApproval(approval: unknown): unknown {
  if (typeof approval !== 'object' || approval === null) return approval;
  const { args: _args, ...rest } = approval as Record<string, unknown>;
  const ev = rest.evaluation;
  if (typeof ev === 'object' && ev !== null) {
    const { args: _evArgs, preview, ...evaluation } = ev as Record<string, unknown>;
    rest.evaluation = preview === undefined ? evaluation : { ...evaluation, preview: { stored: false } };
  }
  return rest;
}

/** The event as its file keeps it, or undefined when it is kept as it is. */
export function storedEvent(e: FingerEvent): FingerEvent | undefined {
  const data = e.data as Record<string, unknown> | undefined;
  if (data === undefined) return undefined;
  if (e.type === 'APPROVAL_REQUESTED' && data.approval !== undefined)
    return { ...e, data: { ...data, approval: storedApproval(data.approval) } };
  if (e.type === 'INPUT_RECEIVED' && typeof data.text === 'string') {
    const { text, ...rest } = data;
    return { ...e, data: { ...rest, chars: text.length, sha256: sha256(text) } };
  }
  return undefined;
}

/**
 * FileEventStore's `stored_line`: most events are kept as the line their subscribers got (no
 * parse, no copy); an event that may carry arguments or input text is re-serialised without them.
 * An event that came as JSON only (another daemon's, `event` undefined) is parsed when its line
 * names one of those types.
 */
export function eventStoredLine(event: FingerEvent | undefined, line: string): string {
  if (event !== undefined) {
    if (event.type !== 'APPROVAL_REQUESTED' && event.type !== 'INPUT_RECEIVED') return line;
  } else if (!MAY_CARRY.some((t) => line.includes(t))) return line;
  let e = event;
  if (e === undefined) {
    try {
      e = JSON.parse(line) as FingerEvent;
    } catch {
      return line;
    }
  }
  const stored = storedEvent(e);
  if (stored === undefined) return line;
  // A line this daemon wrote ends with its data (`…,"data":{…}}`, hub event-json.ts): keep the
  // head as it is and write the new data only. The first `,"data":` is that field's — inside a
  // JSON string a quote is always escaped. Anything else is written whole.
  if (event !== undefined && event.origin === undefined && line.endsWith('}')) {
    const at = line.indexOf(',"data":');
    if (at > 0) return line.slice(0, at) + ',"data":' + JSON.stringify(stored.data) + '}';
  }
  return JSON.stringify(stored);
}
