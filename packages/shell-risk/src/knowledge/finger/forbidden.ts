// Forbidden findings: what no agent may do whatever the policy, grants, adaptations or standing
// answers say — touch finger's own home or guarded files (every path under FINGER_HOME, after
// `..`, `~`, `$FINGER_HOME`, the segment's directory and symbolic links), or steer and stop
// finger itself (self-governance.ts). The permission layer turns each into DENY for an
// AI-initiated call (policy/evaluate-policy.ts); for a person they stay `dangerous` (APPROVE).

import type { CommandModel } from '../../command-model.js';
import { subcommandWords } from '../../options/subcommand-words.js';
import type { Directories } from '../places/cwd-paths.js';
import { pathParts } from '../places/path-parts.js';
import type { RealPaths } from '../places/real-paths.js';
import { fingerPathsInText } from './finger-home-text.js';
import { fingerPlaceOf } from './finger-home-words.js';
import type { FingerSelf } from './finger-self.js';
import { selfGovernanceRules } from './self-governance.js';

/** The reason every forbidden finding is shown with. */
export const FORBIDDEN_REASON = "finger's own API/home: an agent must not govern its own firewall";

const HEREDOC = new Set(['<<', '<<-', '<<<']);

function quote(s: string): string {
  return `'${s.length > 80 ? `${s.slice(0, 77)}…` : s}'`;
}

/** The forbidden findings of a command: what it reaches of finger's files, and how it steers finger. */
export interface ForbiddenFindings {
  /** finger's home and guarded files the command's words reach (their level is the other rules'). */
  files: string[];
  /** requests to the daemon, the CLI, signals to its process (these are `dangerous` as well) */
  governs: string[];
}

/**
 * The forbidden findings of a command (one line each, naming the segment and what it reaches);
 * `directories(i)`: where segment i runs (cwd-paths.ts); `raw`: the command as written.
 */
export function forbiddenFindings(
  model: CommandModel,
  raw: string,
  directories: (i: number) => Directories,
  real: RealPaths,
  self: FingerSelf,
): ForbiddenFindings {
  const files: string[] = [];
  const governs: string[] = [];
  const seen = new Set<string>();
  const into =
    (out: string[]) =>
    (reason: string): void => {
      if (!seen.has(reason)) {
        seen.add(reason);
        out.push(reason);
      }
    };
  const forbid = into(files);
  const check = (label: string, words: readonly string[], dirs: Directories): void => {
    for (const w of words) {
      for (const part of pathParts(w)) {
        const hit = fingerPlaceOf(part, dirs, real, self);
        if (hit === null) continue;
        forbid(`${label}: ${quote(w)} reaches finger's own files (${hit.place}: ${hit.to})`);
        break;
      }
    }
  };
  model.segments.forEach((seg, i) => {
    const label = `segment ${i + 1}`;
    const dirs = directories(i);
    // a subcommand word (`git status`) is no path; a program run by path is one
    const verbs = subcommandWords(seg);
    const words = seg.argv.filter((w, k) => (k > 0 && !verbs.includes(k)) || (k === 0 && w.includes('/')));
    check(label, words, dirs);
    check(
      label,
      seg.redirects.filter((r) => !HEREDOC.has(r.op)).map((r) => r.target),
      dirs,
    );
    check(
      label,
      seg.assignments.map((a) => a.value),
      dirs,
    );
  });
  for (const loop of model.loop_variables ?? [])
    check(`the loop over '$${loop.name}'`, loop.words, directories(loop.at));
  // paths the shell does not pass as words: inline code, here-documents, strings read at run time
  if (files.length === 0)
    for (const hit of fingerPathsInText(raw, self, real.homes))
      forbid(`the command's text names finger's own files: ${hit}`);
  selfGovernanceRules(model, raw, self, into(governs), real.homes);
  return { files, governs };
}
