// Globs and brace expansions in path words, as the shell reads them: `~/.{aws,x}/credentials` is
// two paths, `/h*/*/.aws/credentials` any path whose components match. A pattern is compared with
// the sensitive places component by component (paths.ts), so a glob counts when ANY path it can
// match is sensitive. Lexical: nothing is looked up on disk.

/** Glob characters: `*`, `?`, `[…]`. */
export const GLOB = /[*?[]/;

/** A component of a place that stands for any one name (a user's name in `/home/<u>`, a pid). */
export const ANY = '\u0000any';

/**
 * A sensitive place as components: `['~', '.ssh']`, `['', 'etc', 'shadow']` (absolute),
 * `['.git', 'hooks']` (relative: anywhere). `dir`: everything below it counts too.
 */
export interface Place {
  readonly parts: readonly string[];
  readonly dir: boolean;
  /** what a reason names (`~/.ssh`, `/etc/shadow`) */
  readonly label: string;
}

const regexps = new Map<string, RegExp>();

/** A shell glob component (`*`, `?`, `[…]`, `[!…]`) as an anchored regular expression. */
export function componentRegExp(pattern: string, ignoreCase = false): RegExp {
  const key = ignoreCase ? `i${pattern}` : `s${pattern}`;
  let hit = regexps.get(key);
  if (hit !== undefined) return hit;
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end < 0) re += '\\[';
      else {
        const body = pattern
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\');
        re += `[${body}]`;
        i = end;
      }
    } else if (c === '\\' && i + 1 < pattern.length) {
      re += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    } else re += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  try {
    hit = new RegExp(`^${re}$`, ignoreCase ? 'i' : '');
  } catch {
    hit = /^/; // an odd bracket expression: it may match anything
  }
  if (regexps.size > 2048) regexps.clear();
  regexps.set(key, hit);
  return hit;
}

/**
 * Whether the glob component `pattern` can match the name `name` (ANY: any name). A leading dot is
 * matched only by a pattern starting with a dot (or a bracket expression, conservatively), as the
 * shell globs.
 */
export function componentMatches(pattern: string, name: string, ignoreCase = false): boolean {
  if (!GLOB.test(pattern)) return ignoreCase ? pattern.toLowerCase() === name.toLowerCase() : pattern === name;
  if (name === ANY) return true;
  if (name.startsWith('.') && !pattern.startsWith('.') && !pattern.startsWith('[')) return false;
  return componentRegExp(pattern, ignoreCase).test(name);
}

/**
 * How the components of a path (pattern) meet a place: `at` — the path is the place or lies below
 * it (a directory place) or is it (a file place); `above` — the path is a proper ancestor of the
 * place (a recursive read of it reads the place). A `**` component matches any number of components.
 */
export function meet(path: readonly string[], place: Place): 'at' | 'above' | null {
  return walk(path, 0, place, 0);
}

function walk(path: readonly string[], pi: number, place: Place, ti: number): 'at' | 'above' | null {
  const parts = place.parts;
  if (ti === parts.length) {
    if (place.dir || pi === path.length) return 'at';
    return path.slice(pi).every((p) => p === '**') ? 'at' : null;
  }
  if (pi === path.length) return 'above';
  const p = path[pi]!;
  if (p === '**') {
    // none, or one more component (and maybe more)
    return best(walk(path, pi + 1, place, ti), walk(path, pi, place, ti + 1));
  }
  return componentMatches(p, parts[ti]!) ? walk(path, pi + 1, place, ti + 1) : null;
}

function best(a: 'at' | 'above' | null, b: 'at' | 'above' | null): 'at' | 'above' | null {
  return a === 'at' || b === 'at' ? 'at' : (a ?? b);
}

/** Components of a normalised path: `~/.ssh` → `['~', '.ssh']`, `/etc/x` → `['', 'etc', 'x']`, `/` → `['']`. */
export function components(n: string): string[] {
  if (n === '/') return [''];
  return n.split('/');
}

/** At most this many words from one brace expansion; beyond it every group is read as `*`. */
const MAX_BRACE_WORDS = 64;

/**
 * The words a brace expansion makes (`a{b,c}d` → `abd`, `acd`; `x{1..3}` → `x1`, `x2`, `x3`),
 * or `[word]` when it has none. Past {@link MAX_BRACE_WORDS} every group becomes a `*` (and a
 * `.*`, which may start a dot name), so the result can only match more than the shell's would.
 */
export function expandBraces(word: string): string[] {
  if (!word.includes('{')) return [word];
  const out: string[] = [];
  if (!expandInto(word, out)) {
    const star = word.replace(/\{[^{}]*\}/g, '*');
    const dotStar = word.replace(/\{[^{}]*\}/g, '.*');
    return star === word ? [word] : [star, dotStar];
  }
  return out;
}

/** Appends the expansion of `word` to `out`; false when it would exceed the bound. */
function expandInto(word: string, out: string[]): boolean {
  const g = firstGroup(word);
  if (g === null) {
    if (out.length >= MAX_BRACE_WORDS) return false;
    out.push(word);
    return true;
  }
  const head = word.slice(0, g.start);
  const tail = word.slice(g.end + 1);
  for (const alt of g.alternatives) if (!expandInto(head + alt + tail, out)) return false;
  return true;
}

/** The first brace group with a comma or a `..` sequence, or null. */
function firstGroup(word: string): { start: number; end: number; alternatives: string[] } | null {
  for (let start = word.indexOf('{'); start >= 0; start = word.indexOf('{', start + 1)) {
    if (start > 0 && (word[start - 1] === '$' || word[start - 1] === '\\')) continue;
    let depth = 0;
    const commas: number[] = [];
    let end = -1;
    for (let i = start; i < word.length; i++) {
      const c = word[i];
      if (c === '\\') i++;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        end = i;
        break;
      } else if (c === ',' && depth === 1) commas.push(i);
    }
    if (end < 0) return null;
    if (commas.length > 0) {
      const alternatives: string[] = [];
      let from = start + 1;
      for (const c of [...commas, end]) {
        alternatives.push(word.slice(from, c));
        from = c + 1;
      }
      return { start, end, alternatives };
    }
    const seq = sequence(word.slice(start + 1, end));
    if (seq !== null) return { start, end, alternatives: seq };
  }
  return null;
}

/** `a..e`, `1..10`, `1..10..2`: the words of a sequence expression (at most 65), or null. */
function sequence(body: string): string[] | null {
  const m = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/.exec(body);
  if (m === null) return null;
  const [a, b] = [m[1]!, m[2]!];
  const step = Math.abs(Number(m[3] ?? 1)) || 1;
  const numeric = /\d/.test(a);
  if (numeric !== /\d/.test(b)) return null;
  const from = numeric ? Number(a) : a.charCodeAt(0);
  const to = numeric ? Number(b) : b.charCodeAt(0);
  if (Math.abs(to - from) / step > MAX_BRACE_WORDS) return null;
  const out: string[] = [];
  const dir = to >= from ? step : -step;
  for (let v = from; dir > 0 ? v <= to : v >= to; v += dir) out.push(numeric ? String(v) : String.fromCharCode(v));
  return out;
}
