/**
 * Serialises work per key (a resolved path) so that backup-then-write pairs on the same file
 * never interleave: the backup always holds the content the write replaced. Different keys run
 * in parallel. Keys are dropped once their queue drains, so the map stays as small as the
 * number of paths in flight.
 */
export class PathLock {
  readonly #tails = new Map<string, Promise<unknown>>();

  /** Runs `fn` after every earlier `run` with the same key has settled. */
  run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.#tails.get(key) ?? Promise.resolve();
    const next = prev.then(fn, fn);
    const tail = next.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return next;
  }

  /** Keys with work queued or running (tests, diagnostics). */
  get size(): number {
    return this.#tails.size;
  }
}
