import path from 'node:path';

import { FingerError, rfc3339 } from '@finger/protocol';

import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { definitionHash, type McpPinStore } from './mcp-pins.js';
import type { McpToolDefinition } from './mcp-tools.js';
import type { RuntimeNotice } from './runtime.js';

/** Why a tool is quarantined: its definition no longer matches the pinned hash. */
export interface McpQuarantine {
  reason: 'definition changed';
  /** Tool id `mcp.<server>.<tool>`. */
  tool: string;
  pinned_hash: string;
  current_hash: string;
  [key: string]: unknown;
}

/** What {@link McpPinning} needs from its runtime. */
export interface McpPinningOptions {
  /** Module id (the server name). */
  id: string;
  pins: McpPinStore;
  clock: Clock;
  log: Logger;
  /** FIREWALL_VERDICT events (quarantine, trust) go out through the runtime's notices. */
  notice(n: RuntimeNotice): void;
}

/**
 * The tool definitions an MCP server listed, checked against their pinned hashes: a new tool is
 * pinned on first sight, a changed one is quarantined (its calls fail E_FORBIDDEN) until trust()
 * re-pins it.
 */
export class McpPinning {
  readonly #o: McpPinningOptions;
  readonly #defs = new Map<string, McpToolDefinition>();
  readonly #hashes = new Map<string, string>();
  readonly #quarantine = new Map<string, McpQuarantine>();

  constructor(options: McpPinningOptions) {
    this.#o = options;
  }

  /** Quarantined tools by name. */
  quarantined(): Record<string, McpQuarantine> {
    return Object.fromEntries(this.#quarantine);
  }

  /** Names of the quarantined tools. */
  quarantinedNames(): string[] {
    return [...this.#quarantine.keys()];
  }

  /** Throws E_FORBIDDEN when `tool` is quarantined. */
  check(tool: string): void {
    const q = this.#quarantine.get(tool);
    if (q !== undefined) {
      throw new FingerError(
        'E_FORBIDDEN',
        `MCP tool "${q.tool}" is quarantined: its definition changed since it was pinned (trust it to re-pin)`,
        { reason: q.reason, tool: q.tool, pinned_hash: q.pinned_hash, current_hash: q.current_hash },
      );
    }
  }

  /** Hashes the listed definitions, pins new ones, quarantines changed ones. */
  async adopt(defs: McpToolDefinition[]): Promise<void> {
    const pins = await this.#o.pins.load(this.#o.id);
    const fresh: McpToolDefinition[] = [];
    for (const def of defs) {
      const hash = definitionHash(def);
      this.#defs.set(def.name, def);
      this.#hashes.set(def.name, hash);
      const pin = pins[def.name];
      if (pin === undefined) fresh.push(def);
      else if (pin.hash === hash) this.#quarantine.delete(def.name);
      else this.#quarantineTool(def.name, pin.hash, hash);
    }
    if (fresh.length > 0) {
      const at = rfc3339(this.#o.clock.now());
      await this.#o.pins.update(this.#o.id, (p) => {
        for (const d of fresh) p[d.name] ??= { hash: this.#hashes.get(d.name) as string, pinned_at: at };
      });
      this.#o.log.info({ tools: fresh.map((d) => d.name) }, 'MCP tool definitions pinned on first sight');
    }
  }

  /**
   * Re-pins a tool's current definition and lifts its quarantine. Rejects E_NOT_FOUND for a tool
   * the server did not list, E_CONFLICT when `expected_hash` is not the current hash.
   */
  async trust(tool: string, expected_hash?: string): Promise<{ tool: string; pinned_hash: string }> {
    const hash = this.#hashes.get(tool);
    if (hash === undefined)
      throw new FingerError('E_NOT_FOUND', `MCP server "${this.#o.id}" has no tool "${tool}"`, { tool });
    if (expected_hash !== undefined && expected_hash !== hash) {
      throw new FingerError('E_CONFLICT', `tool "${this.#o.id}.${tool}" changed since it was shown`, {
        tool: `${this.#o.id}.${tool}`,
        expected_hash,
        current_hash: hash,
      });
    }
    await this.#o.pins.update(this.#o.id, (pins) => {
      pins[tool] = { hash, pinned_at: rfc3339(this.#o.clock.now()) };
    });
    const was = this.#quarantine.get(tool);
    this.#quarantine.delete(tool);
    this.#o.log.info({ tool, pinned_hash: hash, was_quarantined: was !== undefined }, 'MCP tool definition trusted');
    this.#o.notice({
      type: 'event',
      message: `MCP tool "${this.#o.id}.${tool}" re-pinned`,
      data: {
        hub_event: 'FIREWALL_VERDICT',
        action: 'trust',
        layer: 'mcp_pin',
        tool: `${this.#o.id}.${tool}`,
        pinned_hash: hash,
      },
    });
    return { tool: `${this.#o.id}.${tool}`, pinned_hash: hash };
  }

  #quarantineTool(tool: string, pinned_hash: string, current_hash: string): void {
    const prev = this.#quarantine.get(tool);
    if (prev?.current_hash === current_hash) return;
    const q: McpQuarantine = { reason: 'definition changed', tool: `${this.#o.id}.${tool}`, pinned_hash, current_hash };
    this.#quarantine.set(tool, q);
    this.#o.log.warn(q, 'MCP tool definition changed; tool quarantined until trusted');
    this.#o.notice({
      type: 'event',
      message: `MCP tool "${q.tool}" quarantined: definition changed`,
      data: { hub_event: 'FIREWALL_VERDICT', action: 'quarantine', layer: 'mcp_pin', quarantined: q.tool, ...q },
    });
  }
}

/** `settings.pins_file` (relative to `settings.home`, else the module dir), else `<home>/state/mcp-pins.json`. */
export function pinsFile(settings: Record<string, unknown> | undefined, baseDir: string): string | undefined {
  const home = typeof settings?.home === 'string' ? settings.home : undefined;
  const file = settings?.pins_file;
  if (typeof file === 'string' && file !== '') return path.resolve(home ?? baseDir, file);
  return home === undefined ? undefined : path.join(home, 'state', 'mcp-pins.json');
}
