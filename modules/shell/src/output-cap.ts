/** What one captured stream came to. */
export interface CapturedOutput {
  /** The kept head as UTF-8 text (invalid sequences replaced), plus the marker when truncated. */
  text: string;
  /** The TRUE number of bytes the process wrote to the stream. */
  bytes: number;
  truncated: boolean;
}

/** The line appended to a truncated stream, e.g. `\n[finger: output truncated — 5242880 bytes total, 1048576 shown]`. */
export function truncationMarker(total: number, shown: number): string {
  return `\n[finger: output truncated — ${total} bytes total, ${shown} shown]`;
}

/**
 * Collects one output stream up to `cap` bytes (the head), counting every byte beyond it without
 * keeping it, so the child never blocks on a full pipe and the reported total is exact.
 */
export class OutputCap {
  readonly #cap: number;
  readonly #chunks: Buffer[] = [];
  #kept = 0;
  #total = 0;

  constructor(cap: number) {
    this.#cap = cap;
  }

  /** Bytes seen so far. */
  get total(): number {
    return this.#total;
  }

  /** Takes one chunk from the stream. */
  push(chunk: Buffer): void {
    this.#total += chunk.length;
    const room = this.#cap - this.#kept;
    if (room <= 0) return;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.#chunks.push(part);
    this.#kept += part.length;
  }

  /**
   * The result. A cut inside a multi-byte UTF-8 character drops that character's leading bytes,
   * so the shown count is the bytes actually decoded (at most `cap`).
   */
  finish(): CapturedOutput {
    let head = Buffer.concat(this.#chunks, this.#kept);
    const truncated = this.#total > this.#kept;
    if (!truncated) return { text: head.toString('utf8'), bytes: this.#total, truncated: false };
    head = head.subarray(0, utf8Boundary(head));
    return {
      text: head.toString('utf8') + truncationMarker(this.#total, head.length),
      bytes: this.#total,
      truncated: true,
    };
  }
}

/** Length of `buf` without a trailing incomplete UTF-8 sequence. */
function utf8Boundary(buf: Buffer): number {
  let i = buf.length;
  // Walk back over at most 3 continuation bytes to the lead byte of the last character.
  let back = 0;
  while (back < 3 && i - back - 1 >= 0 && (buf[i - back - 1]! & 0xc0) === 0x80) back++;
  const leadAt = i - back - 1;
  if (leadAt < 0) return i;
  const lead = buf[leadAt]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  if (need > back + 1) i = leadAt;
  return i;
}
