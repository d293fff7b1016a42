// `myfinger hook <agent>`: the process an agent's pre/post-tool hook runs. Lean on purpose — the
// bin shim loads this file directly (not the commander program), and it imports only node
// built-ins and the pure mapping/answer files: start-up is most of a hook call's cost.
// Catches everything: any failure is an explicit deny in the agent's format and exit 2.

// node:fs, not node:fs/promises (which loads readline's interface), and node:os only when HOME is unset
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { combine, denyAnswer, type HookAnswer, type HookVerdict, type PendingAs, preAnswer } from './hook-answer.js';
import { type HookAgent, HookInputError, isHookAgent, type MappedCall, parseHookEvent } from './hook-map.js';

/**
 * The longest the daemon may hold a hook's request, per agent (config `hooks.hold_ms` is capped
 * there): below the hook timeout `hook install` sets (Claude Code, Codex 600 s; Cursor, Copilot 60 s).
 */
export const MAX_HOLD_MS: Readonly<Record<HookAgent, number>> = {
  claude: 540_000,
  codex: 540_000,
  cursor: 50_000,
  copilot: 50_000,
};
/** How long past the hold the hook waits for the daemon's answer (still below the agent's hook timeout). */
const ANSWER_MARGIN_MS = 5_000;

/** Largest payload read from stdin. */
const MAX_STDIN = 4 * 1024 * 1024;
/** How long stdin may take to arrive. */
const STDIN_MS = 10_000;

/** Streams and environment of one hook run (the process's own by default). */
export interface HookIo {
  stdin: NodeJS.ReadableStream;
  stdout: { write(s: string): unknown };
  stderr: { write(s: string): unknown };
  env: NodeJS.ProcessEnv;
}

/** Options of the hook command line: `hook <agent> [--hold-ms N] [--pending ask|deny] [--url U] [--home H]`. */
export interface HookOptions {
  agent: HookAgent;
  hold_ms?: number;
  pending?: PendingAs;
  url?: string;
  home?: string;
}

/** Reads `hook <agent> …` arguments; throws HookInputError on anything else. */
export function parseHookArgs(argv: readonly string[]): HookOptions {
  const [cmd, agent, ...rest] = argv;
  if (cmd !== 'hook' || !isHookAgent(agent))
    throw new HookInputError('usage: myfinger hook <claude|codex|cursor|copilot>');
  const o: HookOptions = { agent };
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    const [flag, inline] = a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = (): string => {
      const v = inline ?? rest[++i];
      if (v === undefined) throw new HookInputError(`${flag} needs a value`);
      return v;
    };
    if (flag === '--hold-ms') {
      const n = Number(value());
      if (!Number.isSafeInteger(n) || n < 0) throw new HookInputError('--hold-ms must be a whole number of ms');
      o.hold_ms = n;
    } else if (flag === '--pending') {
      const v = value();
      if (v !== 'ask' && v !== 'deny') throw new HookInputError('--pending must be ask or deny');
      o.pending = v;
    } else if (flag === '--url') o.url = value();
    else if (flag === '--home') o.home = value();
    else throw new HookInputError(`unknown option ${flag}`);
  }
  return o;
}

function readStdin(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const timer = setTimeout(() => reject(new HookInputError('no hook payload on stdin')), STDIN_MS);
    stream.on('data', (c: Buffer | string) => {
      const b = typeof c === 'string' ? Buffer.from(c) : c;
      size += b.length;
      if (size > MAX_STDIN) {
        clearTimeout(timer);
        reject(new HookInputError('the hook payload is too large'));
        return;
      }
      chunks.push(b);
    });
    stream.on('end', () => {
      clearTimeout(timer);
      resolve(Buffer.concat(chunks).toString('utf8'));
    });
    stream.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
}

/** FINGER_HOME the way the CLI finds it. */
async function homeOf(o: HookOptions, env: NodeJS.ProcessEnv): Promise<string> {
  const raw = o.home ?? env.FINGER_HOME ?? path.join(env.HOME ?? (await import('node:os')).homedir(), '.finger');
  return path.resolve(raw);
}

/** The hook token file of `agent` (written by `myfinger hook install`). */
export function hookTokenPath(home: string, agent: HookAgent): string {
  return path.join(home, 'hooks', `${agent}.token`);
}

async function locate(o: HookOptions, env: NodeJS.ProcessEnv): Promise<{ url: string; token: string }> {
  const home = await homeOf(o, env);
  let url = o.url ?? env.FINGER_URL;
  if (url === undefined) {
    try {
      const info = JSON.parse(readFileSync(path.join(home, 'daemon.json'), 'utf8')) as { url?: unknown };
      if (typeof info.url === 'string') url = info.url;
    } catch {
      // not running here, or elsewhere: the default
    }
  }
  let token = env.FINGER_HOOK_TOKEN?.trim();
  if (!token) {
    try {
      token = readFileSync(hookTokenPath(home, o.agent), 'utf8').split('\n')[0]!.trim();
    } catch {
      throw new Error(`no hook token: run \`myfinger hook install ${o.agent}\` (or set FINGER_HOOK_TOKEN)`);
    }
  }
  return { url: (url ?? 'http://127.0.0.1:7770').replace(/\/+$/, ''), token };
}

/**
 * One JSON POST with node:http(s) and no keep-alive: `fetch` costs the hook ≈ 200 ms of undici
 * loading here, and a kept-alive socket would hold the process open after it answered.
 */
async function post<T>(url: string, token: string, body: unknown, timeoutMs: number): Promise<T> {
  const u = new URL(url);
  const mod = u.protocol === 'https:' ? await import('node:https') : await import('node:http');
  const data = JSON.stringify(body);
  const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = mod.request(
      u,
      {
        method: 'POST',
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(data),
          authorization: `Bearer ${token}`,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_STDIN) req.destroy(new Error('the answer is too large'));
          else chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (e) => reject(new Error(`the finger daemon is unreachable at ${url}: ${e.message}`)));
    req.end(data);
  });
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`the finger daemon answered ${status} with no JSON`);
  }
  if (status !== 200) {
    const err = (parsed as { error?: { code?: string; message?: string } }).error;
    throw new Error(`${err?.code ?? `HTTP ${status}`}: ${err?.message ?? 'refused'}`);
  }
  return parsed as T;
}

/** One hook run: stdin → the daemon → the agent's answer. Never throws. */
export async function answerHook(o: HookOptions, io: HookIo): Promise<HookAnswer> {
  try {
    const text = await readStdin(io.stdin);
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      throw new HookInputError('the hook payload is not JSON');
    }
    const ev = parseHookEvent(o.agent, payload);
    const { url, token } = await locate(o, io.env);
    // the daemon waits config hooks.hold_ms of this agent, or --hold-ms when that is lower
    const hold = Math.min(o.hold_ms ?? MAX_HOLD_MS[o.agent], MAX_HOLD_MS[o.agent]);
    if (ev.phase === 'post') {
      for (const c of ev.calls)
        await post(
          `${url}/v1/audit/report`,
          token,
          { ...c, ok: ev.ok ?? true, ...(ev.detail ? { detail: ev.detail } : {}) },
          10_000,
        );
      return { stdout: '', stderr: '', exit: 0 };
    }
    const verdicts: HookVerdict[] = [];
    for (const c of ev.calls) {
      const v = await post<HookVerdict>(
        `${url}/v1/hooks/evaluate`,
        token,
        (o.hold_ms !== undefined ? { ...c, hold_ms: hold } : c) satisfies MappedCall & { hold_ms?: number },
        hold + ANSWER_MARGIN_MS,
      );
      verdicts.push(v);
      if (v.outcome === 'deny') break;
    }
    const pending: PendingAs = o.pending ?? 'ask';
    return preAnswer(o.agent, ev, combine(verdicts), pending);
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return denyAnswer(o.agent, `refused (the hook could not get finger's verdict): ${why}`, 2);
  }
}

/** The hook process: answers, writes, and resolves with the exit code. */
export async function runHook(argv: readonly string[], io: HookIo): Promise<number> {
  let o: HookOptions;
  try {
    o = parseHookArgs(argv);
  } catch (e) {
    const agent = isHookAgent(argv[1]) ? argv[1] : 'claude';
    const a = denyAnswer(agent, (e as Error).message, 2);
    io.stdout.write(a.stdout);
    io.stderr.write(a.stderr);
    return a.exit;
  }
  const a = await answerHook(o, io);
  if (a.stdout !== '') io.stdout.write(a.stdout);
  if (a.stderr !== '') io.stderr.write(a.stderr);
  return a.exit;
}
