// A unified diff of two texts, for the APPROVE preview of a write. Myers' O(ND) algorithm on the
// lines between the common prefix and suffix; past the edit-distance or size limit the whole
// middle is shown as removed and added (still a correct diff, just not a minimal one).

const CONTEXT = 3;
const MAX_D = 1000;
const MAX_LINES = 200_000;

type Op = { kind: ' ' | '-' | '+'; line: string };

/** Lines without their "\n"; a last line lacking one keeps a "\n" marker, so it differs from the same text with one. */
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else lines[lines.length - 1] += '\n';
  return lines;
}

/** Myers' shortest edit script between a and b, or null past MAX_D edits. */
function myers(a: string[], b: string[]): Op[] | null {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_D);
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!) ? v[off + k + 1]! : v[off + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) return backtrack(trace, a, b, off);
    }
  }
  return null;
}

/** Walks the saved V arrays back from (n, m) to (0, 0). `trace[d]` is V before round d. */
function backtrack(trace: Int32Array[], a: string[], b: string[], off: number): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 1; d >= 0; d--) {
    const v = trace[d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!) ? k + 1 : k - 1;
    const prevX = v[off + prevK]!;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ kind: ' ', line: a[--x]! });
      y--;
    }
    if (d > 0) {
      if (x === prevX) ops.push({ kind: '+', line: b[--y]! });
      else ops.push({ kind: '-', line: a[--x]! });
    }
    x = prevX;
    y = prevY;
  }
  return ops.reverse();
}

function editScript(a: string[], b: string[]): Op[] {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const midA = a.slice(pre, a.length - suf);
  const midB = b.slice(pre, b.length - suf);
  let mid = midA.length + midB.length <= MAX_LINES ? myers(midA, midB) : null;
  mid ??= [
    ...midA.map((line) => ({ kind: '-' as const, line })),
    ...midB.map((line) => ({ kind: '+' as const, line })),
  ];
  return [
    ...a.slice(0, pre).map((line) => ({ kind: ' ' as const, line })),
    ...mid,
    ...a.slice(a.length - suf).map((line) => ({ kind: ' ' as const, line })),
  ];
}

function print(op: Op, out: string[]): void {
  if (op.line.endsWith('\n')) out.push(`${op.kind}${op.line.slice(0, -1)}`, '\\ No newline at end of file');
  else out.push(`${op.kind}${op.line}`);
}

/**
 * The unified diff (3 lines of context) turning `before` into `after`, with `--- <label>` and
 * `+++ <label>` headers; `/dev/null` stands for a file that does not exist (null). Empty string
 * when the texts are equal.
 */
export function unifiedDiff(before: string | null, after: string | null, label: string): string {
  if (before === after) return '';
  const ops = editScript(splitLines(before ?? ''), splitLines(after ?? ''));
  const out: string[] = [
    before === null ? '--- /dev/null' : `--- ${label}`,
    after === null ? '+++ /dev/null' : `+++ ${label}`,
  ];
  const pos: { a: number; b: number }[] = [];
  let ia = 0;
  let ib = 0;
  for (const op of ops) {
    pos.push({ a: ia, b: ib });
    if (op.kind !== '+') ia++;
    if (op.kind !== '-') ib++;
  }
  const changed: number[] = [];
  ops.forEach((op, i) => {
    if (op.kind !== ' ') changed.push(i);
  });
  let h = 0;
  while (h < changed.length) {
    const start = Math.max(0, changed[h]! - CONTEXT);
    let end = changed[h]!;
    while (h + 1 < changed.length && changed[h + 1]! - end <= 2 * CONTEXT) end = changed[++h]!;
    h++;
    const stop = Math.min(ops.length - 1, end + CONTEXT);
    let countA = 0;
    let countB = 0;
    const body: string[] = [];
    for (let i = start; i <= stop; i++) {
      const op = ops[i]!;
      print(op, body);
      if (op.kind !== '+') countA++;
      if (op.kind !== '-') countB++;
    }
    const sa = countA === 0 ? pos[start]!.a : pos[start]!.a + 1;
    const sb = countB === 0 ? pos[start]!.b : pos[start]!.b + 1;
    out.push(`@@ -${sa},${countA} +${sb},${countB} @@`, ...body);
  }
  return `${out.join('\n')}\n`;
}
