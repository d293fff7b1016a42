import type { SafetyStateStore } from './safety-state-store.js';
import { type AgentBreakers, emptyAgentBreakers } from './safety-types.js';

/** True when nothing is counted against the agent: a success then changes nothing that matters. */
function isClean(b: AgentBreakers): boolean {
  return b.repeat.count === 0 && !b.cascade.recent.includes(true) && !b.denial.recent.includes(true);
}

/**
 * The breaker state of each agent, held in memory and written through to the store (not
 * awaited: windows change on every tool call; lockouts, which must be durable, are written by
 * the monitor itself). Updates are synchronous, so concurrent calls of one agent apply in order
 * without a queue. A success of a clean agent is a no-op (no allocation, no store write): with no
 * failure or denial in a window, the successes it holds cannot change any later trip.
 * Bounded: past `max` agents the oldest clean ones are forgotten (they reload from the store).
 */
export class AgentBreakerCache {
  private readonly states = new Map<string, AgentBreakers>();
  private readonly clean = new Set<string>();
  private readonly loading = new Map<string, Promise<void>>();

  constructor(
    private readonly store: SafetyStateStore,
    private readonly onWriteError: (e: unknown) => void,
    private readonly max = 10_000,
  ) {}

  /** True when the agent is known and clean (a success needs nothing). */
  isClean(agent_id: string): boolean {
    return this.clean.has(agent_id);
  }

  /** The agent's state if loaded; undefined when it must be loaded first ({@link load}). */
  peek(agent_id: string): AgentBreakers | undefined {
    return this.states.get(agent_id);
  }

  /** Loads the agent's state from the store once (concurrent callers share the read). */
  load(agent_id: string): Promise<void> {
    if (this.states.has(agent_id)) return Promise.resolve();
    let p = this.loading.get(agent_id);
    if (p === undefined) {
      p = this.store
        .getBreakers(agent_id)
        .then(
          (b) => {
            if (!this.states.has(agent_id)) this.put(agent_id, b ?? emptyAgentBreakers());
          },
          (e: unknown) => {
            this.onWriteError(e);
            if (!this.states.has(agent_id)) this.put(agent_id, emptyAgentBreakers());
          },
        )
        .finally(() => this.loading.delete(agent_id));
      this.loading.set(agent_id, p);
    }
    return p;
  }

  /**
   * Drops the agent's cached state (another daemon changed it in a shared store): the next
   * {@link peek} is undefined and the state is loaded from the store again.
   */
  forget(agent_id: string): void {
    this.states.delete(agent_id);
    this.clean.delete(agent_id);
  }

  /** Replaces the agent's state (memory now, store in the background). */
  save(agent_id: string, b: AgentBreakers): void {
    this.put(agent_id, b);
    this.store.setBreakers(agent_id, b).catch(this.onWriteError);
  }

  /** Every agent held in memory. */
  entries(): IterableIterator<[string, AgentBreakers]> {
    return this.states.entries();
  }

  private put(agent_id: string, b: AgentBreakers): void {
    if (!this.states.has(agent_id) && this.states.size >= this.max) this.evict();
    this.states.set(agent_id, b);
    if (isClean(b)) this.clean.add(agent_id);
    else this.clean.delete(agent_id);
  }

  private evict(): void {
    for (const id of this.clean) {
      this.clean.delete(id);
      this.states.delete(id);
      return;
    }
    const oldest = this.states.keys().next().value;
    if (oldest !== undefined) this.states.delete(oldest);
  }
}
