// What `/v1/health` says about FINGER_HOME's storage: which of the daemon's writers (the audit
// log, the safety state, the log) cannot write, and whether that is a full disk. A failure is
// current until its writer writes again, or until a probe write in FINGER_HOME (tried at most once
// per `probe_interval_ms`, only while something failed) shows that the disk takes data again — so
// health turns OK by itself when space returns, before the next audited call.

import { open, statfs, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** A write that failed, as a writer reports it. */
export interface StorageFailure {
  /** The operating-system code (`ENOSPC`, `EDQUOT`, `EROFS`, `EIO`, …) or `E_UNKNOWN`. */
  code: string;
  message: string;
  /** Epoch ms of the failure. */
  at: number;
}

/** One writer whose failures health reports. */
export interface StorageSource {
  /** What a person reads in health: `audit log`, `safety state`, `log`. */
  name: string;
  /** The failure of its last write, undefined once a write worked. */
  failure(): StorageFailure | undefined;
}

/** The storage part of health. */
export interface StorageStatus {
  /** A writer failed for want of space (ENOSPC, EDQUOT), or less than `min_free_bytes` is free. */
  full: boolean;
  /** Current failures, by writer. */
  failures: Array<{ source: string; code: string; message: string; at: string }>;
  /** Bytes free for this process in FINGER_HOME's file system (statfs `bavail`), when known. */
  free_bytes?: number;
}

/** Options of {@link DiskWatch}. */
export interface DiskWatchOptions {
  /** FINGER_HOME: statfs'd, and the probe file goes in its `state/`. */
  home: string;
  sources?: StorageSource[];
  /** At most one probe write per this many ms. Default 1000. */
  probe_interval_ms?: number;
  /** Less free than this counts as full. Default 64 KiB. */
  min_free_bytes?: number;
  now?: () => number;
}

/** Codes that mean "no space" (a quota counts). */
export const DISK_FULL_CODES: ReadonlySet<string> = new Set(['ENOSPC', 'EDQUOT']);

const PROBE_BYTES = 4096;

/** See the file comment. */
export class DiskWatch {
  private readonly sources: StorageSource[];
  private readonly home: string;
  private readonly probeInterval: number;
  private readonly minFree: number;
  private readonly now: () => number;
  /** Epoch ms of the last probe write that worked: failures before it are over. */
  private lastProbeOk = 0;
  private lastProbeAt = Number.NEGATIVE_INFINITY;
  private probing: Promise<void> | undefined;

  constructor(options: DiskWatchOptions) {
    this.home = options.home;
    this.sources = [...(options.sources ?? [])];
    this.probeInterval = options.probe_interval_ms ?? 1000;
    this.minFree = options.min_free_bytes ?? 64 * 1024;
    this.now = options.now ?? Date.now;
  }

  /** Adds a writer. */
  add(source: StorageSource): void {
    this.sources.push(source);
  }

  /** The current failures (after a probe when there are any) and the free space. */
  async status(): Promise<StorageStatus> {
    let failures = this.current();
    if (failures.length > 0) {
      await this.probe();
      failures = this.current();
    }
    const free_bytes = await this.freeBytes();
    const full =
      failures.some((f) => DISK_FULL_CODES.has(f.code)) || (free_bytes !== undefined && free_bytes < this.minFree);
    return {
      full,
      failures: failures.map((f) => ({ ...f, at: new Date(f.at).toISOString() })),
      ...(free_bytes !== undefined ? { free_bytes } : {}),
    };
  }

  private current(): Array<StorageFailure & { source: string }> {
    const out: Array<StorageFailure & { source: string }> = [];
    for (const s of this.sources) {
      const f = s.failure();
      if (f !== undefined && f.at > this.lastProbeOk) out.push({ source: s.name, ...f });
    }
    return out;
  }

  private async freeBytes(): Promise<number | undefined> {
    try {
      const s = await statfs(this.home);
      return Number(s.bavail) * Number(s.bsize);
    } catch {
      return undefined;
    }
  }

  /** One probe at a time, at most one per interval: write, sync and remove a small file. */
  private probe(): Promise<void> {
    if (this.probing) return this.probing;
    if (this.now() - this.lastProbeAt < this.probeInterval) return Promise.resolve();
    this.lastProbeAt = this.now();
    const file = join(this.home, 'state', `.write-probe-${process.pid}`);
    this.probing = (async () => {
      const started = this.now();
      try {
        const fh = await open(file, 'w', 0o600);
        try {
          await fh.write(Buffer.alloc(PROBE_BYTES));
          await fh.datasync();
        } finally {
          await fh.close().catch(() => undefined);
        }
        // a failure reported while the probe ran may be newer than what the probe showed
        this.lastProbeOk = started;
      } catch {
        // still failing: the failures stay current
      } finally {
        await unlink(file).catch(() => undefined);
        this.probing = undefined;
      }
    })();
    return this.probing;
  }
}
