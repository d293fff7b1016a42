import os from 'node:os';
import { fileURLToPath } from 'node:url';

import type { Command } from 'commander';

import { action, type RunState } from '../context.js';
import { ApiError, CliError } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import {
  allWirings,
  type HookChange,
  hookCommand,
  type HookScope,
  installHooks,
  settingsPath,
  uninstallHooks,
  writeHookToken,
} from './hook-install.js';
import { type HookAgent, isHookAgent } from './hook-map.js';
import { hookTokenPath, runHook } from './hook-run.js';

interface ScopeOptions {
  project?: boolean;
  user?: boolean;
  dir?: string;
  holdMs?: string;
  pending?: string;
}

function agentOf(name: string | undefined): HookAgent {
  if (!isHookAgent(name))
    throw new CliError('E_USAGE', `unknown agent ${JSON.stringify(name)}: one of claude, codex, cursor, copilot`);
  return name;
}

function scopeOf(o: ScopeOptions): HookScope {
  if (o.project === true && o.user === true) throw new CliError('E_USAGE', 'give --project or --user, not both');
  return o.user === true ? 'user' : 'project';
}

function describe(c: HookChange): string {
  const w = c.wiring;
  const closed = w.fail_closed ? 'fails closed' : 'fails closed only by the hook’s own deny (the agent has no switch)';
  return `${w.agent} (${w.scope}): ${c.file}${c.changed ? '' : ' (already so)'}${c.backup ? `, backup ${c.backup}` : ''}${w.wired ? `; ${closed}` : ''}`;
}

/**
 * `hook <agent>` (what the agent's hook runs: normally the bin shim's lean entry answers it),
 * `hook install <agent> [--project|--user]` (mints the agent's `agent:delegated` token into
 * `<home>/hooks/<agent>.token`, merges finger's entries into the agent's settings file, backup
 * kept), `hook uninstall <agent>`, `hook status` (which agents are wired, fail-closed or not).
 */
export function registerHook(program: Command, state: RunState): void {
  const hook = program
    .command('hook')
    .description('put finger in front of Claude Code, Codex, Cursor or Copilot (their pre/post-tool hooks)')
    .argument('[agent]', 'claude | codex | cursor | copilot: answer one hook payload on stdin')
    .allowUnknownOption(true)
    .action(
      action(state, async (ctx, [agent]) => {
        const a = agentOf(agent);
        const stdin = (ctx.io as { stdin?: NodeJS.ReadableStream }).stdin ?? process.stdin;
        return runHook(['hook', a], { stdin, stdout: ctx.io.stdout, stderr: ctx.io.stderr, env: ctx.io.env });
      }),
    );

  const scoped = (c: Command): Command =>
    c
      .option('--project', "the project's settings file (in --dir, default the current directory)")
      .option('--user', "the user's settings file (in $HOME)")
      .option('--dir <dir>', 'the project directory (default: the current directory)');

  scoped(
    hook
      .command('install')
      .description(
        "wire finger into an agent's settings (idempotent; the previous file is kept as <file>.finger-backup)",
      )
      .argument('<agent>', 'claude | codex | cursor | copilot')
      .option(
        '--hold-ms <ms>',
        'how long a held call waits for a person before the hook answers (below the agent’s hook timeout)',
      )
      .option('--pending <ask|deny>', 'Claude Code, Copilot: a still-pending hold asks the user (default) or denies'),
  ).action(
    action<ScopeOptions>(state, async (ctx, [name], opts) => {
      const agent = agentOf(name);
      const scope = scopeOf(opts);
      const userHome = ctx.io.env.HOME ?? os.homedir();
      const file = settingsPath(agent, scope, opts.dir ?? process.cwd(), userHome);
      const extra: string[] = [];
      if (opts.holdMs !== undefined) {
        if (!/^\d+$/.test(opts.holdMs)) throw new CliError('E_USAGE', '--hold-ms must be a whole number of ms');
        extra.push('--hold-ms', opts.holdMs);
      }
      if (opts.pending !== undefined) {
        if (opts.pending !== 'ask' && opts.pending !== 'deny')
          throw new CliError('E_USAGE', '--pending must be ask or deny');
        extra.push('--pending', opts.pending);
      }
      // the agent's own token: an agent principal (agent:delegated) that may ask for verdicts and nothing else
      const tokenFile = hookTokenPath(ctx.home, agent);
      const client = await ctx.client();
      const name_ = `hook-${agent}`;
      let created: { token: string };
      try {
        created = (await client.post<{ token: string }>('/v1/tokens', { name: name_, role: 'agent:delegated' })).body;
      } catch (e) {
        if (!(e instanceof ApiError) || e.code !== 'E_CONFLICT') throw e;
        // a token of that name exists (a lost token file, or a reinstall): replaced
        await client.delete(`/v1/tokens/${name_}`);
        created = (await client.post<{ token: string }>('/v1/tokens', { name: name_, role: 'agent:delegated' })).body;
      }
      await writeHookToken(tokenFile, created.token);
      const bin = fileURLToPath(new URL('../../bin/myfinger.js', import.meta.url));
      const homeArgs = ctx.globals.home !== undefined ? ['--home', ctx.home] : [];
      const change = await installHooks(
        agent,
        scope,
        file,
        hookCommand(agent, process.execPath, bin, [...extra, ...homeArgs]),
      );
      if (ctx.out.json) ctx.out.printJson({ ...change, token_file: tokenFile, token_name: name_ });
      else {
        ctx.out.line(`wired ${describe(change)}`);
        ctx.out.line(`token ${name_} (agent:delegated) in ${tokenFile}`);
      }
      return EXIT.OK;
    }),
  );

  scoped(
    hook
      .command('uninstall')
      .description("remove finger's entries from an agent's settings (the rest of the file is kept)")
      .argument('<agent>', 'claude | codex | cursor | copilot'),
  ).action(
    action<ScopeOptions>(state, async (ctx, [name], opts) => {
      const agent = agentOf(name);
      const scope = scopeOf(opts);
      const file = settingsPath(agent, scope, opts.dir ?? process.cwd(), ctx.io.env.HOME ?? os.homedir());
      const change = await uninstallHooks(agent, scope, file);
      if (ctx.out.json) ctx.out.printJson(change);
      else
        ctx.out.line(`unwired ${change.wiring.agent} (${scope}): ${file}${change.changed ? '' : ' (was not wired)'}`);
      return EXIT.OK;
    }),
  );

  hook
    .command('status')
    .description('which agents are wired to finger here and for this user, and whether they fail closed')
    .option('--dir <dir>', 'the project directory (default: the current directory)')
    .action(
      action<{ dir?: string }>(state, async (ctx, _args, opts) => {
        const ws = (await allWirings(opts.dir ?? process.cwd(), ctx.io.env.HOME ?? os.homedir())).filter(
          (w) => w.wired,
        );
        if (ctx.out.json) ctx.out.printJson({ wired: ws });
        else if (ws.length === 0) ctx.out.line('no agent is wired to finger (myfinger hook install <agent>)');
        else
          ctx.out.table(
            ['AGENT', 'SCOPE', 'FAILS CLOSED', 'POST', 'FILE'],
            ws.map((w) => [
              w.agent,
              w.scope,
              w.fail_closed ? 'yes' : 'no (hook denies itself)',
              w.post ? 'yes' : 'no',
              w.file,
            ]),
          );
        return EXIT.OK;
      }),
    );
}
