// `myfinger hook install|uninstall <agent> [--project|--user]`: writes (or removes) finger's hook
// entries in the agent's own settings file, merged with what is there (idempotent; the previous
// file is kept as a backup), and reports which agents are wired and whether they fail closed
// (`myfinger doctor`, `myfinger hook status`).

import { chmod, copyFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import type { HookAgent } from './hook-map.js';

/** Where a settings file lives: the project (cwd) or the user's home. */
export type HookScope = 'project' | 'user';

type Json = Record<string, unknown>;

/** The agent's settings file for `scope`. */
export function settingsPath(agent: HookAgent, scope: HookScope, cwd: string, userHome: string): string {
  const base = scope === 'project' ? cwd : userHome;
  switch (agent) {
    case 'claude':
      return path.join(base, '.claude', 'settings.json');
    case 'codex':
      return path.join(base, '.codex', 'hooks.json');
    case 'cursor':
      return path.join(base, '.cursor', 'hooks.json');
    case 'copilot':
      return scope === 'project'
        ? path.join(base, '.github', 'hooks', 'finger.json')
        : path.join(base, '.copilot', 'hooks', 'finger.json');
  }
}

/** True for a hook command that is finger's for `agent`. */
export function isFingerCommand(cmd: unknown, agent: HookAgent): boolean {
  return typeof cmd === 'string' && new RegExp(`myfinger(\\.js)?'?\\s+hook\\s+${agent}(\\s|$)`).test(cmd);
}

/** A command word quoted for a POSIX shell. */
function q(s: string): string {
  return /^[A-Za-z0-9_./=:-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The command line the agent runs: this node and this CLI's bin, so no PATH is needed. */
export function hookCommand(
  agent: HookAgent,
  nodePath: string,
  binPath: string,
  extra: readonly string[] = [],
): string {
  return [nodePath, binPath, 'hook', agent, ...extra].map(q).join(' ');
}

const PRE: Record<HookAgent, string> = {
  claude: 'PreToolUse',
  codex: 'PreToolUse',
  cursor: 'preToolUse',
  copilot: 'preToolUse',
};
const POST: Record<HookAgent, string> = {
  claude: 'PostToolUse',
  codex: 'PostToolUse',
  cursor: 'postToolUse',
  copilot: 'postToolUse',
};

/** The entries finger adds: pre (fail closed where the agent can) and post (audited mode). */
function entries(agent: HookAgent, command: string): { pre: Json; post: Json } {
  switch (agent) {
    case 'claude':
      return {
        // onFailure belongs on the hook entry, not the matcher group (Claude Code ≥ 2.1.295)
        pre: { matcher: '*', hooks: [{ type: 'command', command, timeout: 600, onFailure: 'block' }] },
        post: { matcher: '*', hooks: [{ type: 'command', command, timeout: 30 }] },
      };
    case 'codex':
      // Codex has no fail-closed switch: the hook itself denies on every failure
      return {
        pre: { matcher: '', hooks: [{ type: 'command', command, timeout: 600 }] },
        post: { matcher: '', hooks: [{ type: 'command', command, timeout: 30 }] },
      };
    case 'cursor':
      return { pre: { command, timeout: 60, failClosed: true }, post: { command, timeout: 30 } };
    case 'copilot':
      return {
        pre: { type: 'command', bash: command, timeoutSec: 60 },
        post: { type: 'command', bash: command, timeoutSec: 30 },
      };
  }
}

/** True when a top-level entry of an event list is finger's (directly, or a matcher group holding it). */
function isOurs(e: unknown, agent: HookAgent): boolean {
  if (typeof e !== 'object' || e === null) return false;
  const o = e as Json;
  if (isFingerCommand(o.command, agent) || isFingerCommand(o.bash, agent)) return true;
  return Array.isArray(o.hooks) && o.hooks.some((h) => isOurs(h, agent));
}

/** `settings` with finger's entries (replacing earlier ones of finger; everything else kept). Pure. */
export function mergeHooks(settings: Json, agent: HookAgent, command: string): Json {
  const out: Json = { ...removeHooks(settings, agent) };
  if ((agent === 'cursor' || agent === 'copilot') && out.version === undefined) out.version = 1;
  const hooks = { ...((out.hooks as Json | undefined) ?? {}) };
  const e = entries(agent, command);
  hooks[PRE[agent]] = [...((hooks[PRE[agent]] as unknown[] | undefined) ?? []), e.pre];
  hooks[POST[agent]] = [...((hooks[POST[agent]] as unknown[] | undefined) ?? []), e.post];
  out.hooks = hooks;
  return out;
}

/** `settings` without finger's entries (empty event lists and an empty `hooks` dropped). Pure. */
export function removeHooks(settings: Json, agent: HookAgent): Json {
  const out: Json = { ...settings };
  if (typeof out.hooks !== 'object' || out.hooks === null) return out;
  const hooks: Json = {};
  for (const [event, list] of Object.entries(out.hooks as Json)) {
    if (!Array.isArray(list)) {
      hooks[event] = list;
      continue;
    }
    const kept = list.filter((e) => !isOurs(e, agent));
    if (kept.length > 0) hooks[event] = kept;
  }
  if (Object.keys(hooks).length === 0) delete out.hooks;
  else out.hooks = hooks;
  return out;
}

/** How an agent is wired in one settings file. */
export interface HookWiring {
  agent: HookAgent;
  scope: HookScope;
  file: string;
  /** finger's pre-tool entry is there. */
  wired: boolean;
  /** The agent blocks the call when the hook fails (Claude `onFailure: "block"`, Cursor `failClosed`); Codex and Copilot: the hook's own deny only. */
  fail_closed: boolean;
  post: boolean;
}

/** Reads a settings file's wiring (a missing or unreadable file: not wired). */
export function wiringOf(settings: Json, agent: HookAgent, scope: HookScope, file: string): HookWiring {
  const hooks = (settings.hooks as Json | undefined) ?? {};
  const pre = ((hooks[PRE[agent]] as unknown[] | undefined) ?? []).filter((e) => isOurs(e, agent));
  const post = ((hooks[POST[agent]] as unknown[] | undefined) ?? []).some((e) => isOurs(e, agent));
  const failClosed = pre.some((e) => {
    const o = e as Json;
    if (agent === 'cursor') return o.failClosed === true;
    if (agent === 'claude')
      return Array.isArray(o.hooks) && o.hooks.some((h) => isOurs(h, agent) && (h as Json).onFailure === 'block');
    return false;
  });
  return { agent, scope, file, wired: pre.length > 0, fail_closed: failClosed, post };
}

async function readJson(file: string): Promise<Json | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  const parsed: unknown = text.trim() === '' ? {} : JSON.parse(text);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new Error(`${file} is not a JSON object: not changed`);
  return parsed as Json;
}

/** Writes `settings` to `file` atomically, keeping the previous file as `<file>.finger-backup`. */
async function writeJson(file: string, settings: Json, existed: boolean): Promise<string | undefined> {
  await mkdir(path.dirname(file), { recursive: true });
  let backup: string | undefined;
  if (existed) {
    backup = `${file}.finger-backup`;
    await copyFile(file, backup);
  }
  const tmp = `${file}.finger-tmp-${process.pid}`;
  await writeFile(tmp, `${JSON.stringify(settings, null, 2)}\n`);
  await rename(tmp, file);
  return backup;
}

/** What install/uninstall did. */
export interface HookChange {
  file: string;
  changed: boolean;
  backup?: string;
  wiring: HookWiring;
}

/** Merges finger's entries into the agent's settings file (idempotent: unchanged when already there). */
export async function installHooks(
  agent: HookAgent,
  scope: HookScope,
  file: string,
  command: string,
): Promise<HookChange> {
  const before = await readJson(file);
  const next = mergeHooks(before ?? {}, agent, command);
  const changed = before === undefined || JSON.stringify(next) !== JSON.stringify(before);
  const backup = changed ? await writeJson(file, next, before !== undefined) : undefined;
  return { file, changed, ...(backup !== undefined ? { backup } : {}), wiring: wiringOf(next, agent, scope, file) };
}

/** Removes finger's entries from the agent's settings file (nothing else). */
export async function uninstallHooks(agent: HookAgent, scope: HookScope, file: string): Promise<HookChange> {
  const before = await readJson(file);
  if (before === undefined) return { file, changed: false, wiring: wiringOf({}, agent, scope, file) };
  const next = removeHooks(before, agent);
  const changed = JSON.stringify(next) !== JSON.stringify(before);
  const backup = changed ? await writeJson(file, next, true) : undefined;
  return { file, changed, ...(backup !== undefined ? { backup } : {}), wiring: wiringOf(next, agent, scope, file) };
}

/** The wiring of every agent in both scopes (doctor). Unreadable files count as not wired. */
export async function allWirings(cwd: string, userHome: string = os.homedir()): Promise<HookWiring[]> {
  const out: HookWiring[] = [];
  for (const agent of ['claude', 'codex', 'cursor', 'copilot'] as const)
    for (const scope of ['project', 'user'] as const) {
      const file = settingsPath(agent, scope, cwd, userHome);
      let s: Json | undefined;
      try {
        s = await readJson(file);
      } catch {
        s = undefined;
      }
      if (s !== undefined) out.push(wiringOf(s, agent, scope, file));
    }
  return out;
}

/** Writes the hook token file (0600, its directory 0700). */
export async function writeHookToken(file: string, token: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  await writeFile(file, `${token}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
}
