import { readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

import type { Command } from 'commander';

import type { Logger } from '@finger/hub';
import { FingerError } from '@finger/protocol';

import { action, type RunState } from '../context.js';
import { EXIT } from '../exit-codes.js';

/** Options of `module serve`. */
export interface ModuleServeOptions {
  nats?: string;
  cluster?: string;
  serveKeyFile?: string;
  clusterKeyFile?: string;
  token?: string;
  user?: string;
  pass?: string;
  creds?: string;
  nkeySeed?: string;
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  heartbeatMs?: string;
  drainMs?: string;
  pinsFile?: string;
}

const readKey = (file: string, what: string): string => {
  try {
    const key = readFileSync(file, 'utf8').trim();
    if (key.length < 16) throw new Error('fewer than 16 characters');
    return key;
  } catch (e) {
    throw new FingerError('E_INVALID_ARGS', `cannot use ${what} ${file}: ${(e as Error).message}`);
  }
};

/**
 * The serve process's logger: warnings and errors (a reply NATS refused to carry, a module that
 * failed) as one line each on stderr, `warning: <message> {fields}`; nothing else.
 */
function problemsToStderr(errLine: (line: string) => void): Logger {
  const line = (level: string) => (obj: object | string, msg?: string) => {
    if (typeof obj === 'string') errLine(`${level}: ${obj}`);
    else errLine(`${level}: ${msg ?? ''} ${JSON.stringify(obj)}`);
  };
  const quiet = () => undefined;
  const logger: Logger = {
    debug: quiet,
    info: quiet,
    warn: line('warning'),
    error: line('error'),
    child: () => logger,
  };
  return logger;
}

/** The module.json to serve: the file given, or the one in the folder given (as `modules.paths` takes either). */
function manifestPath(file: string): string {
  const p = resolve(file);
  try {
    if (statSync(p).isDirectory()) return join(p, 'module.json');
  } catch {
    // not there: the server says so (E_NOT_FOUND)
  }
  return p;
}

const MODULE_ID = /^(?:[a-z0-9][a-z0-9_-]{0,63}|mcp\.[a-z0-9_]{1,60})$/;

/**
 * A module id: the `id` of the module.json (or folder holding one) given, or the id given. A
 * module id that is also the name of something here that is not a manifest (the file a shell
 * redirection just made, a folder of another kind) is taken as the id.
 */
function moduleIdOf(which: string): string {
  const looksLikePath = which.includes('/') || which.endsWith('.json') || which === '.' || which === '..';
  let exists = false;
  try {
    statSync(resolve(which));
    exists = true;
  } catch {
    // not a file here: a module id
  }
  if (looksLikePath || exists) {
    const file = manifestPath(which);
    let id: unknown;
    let problem: string | undefined;
    try {
      id = (JSON.parse(readFileSync(file, 'utf8')) as { id?: unknown } | null)?.id;
      if (typeof id !== 'string') problem = `${file} has no module id`;
    } catch (e) {
      problem = `cannot read the module id from ${file}: ${(e as Error).message}`;
    }
    if (problem === undefined) which = id as string;
    else if (looksLikePath || !MODULE_ID.test(which)) throw new FingerError('E_INVALID_ARGS', problem);
  }
  if (!MODULE_ID.test(which))
    throw new FingerError(
      'E_INVALID_ARGS',
      `${JSON.stringify(which)} is not a module id (a-z, 0-9, _ and -, or mcp.<name>) nor a module.json or folder`,
    );
  return which;
}

/** A whole number of ms from `min` to `max` (a timer cannot wait longer than 2^31 − 1 ms). */
const millis = (raw: string | undefined, name: string, min: number, max: number): number | undefined => {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max)
    throw new FingerError(
      'E_INVALID_ARGS',
      `${name} must be a whole number of ms from ${min} to ${max}, got ${JSON.stringify(raw)}`,
    );
  return Number(raw);
};

/**
 * `myfinger module serve <module.json> --nats <url> [--cluster c]`: hosts one module (in-process,
 * stdio or MCP runtime) and serves it to the cluster's daemons over NATS until SIGINT/SIGTERM,
 * then stops announcing, lets in-flight calls finish (`--drain-ms`) and drains NATS.
 *
 * The process signs with the module's *serve key* (`--serve-key-file` or FINGER_SERVE_KEY; print
 * it on a daemon host with `myfinger module serve-key <module>`), never with the cluster key, so
 * nothing it sends can act as a daemon or speak for another module. Exit codes: 0 after a clean shutdown, 2 for bad arguments or
 * manifest, 1 when NATS cannot be reached (E_STORE_UNAVAILABLE).
 */
export function registerModuleServe(mod: Command, state: RunState): void {
  mod
    .command('serve')
    .description('host a module and serve it to the cluster over NATS (foreground)')
    .argument('<module.json>', 'manifest of the module to host')
    .option('--nats <url>', 'NATS server URL(s), comma-separated (default FINGER_NATS_URL)')
    .option('--cluster <name>', 'cluster name (default FINGER_CLUSTER or "default")')
    .option('--serve-key-file <file>', "file holding the module's serve key (default FINGER_SERVE_KEY)")
    .option('--token <token>', 'NATS token (default FINGER_NATS_TOKEN, which the process list does not show)')
    .option('--user <user>', 'NATS user (default FINGER_NATS_USER)')
    .option('--pass <pass>', 'NATS password (default FINGER_NATS_PASS, which the process list does not show)')
    .option('--creds <file>', 'NATS .creds file (JWT + nkey)')
    .option('--nkey-seed <file>', 'file holding an NATS nkey seed')
    .option('--tls-ca <file>', 'CA certificate(s) to verify the NATS server with (PEM)')
    .option('--tls-cert <file>', 'client certificate for NATS TLS (PEM; with --tls-key)')
    .option('--tls-key <file>', 'key of the client certificate (PEM)')
    .option('--heartbeat-ms <ms>', 'registry heartbeat period (default 2000)')
    .option('--drain-ms <ms>', 'how long in-flight calls may finish on shutdown (default 10000)')
    .option(
      '--pins-file <file>',
      "an MCP module's pinned tool definitions (JSON, made if missing); without it they live in memory and a restart re-pins whatever the server then says",
    )
    .action(
      action<ModuleServeOptions>(state, async (ctx, [file = ''], o) => {
        const env = ctx.io.env;
        const url = o.nats ?? env.FINGER_NATS_URL;
        if (!url) throw new FingerError('E_INVALID_ARGS', 'module serve needs --nats <url> (or FINGER_NATS_URL)');
        const { isNatsUrlList, withoutCredentials } = await import('@finger/hub');
        if (!isNatsUrlList(url))
          throw new FingerError(
            'E_INVALID_ARGS',
            `--nats takes nats://host:port (or tls://…), comma-separated for several servers; got ${JSON.stringify(withoutCredentials(url))}`,
          );
        const cluster = o.cluster ?? env.FINGER_CLUSTER ?? 'default';
        const serveKey = o.serveKeyFile ? readKey(o.serveKeyFile, '--serve-key-file') : env.FINGER_SERVE_KEY;
        if (!serveKey)
          throw new FingerError(
            'E_INVALID_ARGS',
            "module serve needs the module's serve key: --serve-key-file <file> or FINGER_SERVE_KEY (see `myfinger module serve-key <module>`)",
          );
        const { parseServeKey, startModuleServer } = await import('@finger/hub/nats');
        const parsed = parseServeKey(serveKey);
        if (typeof parsed === 'string') throw new FingerError('E_INVALID_ARGS', `the serve key: ${parsed}`);
        const heartbeat = millis(o.heartbeatMs, '--heartbeat-ms', 100, 600_000);
        const drain = millis(o.drainMs, '--drain-ms', 0, 600_000) ?? 10_000;
        // secrets from the environment keep them out of `ps`; a flag still wins
        const token = o.token ?? env.FINGER_NATS_TOKEN;
        const user = o.user ?? env.FINGER_NATS_USER;
        const pass = o.pass ?? env.FINGER_NATS_PASS;
        if ((o.tlsCert === undefined) !== (o.tlsKey === undefined))
          throw new FingerError('E_INVALID_ARGS', '--tls-cert and --tls-key go together');
        const tls =
          o.tlsCa || o.tlsCert
            ? {
                ...(o.tlsCa ? { ca_file: resolve(o.tlsCa) } : {}),
                ...(o.tlsCert ? { cert_file: resolve(o.tlsCert) } : {}),
                ...(o.tlsKey ? { key_file: resolve(o.tlsKey) } : {}),
              }
            : undefined;
        const server = await startModuleServer({
          manifestFile: manifestPath(file),
          logger: problemsToStderr((line) => ctx.out.errLine(line)),
          cluster,
          serve_key: serveKey,
          baseEnv: env,
          ...(o.pinsFile ? { settings: { pins_file: resolve(o.pinsFile) } } : {}),
          ...(heartbeat !== undefined ? { heartbeat_ms: heartbeat } : {}),
          nats: {
            url,
            ...(token ? { token } : {}),
            ...(user ? { user, pass: pass ?? '' } : {}),
            ...(o.creds ? { creds_file: resolve(o.creds) } : {}),
            ...(o.nkeySeed ? { nkey_seed_file: resolve(o.nkeySeed) } : {}),
            ...(tls !== undefined ? { tls } : {}),
          },
        });
        const info = { module: server.module_id, node: server.node, cluster, serving: true };
        if (ctx.out.json) ctx.out.printJson(info);
        else ctx.out.line(`serving ${server.module_id} on cluster ${cluster} as ${server.node}`);
        const signal = ctx.interrupt();
        await new Promise<void>((r) => {
          if (signal.aborted) r();
          else signal.addEventListener('abort', () => r(), { once: true });
        });
        await server.close(drain);
        if (!ctx.out.json) ctx.out.line(`stopped serving ${server.module_id}`);
        return EXIT.OK;
      }),
    );

  mod
    .command('serve-key')
    .description("print a module's serve key for its `module serve` hosts, derived from the cluster key")
    .argument('<module>', 'module id, or its module.json or folder')
    .option('--cluster-key-file <file>', 'file holding the cluster key (default FINGER_CLUSTER_KEY)')
    .action(
      action<ModuleServeOptions>(state, async (ctx, [which = ''], o) => {
        const key = o.clusterKeyFile
          ? readKey(o.clusterKeyFile, '--cluster-key-file')
          : ctx.io.env.FINGER_CLUSTER_KEY?.trim();
        if (!key) throw new FingerError('E_INVALID_ARGS', 'serve-key needs --cluster-key-file or FINGER_CLUSTER_KEY');
        if (key.length < 16)
          throw new FingerError(
            'E_INVALID_ARGS',
            `FINGER_CLUSTER_KEY is too short (${key.length} characters; a cluster key has at least 16, as nats.cluster_key)`,
          );
        const module_id = moduleIdOf(which);
        const { serveKeyOf } = await import('@finger/hub/nats');
        const serve_key = serveKeyOf(key, module_id);
        if (ctx.out.json) ctx.out.printJson({ module: module_id, serve_key });
        else ctx.out.line(serve_key);
        return EXIT.OK;
      }),
    );
}
