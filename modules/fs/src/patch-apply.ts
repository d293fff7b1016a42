import { createRequire } from 'node:module';

import type { StructuredPatch } from 'diff';

// jsdiff is loaded on the first patch, not when the daemon starts (idle memory).
const requireLazy = createRequire(import.meta.url);
let jsdiff: typeof import('diff') | undefined;
const diffLib = (): typeof import('diff') => (jsdiff ??= requireLazy('diff') as typeof import('diff'));

import { FingerError } from '@finger/protocol';

/** One search/replace edit of `fs.patch`. */
export interface SearchReplaceEdit {
  search: string;
  replace: string;
  /** Exact number of occurrences expected (and replaced). Default 1. */
  count?: number;
}

/** Outcome of applying a patch to text. */
export interface PatchOutcome {
  text: string;
  /** Hunks of the diff, or edits, that were applied (all of them). */
  hunks_applied: number;
}

type Hunk = StructuredPatch['hunks'][number];

const header = (h: Hunk): string => `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`;

function invalid(message: string, details?: Record<string, unknown>): FingerError {
  return new FingerError('E_INVALID_ARGS', message, details);
}

function tryApply(text: string, patch: StructuredPatch): string | false {
  try {
    return diffLib().applyPatch(text, patch, { fuzzFactor: 0 });
  } catch {
    return false;
  }
}

/**
 * Applies a unified diff of one file to `text` strictly (jsdiff `applyPatch`, fuzz 0: context and
 * removed lines must match exactly, though a hunk may sit at another line than its header says;
 * CRLF files accept LF diffs). All or nothing: when a hunk does not apply, throws E_INVALID_ARGS
 * naming it (`details.hunk` is 1-based, `details.header` its `@@` line) and nothing changes.
 * A diff that cannot be parsed, has no hunks or touches several files is E_INVALID_ARGS too.
 */
export function applyUnifiedDiff(text: string, diff: string): PatchOutcome {
  let parsed: StructuredPatch[];
  try {
    parsed = diffLib().parsePatch(diff);
  } catch (e) {
    throw invalid(`diff is not a valid unified diff: ${(e as Error).message}`);
  }
  const files = parsed.filter((p) => p.hunks.length > 0);
  if (files.length === 0) throw invalid('diff contains no hunks (expected lines starting with "@@ -a,b +c,d @@")');
  if (files.length > 1) {
    throw invalid(`diff changes ${files.length} files; send one diff per file`, { files: files.length });
  }
  const patch = files[0]!;
  const out = tryApply(text, patch);
  if (out !== false) return { text: out, hunks_applied: patch.hunks.length };
  // Name the first hunk that fails, applying growing prefixes as jsdiff would apply them.
  const n = patch.hunks.length;
  let failing = n;
  for (let i = 1; i <= n; i++) {
    if (tryApply(text, { ...patch, hunks: patch.hunks.slice(0, i) }) === false) {
      failing = i;
      break;
    }
  }
  const h = patch.hunks[failing - 1]!;
  throw invalid(
    `hunk ${failing} of ${n} (${header(h)}) does not apply: its context or removed lines do not match the file; nothing was written`,
    { hunk: failing, header: header(h), hunks: n },
  );
}

function occurrences(text: string, search: string): number {
  let n = 0;
  for (let i = text.indexOf(search); i !== -1; i = text.indexOf(search, i + search.length)) n++;
  return n;
}

/**
 * Applies search/replace edits in order, each to the result of the previous one. Every `search`
 * must occur (non-overlapping) exactly `count` times (default 1), all of which are replaced;
 * otherwise throws E_INVALID_ARGS naming the edit (`details.edit` 1-based, `found`, `expected`)
 * and nothing changes.
 */
export function applyEdits(text: string, edits: readonly SearchReplaceEdit[]): PatchOutcome {
  if (!Array.isArray(edits) || edits.length === 0) throw invalid('edits must be a non-empty array');
  let out = text;
  for (const [i, e] of edits.entries()) {
    if (typeof e?.search !== 'string' || e.search === '' || typeof e.replace !== 'string') {
      throw invalid(`edit ${i + 1}: search must be a non-empty string and replace a string`, { edit: i + 1 });
    }
    const expected = e.count ?? 1;
    if (!Number.isSafeInteger(expected) || expected < 1) {
      throw invalid(`edit ${i + 1}: count must be a positive integer`, { edit: i + 1, count: e.count });
    }
    const found = occurrences(out, e.search);
    if (found !== expected) {
      throw invalid(
        `edit ${i + 1}: search text occurs ${found} time(s), expected exactly ${expected}; nothing was written`,
        { edit: i + 1, found, expected },
      );
    }
    out = out.split(e.search).join(e.replace);
  }
  return { text: out, hunks_applied: edits.length };
}
