#!/usr/bin/env node
// The `myfinger` command: a committed shim that loads the compiled CLI from ../dist.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * V8 flags of a long-running daemon: a bounded young generation keeps the idle daemon's resident
 * memory low (the default lets it grow to tens of MB during start and never shrink), large
 * enough (8 MB) that calls in flight are not all promoted to the old generation, and an old
 * generation that grows to twice what was live before its next full GC, not four times (see
 * DAEMON_NODE_FLAGS in src/commands/daemon.ts, which this keeps in step with).
 */
const DAEMON_NODE_FLAGS = ['--max-semi-space-size=8', '--heap-growing-percent=100'];

/** Agents whose hook runs the lean entry (keep in step with HOOK_AGENTS in src/commands/hook-map.ts). */
const HOOK_AGENTS = ['claude', 'codex', 'cursor', 'copilot'];

/**
 * An explicit deny in a hook agent's own format (keep in step with denyAnswer in
 * src/commands/hook-answer.ts): used when the compiled hook cannot even load, since every agent's
 * hook fails open on a crash (Codex on exit 1) — exit 2 and a deny make it refuse the call.
 */
function hookDeny(agent, reason) {
  const out =
    agent === 'cursor'
      ? { permission: 'deny', user_message: `finger: ${reason}`, agent_message: reason }
      : agent === 'copilot'
        ? { permissionDecision: 'deny', permissionDecisionReason: reason }
        : {
            hookSpecificOutput: {
              hookEventName: 'PreToolUse',
              permissionDecision: 'deny',
              permissionDecisionReason: reason,
            },
          };
  process.stdout.write(`${JSON.stringify(out)}\n`);
  process.stderr.write(`finger: ${reason}\n`);
  process.exitCode = 2;
}

const entry = new URL('../dist/main.js', import.meta.url);
const args = process.argv.slice(2);
const hookAgent = args[0] === 'hook' && HOOK_AGENTS.includes(args[1]) ? args[1] : undefined;
if (!existsSync(entry)) {
  const why = 'myfinger is not built; run npm install (or npm run build) in the repo';
  if (hookAgent !== undefined) {
    hookDeny(hookAgent, `${why} (refused: the hook cannot get finger's verdict)`);
    process.exit();
  }
  process.stderr.write(`${why}\n`);
  process.exit(1);
}
const foregroundDaemon = args[0] === 'daemon' && args[1] === 'start' && args.includes('--foreground');
if (foregroundDaemon && !DAEMON_NODE_FLAGS.every((f) => process.execArgv.includes(f))) {
  // run the foreground daemon in a node with the daemon flags; signals go to it, its exit is ours
  // (child_process loaded here only: with net and dgram it costs every hook process start-up time)
  const { spawn } = await import('node:child_process');
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
  if (hookAgent !== undefined) {
    // an agent's pre/post-tool hook: the lean entry (no commander, no other command) — start-up is its cost
    let runHook;
    try {
      ({ runHook } = await import(new URL('../dist/commands/hook-run.js', import.meta.url).href));
    } catch (e) {
      runHook = undefined;
      hookDeny(hookAgent, `the hook cannot load (${e instanceof Error ? e.message : String(e)}): refused`);
    }
    if (runHook !== undefined)
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
