// Invisible and confusable characters: a command a person reads is not the command that runs when
// it hides a zero-width character inside `rm`, flips its display order with bidi controls, or
// spells a program with look-alike letters.

/**
 * Zero-width and formatting characters, bidi controls, invisible separators and fillers, and
 * non-ASCII spaces that look like a plain space (C0/C1 controls except tab/newline/CR as well).
 */
const INVISIBLE =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00A0\u00AD\u034F\u061C\u115F\u1160\u17B4\u17B5\u180B-\u180F\u2000-\u200F\u2028-\u202F\u205F-\u206F\u3000\u3164\uFE00-\uFE0F\uFEFF\uFFA0\uFFF9-\uFFFB]/u;

const NAMES: Record<number, string> = {
  0x200b: 'ZERO WIDTH SPACE',
  0x200c: 'ZERO WIDTH NON-JOINER',
  0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
  0xfeff: 'ZERO WIDTH NO-BREAK SPACE',
  0x00a0: 'NO-BREAK SPACE',
  0x00ad: 'SOFT HYPHEN',
};

/** Whether text has any non-ASCII character (the cheap pre-check before the regexes). */
export function hasNonAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7e) return true;
  return false;
}

/** Describes the first invisible or control character in `text`, or returns null. */
export function findInvisible(text: string): string | null {
  const m = INVISIBLE.exec(text);
  if (m === null) return null;
  const cp = m[0].codePointAt(0) as number;
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
  const name = NAMES[cp];
  return `invisible or control character ${hex}${name === undefined ? '' : ` ${name}`} at offset ${m.index}`;
}

const INVISIBLE_GLOBAL = new RegExp(INVISIBLE.source, 'gu');

/** Removes invisible characters (how a deny pattern compares program names: `r\u200Bm` is `rm`). */
export function stripInvisible(text: string): string {
  return hasNonAscii(text) ? text.replace(INVISIBLE_GLOBAL, '') : text;
}

/** Whether a command word (a program name or an option) holds a non-ASCII letter that may pass for ASCII. */
export function hasConfusableLetter(word: string): boolean {
  return hasNonAscii(word) && /\p{L}|\p{M}|\p{N}/u.test(word.replace(/[\x00-\x7f]/g, ''));
}
