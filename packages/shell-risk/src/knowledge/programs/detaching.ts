// Commands that detach from the call that starts them: `setsid`, `nohup`, `disown`, `&`, `daemon`,
// `start-stop-daemon`, `systemd-run`, `at`/`batch`, `screen -d…`, `tmux new -d`, `dtach -n`.
// Without an OS sandbox (a PID namespace per call) what they start outlives the call's timeout
// and the kill switch: the RiskAssessor built with `contained: false` makes them `dangerous`
// (APPROVE) with the reason below.

import type { CommandModel, SimpleCommand } from '../../command-model.js';

/** The reason a detaching command is held with when nothing contains it. */
export const DETACHES = 'detaches from its call: no sandbox to stop it';

const ALWAYS = new Set(['setsid', 'nohup', 'disown', 'daemon', 'daemonize', 'start-stop-daemon', 'systemd-run']);
const TMUX_NEW = /^(?:new|new-session|neww|new-window|splitw|split-window)$/;

/** Whether a segment starts something that outlives it. */
function detaches(seg: SimpleCommand): boolean {
  const p = seg.program;
  const args = seg.argv.slice(1);
  if (ALWAYS.has(p)) return true;
  if (p === 'at' || p === 'batch') return !args.some((a) => /^-[a-zA-Z]*[lrdc]/.test(a));
  if (p === 'screen') return args.some((a) => /^-[a-zA-Z]*[dD]/.test(a));
  if (p === 'tmux') return args.some((a) => TMUX_NEW.test(a)) && args.some((a) => /^-[a-zA-Z]*d/.test(a));
  if (p === 'dtach') return args.some((a) => a === '-n' || a === '-A');
  return false;
}

/** One reason per detaching segment, and one for a background `&` anywhere. */
export function detachingFindings(model: CommandModel): string[] {
  const out: string[] = [];
  model.segments.forEach((seg, i) => {
    if (detaches(seg)) out.push(`segment ${i + 1}: ${seg.program} ${DETACHES}`);
  });
  if (model.flags.background) out.push(`a command run in the background (&) ${DETACHES}`);
  return out;
}
