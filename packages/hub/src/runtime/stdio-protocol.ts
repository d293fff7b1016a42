import { FingerError, isErrorCode, jsonLimitError, MAX_WIRE_JSON_DEPTH } from '@finger/protocol';

/** A valid module → host line of the stdio protocol (§3.4). */
export type ModuleLine =
  | { type: 'result'; id: string; result: unknown }
  | { type: 'error'; id: string; error: FingerError }
  | { type: 'progress'; id: string; message: string; fraction?: number }
  | { type: 'lease.extend'; id: string; ttl_ms: number }
  | { type: 'pong'; id: string }
  | { type: 'event'; name: string; data: unknown };

/** A line that is not a protocol line, and why. */
export interface GarbageLine {
  type: 'garbage';
  reason: string;
}

const REPLY_TYPES = new Set(['result', 'error', 'progress', 'lease.extend', 'pong']);

/**
 * Parses one stdout line of a stdio module. Pure: no I/O, no state. Returns null for a blank line,
 * a {@link GarbageLine} for anything that is not one of the shapes. An error line's code becomes
 * the FingerError's code when it is registered, otherwise E_MODULE_ERROR with
 * `details.module_code`; a missing message is tolerated (the call still gets its answer). A
 * result or error line nesting past MAX_WIRE_JSON_DEPTH answers its call with E_MODULE_ERROR
 * (`details: {reason: "json_depth", limit, path}`); any other such line is garbage.
 */
export function parseModuleLine(line: string): ModuleLine | GarbageLine | null {
  if (line.trim() === '') return null;
  let msg: unknown;
  try {
    msg = JSON.parse(line);
  } catch {
    return { type: 'garbage', reason: 'not JSON' };
  }
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) {
    return { type: 'garbage', reason: 'not a JSON object' };
  }
  const m = msg as Record<string, unknown>;
  const type = m.type;
  const tooDeep = jsonLimitError(m, 'line', { maxDepth: MAX_WIRE_JSON_DEPTH });
  if (tooDeep) {
    // the call still gets its answer (a module error naming the limit); anything else is dropped
    const { limit, path } = tooDeep.details as { limit: number; path: string };
    if ((type === 'result' || type === 'error') && typeof m.id === 'string') {
      const message = `the module's ${type} line nests deeper than the JSON nesting limit of ${limit} levels`;
      const error = new FingerError('E_MODULE_ERROR', message, { reason: 'json_depth', limit, path });
      return { type: 'error', id: m.id, error };
    }
    return { type: 'garbage', reason: tooDeep.message };
  }
  if (type === 'event') {
    if (typeof m.name !== 'string') return { type: 'garbage', reason: 'event without a name' };
    return { type: 'event', name: m.name, data: m.data ?? null };
  }
  if (typeof type !== 'string' || !REPLY_TYPES.has(type)) return { type: 'garbage', reason: 'unknown line type' };
  const id = m.id;
  if (typeof id !== 'string') return { type: 'garbage', reason: `${type} without a string id` };
  switch (type) {
    case 'result':
      return { type, id, result: m.result };
    case 'error':
      return { type, id, error: moduleError(m) };
    case 'progress': {
      const message = typeof m.message === 'string' ? m.message : '';
      const f = m.fraction;
      return typeof f === 'number' && Number.isFinite(f) ? { type, id, message, fraction: f } : { type, id, message };
    }
    case 'lease.extend': {
      const ttl = m.ttl_ms;
      if (typeof ttl !== 'number' || !(ttl > 0) || !Number.isFinite(ttl)) {
        return { type: 'garbage', reason: 'lease.extend without a positive ttl_ms' };
      }
      return { type, id, ttl_ms: ttl };
    }
    default:
      return { type: 'pong', id };
  }
}

function moduleError(m: Record<string, unknown>): FingerError {
  const message = typeof m.message === 'string' ? m.message : 'module error';
  if (isErrorCode(m.code)) return new FingerError(m.code, message, m.details);
  return new FingerError('E_MODULE_ERROR', message, { module_code: m.code ?? null });
}
