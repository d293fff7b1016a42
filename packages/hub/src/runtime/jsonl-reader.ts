/**
 * Splits a byte stream into lines with a bounded buffer. A line longer than `maxLineBytes` is
 * never held in memory: its bytes are dropped up to the next newline and reported once through
 * `onOversize` with the number of bytes dropped. Splitting happens on bytes (0x0A never occurs
 * inside a UTF-8 multi-byte sequence), each whole line is decoded once; a trailing `\r` is removed.
 */
export class LineReader {
  readonly #max: number;
  readonly #onLine: (line: string) => void;
  readonly #onOversize: (bytes: number) => void;
  #parts: Buffer[] = [];
  #size = 0;
  /** Bytes dropped of the current over-long line; -1 when not discarding. */
  #dropped = -1;

  constructor(maxLineBytes: number, onLine: (line: string) => void, onOversize: (bytes: number) => void) {
    this.#max = maxLineBytes;
    this.#onLine = onLine;
    this.#onOversize = onOversize;
  }

  /** Feeds a chunk; calls `onLine` for every complete line in it. */
  push(chunk: Buffer): void {
    let start = 0;
    const n = chunk.length;
    while (start < n) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) {
        this.#keep(chunk, start, n);
        return;
      }
      if (this.#dropped >= 0) {
        const dropped = this.#dropped + (nl - start);
        this.#dropped = -1;
        this.#onOversize(dropped);
      } else if (this.#size + (nl - start) > this.#max) {
        const dropped = this.#size + (nl - start);
        this.#reset();
        this.#onOversize(dropped);
      } else if (this.#size === 0) {
        this.#emit(chunk.toString('utf8', start, nl));
      } else {
        this.#parts.push(chunk.subarray(start, nl));
        const line = Buffer.concat(this.#parts, this.#size + (nl - start)).toString('utf8');
        this.#reset();
        this.#emit(line);
      }
      start = nl + 1;
    }
  }

  /** End of stream: a last line without newline is delivered (or reported if over-long). */
  end(): void {
    if (this.#dropped >= 0) {
      const dropped = this.#dropped;
      this.#dropped = -1;
      this.#onOversize(dropped);
    } else if (this.#size > 0) {
      const line = Buffer.concat(this.#parts, this.#size).toString('utf8');
      this.#reset();
      this.#emit(line);
    }
  }

  #keep(chunk: Buffer, start: number, end: number): void {
    const len = end - start;
    if (this.#dropped >= 0) {
      this.#dropped += len;
    } else if (this.#size + len > this.#max) {
      this.#dropped = this.#size + len;
      this.#reset();
    } else {
      this.#parts.push(start === 0 ? chunk : chunk.subarray(start, end));
      this.#size += len;
    }
  }

  #reset(): void {
    this.#parts = [];
    this.#size = 0;
  }

  #emit(line: string): void {
    this.#onLine(line.charCodeAt(line.length - 1) === 13 ? line.slice(0, -1) : line);
  }
}
