// Where a file name may hide in one shell word: the word itself (`../token`), after a leading
// `@` or `<` (curl's `@file`), after `=` (`--files-from=../token`, `name=@file`,
// `include.path=../token`), the value glued to a short option (`-f../token`, `-T../list`), and
// the path of a `file://` URL. Options that name files are reads (docs/policy.md): every part is
// judged as a path the program may open — by the finger-home check (forbidden.ts) and the read
// roots (read-words.ts) alike.

/** The parts of `word` that may be a path, without duplicates (the word first when it is one). */
export function pathParts(word: string): string[] {
  const out: string[] = [];
  const add = (p: string): void => {
    let v = p;
    if (v.startsWith('@') || v.startsWith('<')) v = v.slice(1);
    if (/^file:\/\//i.test(v)) v = v.replace(/^file:\/\/(?:localhost)?/i, '');
    if (v !== '' && v !== '-' && !out.includes(v)) out.push(v);
  };
  if (!word.startsWith('-')) add(word);
  else if (!word.startsWith('--') && word.length > 2) {
    // a path glued to the first letter of a cluster (`-f../token`), or to a later one (`-zf/x`);
    // not letters (`-la` is no file `a`)
    const at = word.search(/[./~$@]/);
    if (at >= 2) add(word.slice(at));
  }
  const eq = word.indexOf('=');
  if (eq > 0) add(word.slice(eq + 1));
  const at = word.indexOf('@');
  if (at > 0 && word[at - 1] !== '=') add(word.slice(at + 1));
  return out;
}

/** A part that may be a relative path (not a URL, `host:path`, option, number or `-`). */
export function isRelativePart(part: string): boolean {
  if (part === '' || part === '-' || part === '--') return false;
  const c = part[0]!;
  if (c === '/' || c === '~' || c === '$' || c === '`' || c === '-') return false;
  if (/^[A-Za-z][\w+.-]*:/.test(part)) return false;
  return !/^\d+$/.test(part);
}
