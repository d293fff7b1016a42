import { FingerError } from '@finger/protocol';

/** How file content travels in tool arguments and results. */
export type ContentEncoding = 'utf8' | 'base64';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Bytes of a `content` argument. base64 is checked strictly (whitespace ignored; any other
 * character outside the alphabet, or a truncated quantum, is E_INVALID_ARGS) because Node's
 * decoder silently skips garbage, which would write wrong bytes.
 */
export function decodeContent(content: unknown, encoding: unknown = 'utf8'): Buffer {
  if (typeof content !== 'string') throw new FingerError('E_INVALID_ARGS', 'content must be a string');
  if (encoding === 'utf8') return Buffer.from(content, 'utf8');
  if (encoding !== 'base64') {
    throw new FingerError('E_INVALID_ARGS', `encoding must be "utf8" or "base64", got ${JSON.stringify(encoding)}`);
  }
  const compact = content.replace(/\s+/g, '');
  if (!BASE64.test(compact) || compact.length % 4 === 1 || (compact.includes('=') && compact.length % 4 !== 0)) {
    throw new FingerError(
      'E_INVALID_ARGS',
      'content is not valid base64 (standard alphabet A-Z a-z 0-9 + /, "=" padding)',
    );
  }
  return Buffer.from(compact, 'base64');
}

/**
 * Decodes bytes as strict UTF-8 (a BOM is kept, invalid sequences are E_INVALID_ARGS suggesting
 * base64), so text round-trips byte for byte and binary never turns into U+FFFD silently.
 */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw new FingerError(
      'E_INVALID_ARGS',
      `${what} is not valid UTF-8 (binary content, or a range that splits a character); use encoding "base64"`,
      { path: what },
    );
  }
}

/** Encodes bytes for a result in the requested encoding (utf8 strictly, see {@link decodeUtf8}). */
export function encodeContent(bytes: Uint8Array, encoding: ContentEncoding, what: string): string {
  return encoding === 'base64' ? Buffer.from(bytes).toString('base64') : decodeUtf8(bytes, what);
}
