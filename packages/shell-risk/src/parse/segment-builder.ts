// Builds one SimpleCommand from its evaluated words: argv, which program it runs (a bare name, an
// absolute path's basename, or a local binary), which words hold run-time values.

import { posix } from 'node:path';

import type { Assignment, Redirect, SimpleCommand } from '../command-model.js';
import type { Word } from '../wrappers/expansion.js';
import { stripInvisible } from './unicode.js';
import type { WalkContext } from './walk-context.js';

/** The segment of one simple command (or wrapped command) as the walk found it; pure. */
export function buildSegment(
  words: Word[],
  assignments: Assignment[],
  redirects: Redirect[],
  ctx: WalkContext,
): SimpleCommand {
  const argv = words.map((w) => w.text);
  const dynamic: number[] = [];
  words.forEach((w, i) => {
    if (w.dynamic) dynamic.push(i);
  });
  const path = argv[0] ?? '';
  const unknown = words.length > 0 && (words[0] as Word).dynamic;
  let program = '';
  let local = false;
  if (!unknown && path !== '') {
    if (!path.includes('/')) program = path;
    else if (path.startsWith('/') || path.startsWith('~')) program = posix.basename(path);
    else {
      program = path;
      local = true;
    }
  }
  const seg: SimpleCommand = {
    argv,
    program,
    path,
    name: unknown ? '' : posix.basename(stripInvisible(path)),
    dynamic,
    assignments,
    redirects,
    via: ctx.via,
    wrapper: false,
    local_binary: local,
    unknown_program: unknown,
    unknown_tail: ctx.unknownTail === true,
    pipeline: ctx.pipeline,
  };
  if (ctx.findBroad !== undefined) seg.find_broad = ctx.findBroad;
  return seg;
}
