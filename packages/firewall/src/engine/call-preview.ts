// Which preview a person reads for a notified or held call (a shell command's parse, a write's
// diff, else the arguments: preview.ts builds each), and whether a write preview still shows the
// file as it is — an approval covers exactly what was shown. Kept apart from the engine's layers:
// previews are made only for `notify` and `hold`, after the verdict.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

import type { RiskAssessment } from '@finger/shell-risk';

import { isWriteTool } from '../sandbox/path-args.js';
import type { PathSandbox } from '../sandbox/path-sandbox.js';
import type { Evaluation, Preview, ToolCallFacts } from './evaluation.js';
import { argsPreview, commandPreview, type ReadFile, writePreview } from './preview.js';

/** Node's file read: null when the file does not exist. */
export function nodeReadFile(p: string): Uint8Array | null {
  try {
    return readFileSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** sha256 of a file's current content; null when it does not exist. */
export function fileSha256(readFile: ReadFile, path: string): string | null {
  const b = readFile(path);
  return b === null ? null : createHash('sha256').update(b).digest('hex');
}

/**
 * True when the file a write preview was made against is unchanged (or the preview binds to
 * no file). An approval covers exactly what was shown: when this is false the call must be
 * held again.
 */
export function isPreviewCurrent(readFile: ReadFile, ev: Pick<Evaluation, 'preview'>): boolean {
  const p = ev.preview;
  if (p === undefined || p.file_sha256 === undefined || p.path === undefined) return true;
  try {
    return fileSha256(readFile, p.path) === p.file_sha256;
  } catch {
    return false;
  }
}

/** The preview of one call: its command (shell), its diff (a write), else its arguments. */
export function previewOf(
  tool_id: string,
  tool: ToolCallFacts['tool'],
  args: unknown,
  shellCall: boolean,
  assessment: RiskAssessment | undefined,
  paths: ReturnType<PathSandbox['resolve']>,
  principal: ToolCallFacts['principal'],
  sandbox: PathSandbox,
  readFile: ReadFile,
): Preview {
  const record =
    typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : undefined;
  if (record !== undefined && assessment !== undefined && shellCall)
    return commandPreview(
      record,
      assessment,
      paths.list.find((p) => p.arg === 'cwd')?.path ?? sandbox.baseFor(principal),
    );
  if (record !== undefined && isWriteTool(tool_id, tool)) {
    const w = writePreview(tool_id, record, paths, readFile);
    if (w !== null) return w;
  }
  return argsPreview(args);
}
