import { readFileSync } from 'node:fs';

import { Command, CommanderError } from 'commander';

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

type Register = (program: Command, state: RunState) => void;
/** A command module: the top-level commands it registers, and how to load its register function. */
interface CommandModule {
  names: readonly string[];
  load: () => Promise<Register>;
}

/**
 * Every command module, in the order `--help` lists them. Each is imported only when needed
 * (start-up time: `myfinger approvals` loads the approvals module, not the console's Ink or the
 * daemon's): a new command module goes here with the top-level names it registers.
 */
const COMMANDS: readonly CommandModule[] = [
  { names: ['daemon'], load: async () => (await import('./commands/daemon.js')).registerDaemon },
  { names: ['doctor'], load: async () => (await import('./commands/doctor.js')).registerDoctor },
  { names: ['send', 'request'], load: async () => (await import('./commands/send.js')).registerSend },
  { names: ['module'], load: async () => (await import('./commands/module.js')).registerModule },
  { names: ['tool'], load: async () => (await import('./commands/tool.js')).registerTool },
  { names: ['events'], load: async () => (await import('./commands/events.js')).registerEvents },
  { names: ['token'], load: async () => (await import('./commands/token.js')).registerToken },
  { names: ['undo'], load: async () => (await import('./commands/undo.js')).registerUndo },
  {
    names: ['approvals', 'approve', 'reject'],
    load: async () => (await import('./commands/approvals.js')).registerApprovals,
  },
  { names: ['audit'], load: async () => (await import('./commands/audit.js')).registerAudit },
  { names: ['policy'], load: async () => (await import('./commands/policy.js')).registerPolicy },
  { names: ['router'], load: async () => (await import('./commands/router.js')).registerRouter },
  { names: ['run'], load: async () => (await import('./commands/run.js')).registerRun },
  { names: ['tasks'], load: async () => (await import('./commands/tasks.js')).registerTasks },
  { names: ['halt', 'unlock'], load: async () => (await import('./commands/safety.js')).registerSafety },
  { names: ['hook'], load: async () => (await import('./commands/hook.js')).registerHook },
  { names: ['mcp'], load: async () => (await import('./commands/mcp.js')).registerMcp },
  { names: ['console'], load: async () => (await import('./commands/console.js')).registerConsole },
  { names: ['ui'], load: async () => (await import('./commands/ui.js')).registerUi },
];

/** Options of the program itself that take a value (the word after them is not a command). */
const VALUE_OPTIONS = new Set(['--home', '--url']);

/**
 * The register functions `argv` needs: only the named command's module when the first word that
 * is not a global option names one; every module otherwise (no command, `--help`, a typo: the
 * help and commander's suggestions list them all); none for `--version`.
 */
export async function commandsFor(argv: readonly string[]): Promise<Register[]> {
  let word: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (VALUE_OPTIONS.has(a)) i++;
    else if (!a.startsWith('-')) {
      word = a;
      break;
    }
  }
  // `myfinger --version` needs no command at all
  if (word === undefined && (argv.includes('--version') || argv.includes('-V')) && !argv.includes('--help')) return [];
  const one = word === undefined ? undefined : COMMANDS.find((c) => c.names.includes(word));
  return Promise.all((one ? [one] : COMMANDS).map((c) => c.load()));
}

/**
 * Builds the `myfinger` commander program with the commands of `commands` (default: every one,
 * see {@link commandsFor}); actions record their exit code in `state`.
 */
export async function buildProgram(state: RunState, commands?: readonly Register[]): Promise<Command> {
  commands ??= await commandsFor([]);
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
  for (const register of commands) register(program, state);
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
    const program = await buildProgram(state, await commandsFor(argv));
    await program.parseAsync(argv, { from: 'user' });
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
