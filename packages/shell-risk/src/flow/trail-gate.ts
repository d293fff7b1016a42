// The cheap test in front of secret-flow.ts: most commands neither send anything nor keep a value
// between segments, and then no secret can travel to a sender through a variable, file or loop.

import type { CommandModel } from '../command-model.js';
import { FILE_WRITERS } from '../knowledge/places/written-files.js';
import { isInterpreter } from '../knowledge/programs/programs.js';
import { READERS } from '../knowledge/programs/read-builtins.js';
import { NETWORK_PROGRAMS } from './exfiltration.js';
import { CLOUD_CLIS } from './network-files.js';

const DEV_SOCKET = /^\/dev\/(?:tcp|udp)\//;

/**
 * Whether a secret can reach a sender through a variable, a file or a loop at all (a cheap test):
 * something sends (a network program, a cloud CLI, an interpreter, a `/dev/tcp` redirect) and
 * something keeps a value (an assignment, read, a loop, a function, a file write, exec).
 */
export function mayCarrySecrets(model: CommandModel): boolean {
  let sends = false;
  let keeps = model.loop_variables !== undefined || model.functions !== undefined;
  for (const s of model.segments) {
    const p = s.program;
    sends ||= NETWORK_PROGRAMS.has(p) || CLOUD_CLIS.has(p) || isInterpreter(p);
    sends ||= p === 'git' && s.argv.includes('push');
    keeps ||= s.assignments.length > 0 || READERS.has(p) || FILE_WRITERS.has(p) || p === 'exec' || p === 'find';
    keeps ||= p === 'printf' && s.argv[1] === '-v';
    for (const r of s.redirects) {
      keeps ||= r.is_write;
      sends ||= DEV_SOCKET.test(r.target);
    }
    if (sends && keeps) return true;
  }
  return false;
}
