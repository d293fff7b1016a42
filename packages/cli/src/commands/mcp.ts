import type { Command } from 'commander';

import { FingerError } from '@finger/protocol';

import { action, type RunState } from '../context.js';
import { EXIT } from '../exit-codes.js';
import { relayStdio } from './mcp-relay.js';

/** The MCP clients `myfinger mcp config` knows. */
export const MCP_CLIENTS = ['claude', 'codex', 'cursor', 'vscode'] as const;
export type McpClientName = (typeof MCP_CLIENTS)[number];

/** The variable the snippets read the agent token from (never written into a file). */
export const MCP_TOKEN_ENV = 'FINGER_MCP_TOKEN';

/**
 * What to add to `client`'s settings to put finger in front of its tools: the file, and its text
 * (HTTP straight to `<url>/mcp` where the client speaks it, else the `myfinger mcp` stdio relay).
 * The token stays in {@link MCP_TOKEN_ENV}: mint one with an agent role first.
 */
export function mcpConfigSnippet(client: McpClientName, url: string): { file: string; text: string; note: string } {
  const endpoint = `${url}/mcp`;
  const mint = `myfinger token create --role agent:executor --name ${client}-mcp   # then: export ${MCP_TOKEN_ENV}=<the token>`;
  switch (client) {
    case 'claude':
      return {
        file: '.mcp.json (project) — or run: claude mcp add --transport http finger ' + endpoint,
        text: JSON.stringify(
          {
            mcpServers: {
              finger: { type: 'http', url: endpoint, headers: { Authorization: `Bearer \${${MCP_TOKEN_ENV}}` } },
            },
          },
          null,
          2,
        ),
        note: mint,
      };
    case 'codex':
      return {
        file: '~/.codex/config.toml',
        text: [
          '[mcp_servers.finger]',
          'command = "myfinger"',
          'args = ["mcp"]',
          `env_vars = ["${MCP_TOKEN_ENV}"]`,
          `env = { FINGER_URL = "${url}" }`,
        ].join('\n'),
        note: mint,
      };
    case 'cursor':
      return {
        file: '.cursor/mcp.json (project) or ~/.cursor/mcp.json',
        text: JSON.stringify(
          { mcpServers: { finger: { url: endpoint, headers: { Authorization: `Bearer \${env:${MCP_TOKEN_ENV}}` } } } },
          null,
          2,
        ),
        note: mint,
      };
    case 'vscode':
      return {
        file: '.vscode/mcp.json',
        text: JSON.stringify(
          {
            inputs: [{ type: 'promptString', id: 'finger-token', description: 'finger agent token', password: true }],
            servers: {
              finger: { type: 'http', url: endpoint, headers: { Authorization: 'Bearer ${input:finger-token}' } },
            },
          },
          null,
          2,
        ),
        note: mint.replace(/ {3}# then.*$/, '   # VS Code asks for it once'),
      };
  }
}

/** `myfinger mcp` (stdio relay to the gateway) and `myfinger mcp config <client>`. */
export function registerMcp(program: Command, state: RunState): void {
  const mcp = program
    .command('mcp')
    .description(
      `a stdio MCP server relaying to the daemon's /mcp gateway (token: $${MCP_TOKEN_ENV}, else the usual one); \`mcp config <client>\` prints the settings snippet`,
    )
    .action(
      action(state, async (ctx) => {
        const loc = await ctx.locate();
        const token = ctx.io.env[MCP_TOKEN_ENV] ?? loc.token;
        await relayStdio({
          url: `${loc.url}/mcp`,
          token,
          stdin: process.stdin,
          stdout: process.stdout,
          log: (line) => void ctx.io.stderr.write(`${line}\n`),
          signal: ctx.interrupt(),
        });
        return EXIT.OK;
      }),
    );
  mcp
    .command('config')
    .description(`print what to add to an MCP client's settings to use finger (${MCP_CLIENTS.join(', ')})`)
    .argument('<client>', MCP_CLIENTS.join(' | '))
    .action(
      action(state, async (ctx, args) => {
        const client = args[0] as McpClientName;
        if (!(MCP_CLIENTS as readonly string[]).includes(client))
          throw new FingerError(
            'E_INVALID_ARGS',
            `unknown MCP client ${JSON.stringify(client)}: one of ${MCP_CLIENTS.join(', ')}`,
            {
              client,
            },
          );
        const loc = await ctx.locate();
        const s = mcpConfigSnippet(client, loc.url);
        if (ctx.out.json) {
          ctx.out.printJson({ client, url: `${loc.url}/mcp`, ...s });
          return EXIT.OK;
        }
        ctx.out.line(`# 1. ${s.note}`);
        ctx.out.line(`# 2. add to ${s.file}:`);
        ctx.out.line(s.text);
        return EXIT.OK;
      }),
    );
}
