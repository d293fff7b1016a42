import type { Command } from 'commander';

import type { CreatedToken, TokenInfo } from '../api-types.js';
import { seg } from '../client.js';
import { action, type RunState } from '../context.js';
import { EXIT } from '../exit-codes.js';

interface CreateOptions {
  name: string;
  role: string;
}

/**
 * `token create --name N --role R | list | revoke N` over /v1/tokens (admin). `create` prints the
 * secret once; the daemon keeps only its hash.
 */
export function registerToken(program: Command, state: RunState): void {
  const token = program.command('token').description('mint, list and revoke API tokens (admin)');

  token
    .command('create')
    .description('mint a token (printed once)')
    .requiredOption('--name <name>', 'token name')
    .requiredOption(
      '--role <role>',
      'admin | operator | viewer | agent:supervisor | agent:executor | agent:reviewer | agent:delegated (an agent hook: myfinger hook install)',
    )
    .action(
      action<CreateOptions>(state, async (ctx, _args, opts) => {
        const client = await ctx.client();
        const { body } = await client.post<CreatedToken>('/v1/tokens', { name: opts.name, role: opts.role });
        const out = ctx.out;
        if (out.json) {
          out.printJson(body);
        } else {
          out.line(`created token ${out.c.bold(body.name)} (role ${body.role}):`);
          out.line();
          out.line(`  ${body.token}`);
          out.line();
          out.line(out.c.yellow('Copy it now: it will not be shown again (the daemon stores only its hash).'));
        }
        return EXIT.OK;
      }),
    );

  token
    .command('list')
    .description('list tokens (names and roles, never secrets)')
    .action(
      action(state, async (ctx) => {
        const client = await ctx.client();
        const { tokens } = await client.get<{ tokens: TokenInfo[] }>('/v1/tokens');
        if (ctx.out.json) ctx.out.printJson({ tokens });
        else if (!tokens.length) ctx.out.line('no tokens');
        else
          ctx.out.table(
            ['NAME', 'ROLE', 'CREATED', 'LAST_USED'],
            tokens.map((t) => [t.name, t.role, t.created_at, t.last_used_at ?? '-']),
          );
        return EXIT.OK;
      }),
    );

  token
    .command('revoke')
    .description('revoke a token by name')
    .argument('<name>', 'token name')
    .action(
      action(state, async (ctx, [name = '']) => {
        const client = await ctx.client();
        const res = await client.delete<{ name: string; revoked: boolean }>(`/v1/tokens/${seg(name)}`);
        if (ctx.out.json) ctx.out.printJson(res);
        else ctx.out.line(`token ${res.name} revoked`);
        return EXIT.OK;
      }),
    );
}
