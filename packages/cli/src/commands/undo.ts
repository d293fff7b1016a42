import type { Command } from 'commander';

import type { BackupInfo, UndoResult } from '../api-types.js';
import { action, type RunState } from '../context.js';
import { EXIT } from '../exit-codes.js';

interface UndoOptions {
  list?: boolean;
}

/** The rows of `undo --list`: id, time, kind, size, whether the file existed, path. */
export function backupRows(backups: BackupInfo[]): string[][] {
  return backups.map((b) => [b.id, b.ts, b.kind, String(b.size), b.existed ? 'yes' : 'no', b.path]);
}

/**
 * `undo [id]` — POST /v1/undo: restores the content a backup holds (default: the newest, whoever
 * made the change: the route needs an operator token) and prints what was restored;
 * `undo --list` — GET /v1/backups.
 */
export function registerUndo(program: Command, state: RunState): void {
  program
    .command('undo')
    .description('restore a file from the backup taken before a tool wrote or deleted it (default: newest)')
    .argument('[id]', 'backup id (see undo --list)')
    .option('--list', 'list the backups instead of restoring')
    .action(
      action<UndoOptions>(state, async (ctx, [id], opts) => {
        const client = await ctx.client();
        if (opts.list) {
          const res = await client.get<{ backups: BackupInfo[]; total?: number }>('/v1/backups');
          const { backups } = res;
          if (ctx.out.json) ctx.out.printJson(res);
          else if (!backups.length) ctx.out.line('no backups');
          else ctx.out.table(['ID', 'TIME', 'KIND', 'SIZE', 'EXISTED', 'PATH'], backupRows(backups));
          return EXIT.OK;
        }
        const { body } = await client.post<UndoResult>('/v1/undo', id ? { id } : {});
        if (ctx.out.json) ctx.out.printJson(body);
        else {
          const r = body.restored;
          ctx.out.line(
            r.existed === false
              ? `removed ${r.path}: it did not exist before backup ${r.id}`
              : `restored ${r.path} (${r.bytes} bytes) from backup ${r.id}`,
          );
          if (body.backup_id) ctx.out.line(ctx.out.c.dim(`to reverse this undo: myfinger undo ${body.backup_id}`));
        }
        return EXIT.OK;
      }),
    );
}
