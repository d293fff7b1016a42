/**
 * The scratchpad file format and its rules, as pure functions: two sections, `# Current Task`
 * (at most 10 lines) and `# Todo` (every non-empty line a checkbox item). A violation is an
 * E_INVALID_ARGS naming the rule; nothing is ever cut to fit.
 */
import { FingerError } from '@finger/protocol';

/** Which section an update rewrites. */
export type SectionType = 'task' | 'todo';

/** The header line of each section. */
export const HEADERS: Record<SectionType, string> = { task: '# Current Task', todo: '# Todo' };

/** The file as `read` returns it when there is none yet. */
export const EMPTY_SCRATCHPAD = '# Current Task\n\n# Todo\n';

/** Most lines the task section may have. */
export const TASK_MAX_LINES = 10;

/** A todo line: `- [ ] text` or `- [x] text`. */
const TODO_LINE = /^- \[[ x]\] \S/;

function isHeader(line: string): SectionType | null {
  const t = line.trimEnd();
  if (t === HEADERS.task) return 'task';
  if (t === HEADERS.todo) return 'todo';
  return null;
}

/**
 * Normalises and checks the content of one section: CRLF becomes LF, leading and trailing blank
 * lines are dropped (they would blur the section boundaries); then the section's rule is applied.
 * Returns the lines to store. Throws E_INVALID_ARGS with `details.rule` when a rule is broken:
 * `task_max_lines` (more than 10 lines), `todo_checkbox` (a line that is not a checkbox item, named
 * with its number), `no_headers` (a line that is a section header), `max_bytes`.
 */
export function checkSection(type: SectionType, content: string, maxBytes: number): string[] {
  const bytes = Buffer.byteLength(content);
  if (bytes > maxBytes) {
    throw new FingerError('E_INVALID_ARGS', `${type} content is ${bytes} bytes; the limit is ${maxBytes}`, {
      rule: 'max_bytes',
      bytes,
      limit: maxBytes,
    });
  }
  const lines = content.replace(/\r\n?/g, '\n').split('\n');
  while (lines.length > 0 && lines[0]!.trim() === '') lines.shift();
  while (lines.length > 0 && lines[lines.length - 1]!.trim() === '') lines.pop();
  const header = lines.findIndex((l) => isHeader(l) !== null);
  if (header !== -1) {
    throw new FingerError(
      'E_INVALID_ARGS',
      `${type} line ${header + 1} "${lines[header]}" is a section header; content must not contain "${HEADERS.task}" or "${HEADERS.todo}" lines`,
      { rule: 'no_headers', line: header + 1, text: lines[header] },
    );
  }
  if (type === 'task' && lines.length > TASK_MAX_LINES) {
    throw new FingerError('E_INVALID_ARGS', `task section has ${lines.length} lines; the limit is ${TASK_MAX_LINES}`, {
      rule: 'task_max_lines',
      lines: lines.length,
      limit: TASK_MAX_LINES,
    });
  }
  if (type === 'todo') {
    const bad = lines
      .map((text, i) => ({ line: i + 1, text }))
      .filter(({ text }) => text.trim() !== '' && !TODO_LINE.test(text));
    if (bad.length > 0) {
      const first = bad[0]!;
      throw new FingerError(
        'E_INVALID_ARGS',
        `todo line ${first.line} "${first.text}" is not a checkbox item; every todo line must start with "- [ ] " or "- [x] "`,
        { rule: 'todo_checkbox', lines: bad },
      );
    }
  }
  return lines;
}

/** Where one section sits in a file: its header line start and its body `[start, end)`. */
interface SectionSpan {
  headerStart: number;
  bodyStart: number;
  bodyEnd: number;
}

/** Finds the first `# Current Task` and `# Todo` header lines; a body runs to the next header or EOF. */
function locate(text: string): Partial<Record<SectionType, SectionSpan>> {
  const headers: Array<{ type: SectionType; start: number; bodyStart: number }> = [];
  let pos = 0;
  while (pos <= text.length) {
    const nl = text.indexOf('\n', pos);
    const end = nl === -1 ? text.length : nl;
    const type = isHeader(text.slice(pos, end));
    if (type !== null && !headers.some((h) => h.type === type)) {
      headers.push({ type, start: pos, bodyStart: nl === -1 ? text.length : nl + 1 });
    }
    if (nl === -1) break;
    pos = nl + 1;
  }
  const out: Partial<Record<SectionType, SectionSpan>> = {};
  headers.forEach((h, i) => {
    out[h.type] = { headerStart: h.start, bodyStart: h.bodyStart, bodyEnd: headers[i + 1]?.start ?? text.length };
  });
  return out;
}

/** The body text stored for `lines`: the lines, then a blank separator line unless it is the last section. */
function body(lines: string[], last: boolean): string {
  if (lines.length === 0) return last ? '' : '\n';
  return `${lines.join('\n')}\n${last ? '' : '\n'}`;
}

/**
 * Returns `text` with one section's body replaced by `lines`; every other byte stays as it was.
 * A missing section is added: the task section before `# Todo`, the todo section at the end
 * (after a newline when the file does not end with one).
 */
export function replaceSection(text: string, type: SectionType, lines: string[]): string {
  const spans = locate(text);
  const span = spans[type];
  if (span !== undefined) {
    const last = span.bodyEnd === text.length;
    return text.slice(0, span.bodyStart) + body(lines, last) + text.slice(span.bodyEnd);
  }
  const section = `${HEADERS[type]}\n`;
  const todo = spans.todo;
  if (type === 'task' && todo !== undefined) {
    return text.slice(0, todo.headerStart) + section + body(lines, false) + text.slice(todo.headerStart);
  }
  let head = text;
  if (head !== '' && !head.endsWith('\n')) head += '\n';
  if (head !== '' && !head.endsWith('\n\n')) head += '\n';
  return head + section + body(lines, true);
}
