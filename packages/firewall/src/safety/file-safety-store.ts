import { readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';

import { describeJsonSyntax, FingerError, jsonSyntaxProblem } from '@finger/protocol';
import { atomicWriteFile } from '@finger/workspace';

import { MemorySafetyStore } from './memory-safety-store.js';
import type { AgentBreakers, LockoutRecord } from './safety-types.js';

/** The document in `FINGER_HOME/state/safety.json`. */
interface SafetyFile {
  version: 1;
  counters: Record<string, number>;
  lockouts: LockoutRecord[];
  breakers: Record<string, AgentBreakers>;
}

/**
 * {@link SafetyStateStore} persisted to one JSON file (normally `FINGER_HOME/state/safety.json`):
 * every change is written atomically (temp file, fsync, rename, directory fsync) before the
 * call resolves, so a lockout survives a crash or restart. Writes are coalesced: changes made
 * while a write runs go out together in the next one. One process per file.
 *
 * A write that fails (a full disk) rejects the change's call with E_STORE_UNAVAILABLE — the change
 * itself stays in memory and in force (a halt's lockout locks at once) — and is retried every
 * `retry_ms` until the file is written; {@link writeFailure} says so meanwhile (`/v1/health`).
 */
export class FileSafetyStore extends MemorySafetyStore {
  private writing: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  private failure: { code: string; message: string; at: number } | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopped = false;

  private constructor(
    private readonly file: string,
    private readonly retryMs: number,
  ) {
    super();
  }

  /**
   * Opens (or starts) the file. A file that is not valid JSON of the expected shape refuses to
   * open with E_STORE_UNAVAILABLE: a lockout must never be silently dropped.
   */
  static async open(file: string, options: { retry_ms?: number } = {}): Promise<FileSafetyStore> {
    const s = new FileSafetyStore(file, options.retry_ms ?? 1000);
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    let text: string | undefined;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new FingerError('E_STORE_UNAVAILABLE', `cannot read ${file}: ${(e as Error).message}`);
    }
    if (text !== undefined) s.load(text);
    return s;
  }

  private load(text: string): void {
    let doc: Partial<SafetyFile>;
    try {
      doc = JSON.parse(text) as Partial<SafetyFile>;
    } catch (e) {
      throw new FingerError(
        'E_STORE_UNAVAILABLE',
        `${this.file}: ${describeJsonSyntax(text, e)} (not valid JSON; fix the file, or remove it to clear lockouts, counters and breakers)`,
        { file: this.file, ...jsonSyntaxProblem(text, e) },
      );
    }
    if (
      typeof doc !== 'object' ||
      doc === null ||
      !Array.isArray(doc.lockouts) ||
      typeof doc.counters !== 'object' ||
      typeof doc.breakers !== 'object'
    )
      throw new FingerError('E_STORE_UNAVAILABLE', `${this.file} is not a safety state file`);
    for (const [k, v] of Object.entries(doc.counters ?? {})) if (typeof v === 'number') this.counters.set(k, v);
    for (const l of doc.lockouts) this.lockouts.set(l.agent_id ?? '', l);
    for (const [k, v] of Object.entries(doc.breakers ?? {})) this.breakers.set(k, v);
  }

  private snapshot(): string {
    const doc: SafetyFile = {
      version: 1,
      counters: Object.fromEntries(this.counters),
      lockouts: [...this.lockouts.values()],
      breakers: Object.fromEntries(this.breakers),
    };
    return `${JSON.stringify(doc, null, 2)}\n`;
  }

  /** Resolves once a write that started after this call has completed. */
  protected override persist(): Promise<void> {
    if (this.queued) return this.queued;
    const after = this.writing ?? Promise.resolve();
    const next = after
      .catch(() => undefined)
      .then(async () => {
        this.queued = undefined;
        this.writing = next;
        try {
          await atomicWriteFile(this.file, Buffer.from(this.snapshot()), { mode: 0o600 });
          this.failure = undefined;
        } catch (e) {
          const code = (e as NodeJS.ErrnoException).code;
          this.failure = {
            code: typeof code === 'string' ? code : 'E_UNKNOWN',
            message: (e as Error).message,
            at: Date.now(),
          };
          this.scheduleRetry();
          throw new FingerError('E_STORE_UNAVAILABLE', `cannot write ${this.file}: ${(e as Error).message}`, {
            file: this.file,
            retrying: true,
          });
        } finally {
          if (this.writing === next) this.writing = undefined;
        }
      });
    this.queued = next;
    return next;
  }

  /**
   * Breaker windows change on every tool call of an agent: they are kept in memory and written
   * with the next write, not fsync'd per call (lockouts and counters are).
   */
  override async setBreakers(agent_id: string, state: AgentBreakers): Promise<void> {
    this.assertOpen();
    this.breakers.set(agent_id, JSON.parse(JSON.stringify(state)) as AgentBreakers);
    this.notify({ type: 'breakers', agent_id });
    this.persist().catch(() => undefined);
  }

  /**
   * The failure of the last write while the state in memory is not yet in the file (retried every
   * `retry_ms`); undefined once it is written.
   */
  writeFailure(): { code: string; message: string; at: number } | undefined {
    return this.failure ? { ...this.failure } : undefined;
  }

  /** One retry timer at a time, not keeping the process alive; none after close. */
  private scheduleRetry(): void {
    if (this.retryTimer !== undefined || this.stopped) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.failure !== undefined && !this.stopped) this.persist().catch(() => undefined);
    }, this.retryMs);
    this.retryTimer.unref();
  }

  override async close(): Promise<void> {
    this.stopped = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await (this.queued ?? this.writing)?.catch(() => undefined);
    await super.close();
  }
}
