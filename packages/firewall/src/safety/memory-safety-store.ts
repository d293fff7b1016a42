import { FingerError } from '@finger/protocol';

import type { SafetyStateStore } from './safety-state-store.js';
import type { AgentBreakers, LockoutRecord, SafetyChange } from './safety-types.js';

const SYSTEM = '';

/** A plain copy (JSON round trip): what a store hands out is never the object it keeps. */
export function jsonCopy<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

/**
 * In-memory {@link SafetyStateStore} for tests and single-process use; the base of
 * {@link FileSafetyStore}, which persists its `snapshot()` after every change.
 */
export class MemorySafetyStore implements SafetyStateStore {
  protected counters = new Map<string, number>();
  protected lockouts = new Map<string, LockoutRecord>();
  protected breakers = new Map<string, AgentBreakers>();
  private readonly listeners = new Set<(change: SafetyChange) => void>();
  protected closed = false;

  async incrBy(key: string, delta: number): Promise<number> {
    this.assertOpen();
    if (!Number.isFinite(delta)) throw new FingerError('E_INVALID_ARGS', 'incrBy: delta must be finite');
    const v = (this.counters.get(key) ?? 0) + delta;
    this.counters.set(key, v);
    await this.changed(undefined);
    return v;
  }

  async getCounter(key: string): Promise<number> {
    this.assertOpen();
    return this.counters.get(key) ?? 0;
  }

  async deleteCounter(key: string): Promise<void> {
    this.assertOpen();
    if (this.counters.delete(key)) await this.changed(undefined);
  }

  async getLockout(agent_id?: string): Promise<LockoutRecord | undefined> {
    this.assertOpen();
    const l = this.lockouts.get(agent_id ?? SYSTEM);
    return l ? jsonCopy(l) : undefined;
  }

  async listLockouts(): Promise<LockoutRecord[]> {
    this.assertOpen();
    const all = [...this.lockouts.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return all.map(([, l]) => jsonCopy(l));
  }

  async setLockout(lockout: LockoutRecord): Promise<void> {
    this.assertOpen();
    const copy = jsonCopy(lockout);
    this.lockouts.set(lockout.agent_id ?? SYSTEM, copy);
    await this.changed({ type: 'lockout_set', lockout: jsonCopy(copy) });
  }

  async clearLockout(agent_id: string | undefined, by: string): Promise<LockoutRecord | undefined> {
    this.assertOpen();
    const key = agent_id ?? SYSTEM;
    const prev = this.lockouts.get(key);
    if (!prev) return undefined;
    this.lockouts.delete(key);
    await this.changed({ type: 'lockout_cleared', ...(agent_id !== undefined ? { agent_id } : {}), by });
    return prev;
  }

  async getBreakers(agent_id: string): Promise<AgentBreakers | undefined> {
    this.assertOpen();
    const b = this.breakers.get(agent_id);
    return b ? jsonCopy(b) : undefined;
  }

  async setBreakers(agent_id: string, state: AgentBreakers): Promise<void> {
    this.assertOpen();
    this.breakers.set(agent_id, jsonCopy(state));
    await this.changed({ type: 'breakers', agent_id });
  }

  async deleteBreakers(agent_id: string): Promise<void> {
    this.assertOpen();
    if (this.breakers.delete(agent_id)) await this.changed({ type: 'breakers', agent_id });
  }

  async listBreakers(): Promise<Record<string, AgentBreakers>> {
    this.assertOpen();
    const out: Record<string, AgentBreakers> = {};
    for (const [k, v] of this.breakers) out[k] = jsonCopy(v);
    return out;
  }

  subscribe(listener: (change: SafetyChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    return Promise.resolve();
  }

  /** Persists (subclasses), then tells the listeners. */
  protected async changed(change: SafetyChange | undefined): Promise<void> {
    await this.persist();
    if (change) this.notify(change);
  }

  /** Tells every listener (a throwing listener is ignored). */
  protected notify(change: SafetyChange): void {
    for (const l of this.listeners) {
      try {
        l(change);
      } catch {
        // a listener must not break the store
      }
    }
  }

  /** Hook: the file store writes here. */
  protected persist(): Promise<void> {
    return Promise.resolve();
  }

  protected assertOpen(): void {
    if (this.closed) throw new FingerError('E_STORE_UNAVAILABLE', 'the safety store is closed');
  }
}
