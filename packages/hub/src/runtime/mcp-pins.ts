import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { canonicalJson, FingerError } from '@finger/protocol';

import type { McpToolDefinition } from './mcp-tools.js';

/** One pinned tool definition. */
export interface McpPin {
  /** `sha256:<hex>` of the canonical definition (see {@link definitionHash}). */
  hash: string;
  /** RFC 3339 time it was pinned (first sight, or the last `trust`). */
  pinned_at: string;
}

/** Pins of one server: tool name → pin. */
export type McpPins = Record<string, McpPin>;

/** On-disk shape of the pins file. */
interface PinFile {
  version: 1;
  servers: Record<string, McpPins>;
}

/**
 * The pinned identity of an MCP tool (DESIGN §3.8): sha256 of the canonical JSON of
 * `{description, inputSchema, outputSchema?, annotations?}`, as `sha256:<hex>`. Anything an
 * agent is shown or a risk is derived from is in it; the name is the key, not part of the hash.
 */
export function definitionHash(def: McpToolDefinition): string {
  const body = {
    description: def.description ?? '',
    inputSchema: def.inputSchema ?? {},
    outputSchema: def.outputSchema,
    annotations: def.annotations,
  };
  return `sha256:${createHash('sha256').update(canonicalJson(body)).digest('hex')}`;
}

/** Per-file queue: read-modify-write of one pins file never interleaves within this process. */
const queues = new Map<string, Promise<unknown>>();

function serialized<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const prev = queues.get(file) ?? Promise.resolve();
  const next = prev.then(fn, fn);
  const tail = next.catch(() => undefined);
  queues.set(file, tail);
  void tail.then(() => {
    if (queues.get(file) === tail) queues.delete(file);
  });
  return next;
}

/**
 * The MCP pins file (`<home>/state/mcp-pins.json` by default), shared by every MCP server module
 * of the daemon: `{version: 1, servers: {<module id>: {<tool>: {hash, pinned_at}}}}`. Updates
 * re-read the file under a per-file queue and replace it atomically (temp file + rename, mode
 * 0600). Without a file (no `home` setting) pins live in memory for the runtime's lifetime.
 * A file that exists but is not valid is an error (E_MODULE_UNHEALTHY), never silently reset:
 * resetting would re-pin changed definitions without anyone seeing them.
 */
export class McpPinStore {
  readonly file: string | undefined;
  #memory: McpPins = {};

  constructor(file: string | undefined) {
    this.file = file;
  }

  /** The pins of one server (a copy). */
  async load(server: string): Promise<McpPins> {
    if (this.file === undefined) return { ...this.#memory };
    const file = this.file;
    return serialized(file, async () => ({ ...((await readPinFile(file)).servers[server] ?? {}) }));
  }

  /** Applies `fn` to the server's pins and writes them back; returns the pins after the change. */
  async update(server: string, fn: (pins: McpPins) => void): Promise<McpPins> {
    if (this.file === undefined) {
      fn(this.#memory);
      return { ...this.#memory };
    }
    const file = this.file;
    return serialized(file, async () => {
      const data = await readPinFile(file);
      const pins = (data.servers[server] ??= {});
      fn(pins);
      await writeAtomic(file, `${JSON.stringify(data, null, 2)}\n`);
      return { ...pins };
    });
  }
}

async function readPinFile(file: string): Promise<PinFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, servers: {} };
    throw new FingerError('E_MODULE_UNHEALTHY', `cannot read MCP pins file ${file}: ${(e as Error).message}`, { file });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new FingerError('E_MODULE_UNHEALTHY', `MCP pins file ${file} is not valid JSON: ${(e as Error).message}`, {
      file,
    });
  }
  const servers = (data as { servers?: unknown } | null)?.servers;
  if (typeof servers !== 'object' || servers === null || Array.isArray(servers)) {
    throw new FingerError('E_MODULE_UNHEALTHY', `MCP pins file ${file} has no "servers" object`, { file });
  }
  return { version: 1, servers: servers as Record<string, McpPins> };
}

async function writeAtomic(file: string, text: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, text, { mode: 0o600 });
    await rename(tmp, file);
  } catch (e) {
    await unlink(tmp).catch(() => undefined);
    throw e;
  }
}
