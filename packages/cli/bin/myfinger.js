#!/usr/bin/env node
// The `myfinger` command: a committed shim that loads the compiled CLI from ../dist.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * V8 flags of a long-running daemon: a small young generation keeps the idle daemon's resident
 * memory low (the default lets it grow to tens of MB during start and never shrink). Keep in
 * step with DAEMON_NODE_FLAGS in src/commands/daemon.ts.
 */
const DAEMON_NODE_FLAGS = ['--max-semi-space-size=1'];

/** Agents whose hook runs the lean entry (keep in step with HOOK_AGENTS in src/commands/hook-map.ts). */
const HOOK_AGENTS = ['claude', 'codex', 'cursor', 'copilot'];

const entry = new URL('../dist/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('myfinger is not built; run npm install (or npm run build) in the repo\n');
  process.exit(1);
}
const args = process.argv.slice(2);
const foregroundDaemon = args[0] === 'daemon' && args[1] === 'start' && args.includes('--foreground');
if (foregroundDaemon && !DAEMON_NODE_FLAGS.every((f) => process.execArgv.includes(f))) {
  // run the foreground daemon in a node with the daemon flags; signals go to it, its exit is ours
  const child = spawn(
    process.execPath,
    [...process.execArgv, ...DAEMON_NODE_FLAGS, fileURLToPath(import.meta.url), ...args],
    {
      stdio: 'inherit',
    },
  );
  // Ctrl-C reaches the child through the terminal's process group: forwarding SIGINT too would
  // count as a second interrupt (immediate exit). Signals sent to this pid alone are forwarded.
  process.on('SIGINT', () => undefined);
  for (const sig of ['SIGTERM', 'SIGHUP']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 : 1)));
} else {
  // `myfinger tool list | head`: a reader that closed early is not an error of ours
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e) => {
      if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw e;
    });
  }
  if (args[0] === 'hook' && HOOK_AGENTS.includes(args[1])) {
    // an agent's pre/post-tool hook: the lean entry (no commander, no other command) — start-up is its cost
    const { runHook } = await import(new URL('../dist/commands/hook-run.js', import.meta.url).href);
    process.exitCode = await runHook(args, {
      stdin: process.stdin,
      stdout: process.stdout,
      stderr: process.stderr,
      env: process.env,
    });
  } else {
    const { run } = await import(entry.href);
    process.exitCode = await run(args);
  }
}
