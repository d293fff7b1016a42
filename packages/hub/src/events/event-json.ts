import { EVENT_TYPES, type EventType, type FingerEvent, isEventType } from '@finger/protocol';

/**
 * The JSON of events: written once when an event is emitted (field by field, {@link encodeEvent}),
 * read back only where an object is wanted ({@link parseEvent}). An event that arrives as JSON
 * (another daemon's, over NATS) is first known by its head alone ({@link readEventHead}: its id
 * and type, read from the start of the line) — enough to deduplicate it, pick its subscribers
 * and hand the line on to those that take JSON (a WebSocket client), with no parse at all.
 */

/** A string JSON.stringify writes other than as itself between quotes (lone surrogates are escaped). */
// eslint-disable-next-line no-control-regex -- control characters are what JSON escapes
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/**
 * The text of `s` between the quotes JSON.stringify puts around it: `s` itself when nothing needs
 * escaping (ids, types, targets — no copy), else the escaped form.
 */
function quotedText(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s).slice(1, -1) : s;
}

/**
 * `JSON.stringify(event)` for an event built by emit (its fields in that order; the id and
 * timestamp need no escaping, other strings are checked), with only `data` left to
 * JSON.stringify — about half the cost of stringifying the whole event. One concatenation with
 * each field's quotes inside the constant text around it: a string needing no escape is joined
 * as it is, not quoted into a string of its own first (≈ 970 → 620 bytes allocated per event,
 * a third less time). Undefined when the event is not of that shape (untyped callers, data that
 * is not a plain JSON object): the caller then stringifies it whole.
 */
export function encodeEvent(event: FingerEvent): string | undefined {
  let data: string | undefined;
  try {
    data = JSON.stringify(event.data);
  } catch {
    return undefined;
  }
  const e = event;
  if (
    data === undefined ||
    data[0] !== '{' ||
    typeof e.request_id !== 'string' ||
    typeof e.correlation_id !== 'string' ||
    typeof e.session_id !== 'string' ||
    typeof e.workflow_id !== 'string' ||
    typeof e.target !== 'string' ||
    typeof e.type !== 'string'
  )
    return undefined;
  return (
    '{"id":"' +
    e.id +
    '","type":"' +
    quotedText(e.type) +
    '","ts":"' +
    e.ts +
    '","request_id":"' +
    quotedText(e.request_id) +
    '","correlation_id":"' +
    quotedText(e.correlation_id) +
    '","session_id":"' +
    quotedText(e.session_id) +
    '","workflow_id":"' +
    quotedText(e.workflow_id) +
    '","target":"' +
    quotedText(e.target) +
    '","data":' +
    data +
    '}'
  );
}

/** What identifies an event before its JSON is parsed. */
export interface EventHead {
  id: string;
  type: EventType;
}

const ID_START = '{"id":"';
const TYPE_KEY = '","type":"';
const BACKSLASH = 92;
/** Longest id a head is read for (the envelope schema's limit for ids). */
const MAX_ID = 128;

/**
 * The id and type of event JSON that starts the way {@link encodeEvent} writes it —
 * `{"id":"<id>","type":"<type>",` with an id of at most 128 characters and no escapes, a known
 * event type — and ends with `}`. Undefined for anything else (another key order, escapes, an
 * unknown type): such a line is parsed whole instead. The rest of the line is not looked at:
 * the caller trusts it as far as it trusts whoever signed it.
 */
export function readEventHead(line: string): EventHead | undefined {
  if (!line.startsWith(ID_START) || line.charCodeAt(line.length - 1) !== 0x7d) return undefined;
  const idEnd = line.indexOf('"', ID_START.length);
  if (idEnd <= ID_START.length || idEnd - ID_START.length > MAX_ID) return undefined;
  for (let i = ID_START.length; i < idEnd; i++) {
    const c = line.charCodeAt(i);
    if (c === BACKSLASH || c < 0x20) return undefined;
  }
  if (!line.startsWith(TYPE_KEY, idEnd)) return undefined;
  const typeStart = idEnd + TYPE_KEY.length;
  const typeEnd = line.indexOf('"', typeStart);
  if (typeEnd < 0 || line.charCodeAt(typeEnd + 1) !== 0x2c) return undefined;
  const type = knownType(line, typeStart, typeEnd - typeStart);
  if (type === undefined) return undefined;
  return { id: line.slice(ID_START.length, idEnd), type };
}

/** The event type spelled at `line[start, start + length)` (the constant itself, no new string), if any. */
function knownType(line: string, start: number, length: number): EventType | undefined {
  for (const t of EVENT_TYPES) if (t.length === length && line.startsWith(t, start)) return t;
  return undefined;
}

/**
 * The event of a JSON line, or undefined when it is not well-formed: not JSON, no string id,
 * an unknown type, `data` not an object — or, when `head` is given, an id or type other than
 * the head's.
 */
export function parseEvent(line: string, head?: EventHead): FingerEvent | undefined {
  let e: FingerEvent;
  try {
    e = JSON.parse(line) as FingerEvent;
  } catch {
    return undefined;
  }
  if (typeof e?.id !== 'string' || !isEventType(e.type) || typeof e.data !== 'object' || e.data === null)
    return undefined;
  if (head !== undefined && (e.id !== head.id || e.type !== head.type)) return undefined;
  return e;
}
