// Invisible and confusable characters: a command a person reads is not the command that runs when
// it hides a zero-width character inside `rm`, flips its display order with bidi controls, or
// spells a program with look-alike letters.

/**
 * Zero-width and formatting characters, bidi controls, invisible separators and fillers, variation
 * selectors, tag characters, non-ASCII spaces that look like a plain space, and C0/C1 controls
 * except tab, newline and carriage return: inclusive code point ranges.
 */
const INVISIBLE_RANGES: readonly (readonly [number, number])[] = [
  [0x00, 0x08],
  [0x0b, 0x0c],
  [0x0e, 0x1f],
  [0x7f, 0x9f],
  [0xa0, 0xa0],
  [0xad, 0xad],
  [0x34f, 0x34f],
  [0x61c, 0x61c],
  [0x115f, 0x1160],
  [0x17b4, 0x17b5],
  [0x180b, 0x180f],
  [0x2000, 0x200f],
  [0x2028, 0x202f],
  [0x205f, 0x206f],
  [0x3000, 0x3000],
  [0x3164, 0x3164],
  [0xfe00, 0xfe0f],
  [0xfeff, 0xfeff],
  [0xffa0, 0xffa0],
  [0xfff9, 0xfffb],
  [0xe0000, 0xe007f],
  [0xe0100, 0xe01ef],
];

function isInvisible(cp: number): boolean {
  for (const [lo, hi] of INVISIBLE_RANGES) {
    if (cp < lo) return false;
    if (cp <= hi) return true;
  }
  return false;
}

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

/** Whether text has a non-ASCII character or an ASCII control other than tab / newline / CR (the cheap pre-check). */
export function mayHaveInvisible(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 0x7e || (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d)) return true;
  }
  return false;
}

/** Whether text has any non-ASCII character. */
export function hasNonAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7e) return true;
  return false;
}

/** Describes the first invisible or control character in `text`, or returns null. */
export function findInvisible(text: string): string | null {
  for (let i = 0; i < text.length; i++) {
    const cp = text.codePointAt(i) as number;
    if (isInvisible(cp)) {
      const hex = `U+${cp.toString(16).toUpperCase().padStart(4, '0')}`;
      const name = NAMES[cp];
      return `invisible or control character ${hex}${name === undefined ? '' : ` ${name}`} at offset ${i}`;
    }
    if (cp > 0xffff) i++;
  }
  return null;
}

/** Removes invisible characters (how a deny pattern compares program names: `r\u200Bm` is `rm`). */
export function stripInvisible(text: string): string {
  if (!mayHaveInvisible(text)) return text;
  let out = '';
  for (const ch of text) if (!isInvisible(ch.codePointAt(0) as number)) out += ch;
  return out;
}

const LETTER_LIKE = /^[\p{L}\p{N}]$|^\p{M}$/u;

/** Whether a command word (a program name or an option) holds a non-ASCII letter that may pass for ASCII. */
export function hasConfusableLetter(word: string): boolean {
  if (!hasNonAscii(word)) return false;
  for (const ch of word) if ((ch.codePointAt(0) as number) > 0x7e && LETTER_LIKE.test(ch)) return true;
  return false;
}
