// A real terminal for `myfinger console` tests: a private tmux server (its own socket, no user
// config) running the built CLI in one pane of a fixed size; keys go in with send-keys, the screen
// comes out with capture-pane. Ink draws nothing until exit when CI is set, so the pane's command
// runs with CI and CONTINUOUS_INTEGRATION removed.

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { MYFINGER_BIN, waitFor } from '@finger/testkit';

/** Where captured screens go (git-ignored): one text file per view, as the test last saw it. */
export const SCREENS_DIR = fileURLToPath(new URL('./console-screens/', import.meta.url));

/** The tmux binary: $TMUX_BIN, else tmux on the PATH. */
const TMUX = process.env.TMUX_BIN ?? 'tmux';

let seq = 0;

/** True when tmux can be run here. */
export function hasTmux(): boolean {
  try {
    execFileSync(TMUX, ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** A shell word. */
function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** One console in one tmux pane. */
export class ConsolePane {
  private readonly socket = `finger-console-${process.pid}-${++seq}`;

  private constructor() {}

  private tmux(...args: string[]): string {
    return execFileSync(TMUX, ['-L', this.socket, '-f', '/dev/null', ...args], { encoding: 'utf8', timeout: 10_000 });
  }

  /**
   * Starts `myfinger console` at `cols`×`rows` with `env` (and NO_COLOR unless `color`); after it
   * exits the pane prints `console exited <code>` and stays.
   */
  static start(env: Record<string, string>, opts: { cols?: number; rows?: number; args?: string[] } = {}): ConsolePane {
    const p = new ConsolePane();
    const vars = Object.entries(env).map(([k, v]) => `${k}=${q(v)}`);
    const cmd =
      `env -u CI -u CONTINUOUS_INTEGRATION ${vars.join(' ')} ${q(process.execPath)} ${q(MYFINGER_BIN)} console ` +
      `${(opts.args ?? []).map(q).join(' ')}; echo "console exited $?"; sleep 120`;
    p.tmux('new-session', '-d', '-s', 'c', '-x', String(opts.cols ?? 80), '-y', String(opts.rows ?? 24), cmd);
    return p;
  }

  /** The screen as text, one string a line (trailing blanks cut). */
  lines(): string[] {
    return this.tmux('capture-pane', '-p', '-t', 'c')
      .replace(/\n$/, '')
      .split('\n')
      .map((l) => l.replace(/\s+$/, ''));
  }

  /** The screen with tmux's escape sequences for colours and attributes (`capture-pane -e`). */
  withEscapes(): string {
    return this.tmux('capture-pane', '-p', '-e', '-t', 'c');
  }

  /** The screen as one string. */
  text(): string {
    return this.lines().join('\n');
  }

  /** Sends tmux key names (`Enter`, `Escape`, `a`), one at a time. */
  keys(...keys: string[]): void {
    for (const k of keys) this.tmux('send-keys', '-t', 'c', k);
  }

  /** Types `text` literally. */
  type(text: string): void {
    this.tmux('send-keys', '-t', 'c', '-l', text);
  }

  /** Resizes the pane's window. */
  resize(cols: number, rows: number): void {
    this.tmux('resize-window', '-t', 'c', '-x', String(cols), '-y', String(rows));
  }

  /** Waits until the screen satisfies `pred`; returns the screen. */
  until(what: string, pred: (screen: string) => boolean, ms = 15_000): Promise<string> {
    return waitFor(
      `the console to show ${what}`,
      async () => {
        const s = this.text();
        return pred(s) ? s : undefined;
      },
      ms,
      50,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n--- screen ---\n${this.text()}`);
    });
  }

  /** Waits until the screen contains `needle`. */
  waitFor(needle: string | RegExp, ms?: number): Promise<string> {
    return this.until(
      JSON.stringify(String(needle)),
      (s) => (typeof needle === 'string' ? s.includes(needle) : needle.test(s)),
      ms,
    );
  }

  /** Writes the screen to `console-screens/<name>.txt`. */
  save(name: string): void {
    mkdirSync(SCREENS_DIR, { recursive: true });
    writeFileSync(join(SCREENS_DIR, `${name}.txt`), `${this.text()}\n`);
  }

  /** Ends the tmux server of this pane (and the console in it). */
  close(): void {
    try {
      this.tmux('kill-server');
    } catch {
      // already gone
    }
  }
}
