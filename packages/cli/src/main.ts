import { readFileSync } from 'node:fs';

import { Command, CommanderError } from 'commander';

import { registerApprovals } from './commands/approvals.js';
import { registerAudit } from './commands/audit.js';
import { registerConsole } from './commands/console.js';
import { registerDaemon } from './commands/daemon.js';
import { registerDoctor } from './commands/doctor.js';
import { registerEvents } from './commands/events.js';
import { registerHook } from './commands/hook.js';
import { registerMcp } from './commands/mcp.js';
import { registerModule } from './commands/module.js';
import { registerPolicy } from './commands/policy.js';
import { registerRouter } from './commands/router.js';
import { registerRun } from './commands/run.js';
import { registerSafety } from './commands/safety.js';
import { registerSend } from './commands/send.js';
import { registerTasks } from './commands/tasks.js';
import { registerToken } from './commands/token.js';
import { registerTool } from './commands/tool.js';
import { registerUi } from './commands/ui.js';
import { registerUndo } from './commands/undo.js';
import type { CliIo, RunOptions, RunState } from './context.js';
import { EXIT } from './exit-codes.js';
import { colorEnabled, makeColors, Output } from './output.js';
import { reportError } from './render-error.js';

function cliVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

const EXIT_HELP = `
Exit codes: 0 ok · 1 error · 2 usage · 3 daemon not running · 4 auth · 5 not found ·
            6 timeout · 7 module failure · 8 denied/locked · 130 interrupted
Environment: FINGER_HOME (default ~/.finger; one daemon per home), FINGER_PORT (daemon start:
             port, default 7770; 0 picks a free one), FINGER_HOST, FINGER_URL, FINGER_TOKEN,
             FINGER_TOKEN_FILE, NO_COLOR`;

/** Builds the `myfinger` commander program; actions record their exit code in `state`. */
export function buildProgram(state: RunState): Command {
  const { io } = state;
  const program = new Command('myfinger');
  program
    .description('myfinger: control the finger daemon (governed message hub and human-decision firewall)')
    .version(cliVersion(), '-V, --version')
    .option('--json', 'print JSON for scripts (errors as {"error":{…}} on stdout)')
    .option('--home <dir>', 'FINGER_HOME to use (default: $FINGER_HOME or ~/.finger)')
    .option('--url <url>', 'daemon URL (default: $FINGER_URL, else daemon.json, else http://127.0.0.1:7770)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
      outputError: (s, write) => write(makeColors(colorEnabled(io.stderr, io.env)).red(s)),
    })
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError('(add --help for usage)')
    .addHelpText('after', EXIT_HELP);
  registerDaemon(program, state);
  registerDoctor(program, state);
  registerSend(program, state);
  registerModule(program, state);
  registerTool(program, state);
  registerEvents(program, state);
  registerToken(program, state);
  registerUndo(program, state);
  registerApprovals(program, state);
  registerAudit(program, state);
  registerPolicy(program, state);
  registerRouter(program, state);
  registerRun(program, state);
  registerTasks(program, state);
  registerSafety(program, state);
  registerHook(program, state);
  registerMcp(program, state);
  registerConsole(program, state);
  registerUi(program, state);
  return program;
}

/**
 * Runs `myfinger` with the user arguments `argv` (no node/script prefix) and resolves with the
 * exit code; never calls process.exit. Streams, environment and interrupt signal come from
 * `options` (tests capture output this way) and default to the process's own.
 */
export async function run(argv: string[], options: RunOptions = {}): Promise<number> {
  const io: CliIo = {
    stdout: options.stdout ?? process.stdout,
    stderr: options.stderr ?? process.stderr,
    env: options.env ?? process.env,
    pollIntervalMs: options.pollIntervalMs ?? 250,
  };
  if (options.signal) io.signal = options.signal;
  if (options.daemonEntry) io.daemonEntry = options.daemonEntry;
  const state: RunState = { io, exitCode: EXIT.OK, cleanups: [] };
  try {
    await buildProgram(state).parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) {
      // help/version exit 0; usage errors were already printed by commander.
      state.exitCode = e.exitCode === 0 ? EXIT.OK : EXIT.USAGE;
      if (state.exitCode !== EXIT.OK && argv.includes('--json')) {
        new Output(io, true).printJson({ error: { code: 'E_USAGE', message: e.message.replace(/^error: /, '') } });
      }
    } else {
      state.exitCode = reportError(new Output(io, argv.includes('--json')), e);
    }
  } finally {
    for (const f of state.cleanups) f();
  }
  return state.exitCode;
}
