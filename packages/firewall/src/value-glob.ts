/** A string matcher compiled from a glob. */
export type Matcher = (s: string) => boolean;

/**
 * Compiles a value glob: `*` any run of characters (`/` included), `?` one character, `[…]` a
 * class (`[!…]` negated), `\` escapes the next character (unless `escapes` is false: then it is a
 * literal, as in command-pattern words, which arrive de-quoted). Without glob characters it is an
 * exact comparison. Compiled once; no regex is built per call.
 */
export function compileValueGlob(glob: string, escapes = true): Matcher {
  if (!(escapes ? /[*?[\\]/ : /[*?[]/).test(glob)) return (s) => s === glob;
  if (glob === '*') return () => true;
  let re = '^';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (escapes && c === '\\' && i + 1 < glob.length) {
      re += (glob[++i] as string).replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    } else if (c === '*') re += '.*';
    else if (c === '?') re += '.';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        let body = glob.slice(i + 1, end);
        if (body.startsWith('!')) body = `^${body.slice(1)}`;
        re += `[${body.replace(/\\/g, '\\\\')}]`;
        i = end;
      }
    } else re += c.replace(/[.+^${}()|\\\]/]/g, '\\$&');
  }
  const regex = new RegExp(`${re}$`, 's');
  return (s) => regex.test(s);
}
