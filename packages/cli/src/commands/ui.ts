import { spawn } from 'node:child_process';

import type { Command } from 'commander';

import type { DaemonClient } from '../client.js';
import { action, type RunState } from '../context.js';
import { EXIT } from '../exit-codes.js';

/** A one-time sign-in link to the web console (`POST /v1/session/links`). */
export interface SignInLink {
  url: string;
  expires_at: string;
}

/** Asks the daemon for a one-time sign-in link for the caller's token (single use, 120 s). */
export async function signInLink(client: DaemonClient): Promise<SignInLink> {
  return (await client.post<SignInLink>('/v1/session/links', {})).body;
}

/** The program that opens a URL in the desktop's browser here, or undefined when there is none. */
function opener(platform: NodeJS.Platform): string | undefined {
  if (platform === 'darwin') return 'open';
  if (platform === 'linux' || platform === 'freebsd' || platform === 'openbsd') return 'xdg-open';
  return undefined;
}

/**
 * Starts the desktop's URL opener on `url`, detached, and resolves true once it started (false
 * when there is none here or it could not start). The link is printed either way.
 */
function openInBrowser(url: string): Promise<boolean> {
  const cmd = opener(process.platform);
  if (!cmd) return Promise.resolve(false);
  return new Promise((resolve) => {
    const child = spawn(cmd, [url], { detached: true, stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}

/** `myfinger ui [--open]`: prints (and with --open opens) a one-time sign-in link to the web console. */
export function registerUi(program: Command, state: RunState): void {
  program
    .command('ui')
    .description('the web console: print a one-time sign-in link (single use, valid 120 s); --open opens it')
    .option('--open', 'open the link in the browser too (xdg-open / open)')
    .action(
      action<{ open?: boolean }>(state, async (ctx, _args, opts) => {
        const client = await ctx.client();
        const link = await signInLink(client);
        const opened = opts.open === true ? await openInBrowser(link.url) : false;
        if (ctx.out.json) {
          ctx.out.printJson({ ...link, opened });
          return EXIT.OK;
        }
        ctx.out.line(link.url);
        ctx.out.errLine(
          `one-time sign-in link to the web console (single use, valid until ${link.expires_at})${
            opts.open === true && !opened ? '; no browser could be opened here: open it yourself' : ''
          }`,
        );
        return EXIT.OK;
      }),
    );
}
