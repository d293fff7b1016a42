import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { formatEventLine } from '../src/commands/events.js';
import {
  colorEnabled,
  escapeControls,
  formatDuration,
  formatResult,
  formatTable,
  Output,
  summarizeData,
} from '../src/output.js';
import { caretLines, detailLines } from '../src/render-error.js';
import { type FakeDaemon, startFakeDaemon } from './fake-daemon.js';
import { Capture, runCli } from './helpers.js';

describe('caretLines', () => {
  it('puts the caret under the position', () => {
    expect(caretLines('/hub x', 5, 'expected key=value')).toEqual(['/hub x', '     ^ expected key=value']);
  });

  it('can point past the end of the text', () => {
    expect(caretLines('/hub', 4, 'expected target=<id>')).toEqual(['/hub', '    ^ expected target=<id>']);
  });

  it('keeps one line per character when the text has newlines', () => {
    expect(caretLines('/hub\ntarget=x {', 13, '')).toEqual(['/hub target=x {', '             ^']);
  });

  it('windows a long text around the position and keeps the caret aligned', () => {
    const text = `/hub target=a ${'{"k":1,'.repeat(40)} oops`;
    const pos = text.indexOf('oops');
    const [shown, caret] = caretLines(text, pos, 'here', 40);
    expect(shown.startsWith('…')).toBe(true);
    expect(shown.length).toBeLessThanOrEqual(42);
    expect(shown.slice(caret.indexOf('^'), caret.indexOf('^') + 4)).toBe('oops');
  });
});

describe('formatting helpers', () => {
  it('formatResult prints strings raw and the rest as indented JSON', () => {
    expect(formatResult('a\nb')).toBe('a\nb');
    expect(formatResult({ a: [1] })).toBe('{\n  "a": [\n    1\n  ]\n}');
    expect(formatResult(undefined)).toBe('null');
    expect(formatResult(3)).toBe('3');
  });

  it('formatTable pads every column but the last', () => {
    expect(
      formatTable(
        ['A', 'LONG'],
        [
          ['xyz', '1'],
          ['q', ''],
        ],
      ),
    ).toEqual(['A    LONG', 'xyz  1', 'q']);
  });

  it('summarizeData shows key=value and cuts long summaries', () => {
    expect(summarizeData({ mode: 'hub', ok: true, n: 2, text: 'two words', obj: { a: 1 } })).toBe(
      'mode=hub ok=true n=2 text="two words" obj={"a":1}',
    );
    expect(summarizeData({ s: 'x'.repeat(50) }, 20)).toBe(`s=${'x'.repeat(17)}…`);
    expect(summarizeData(undefined)).toBe('');
  });

  it('formatDuration', () => {
    expect(formatDuration(0)).toBe('0s');
    expect(formatDuration(3725)).toBe('1h 2m 5s');
    expect(formatDuration(90_061.7)).toBe('1d 1h 1m 1s');
  });

  it('detailLines turns details into key: value lines', () => {
    expect(detailLines({ tools: ['a', 'b'], depth: 4, chain: [{ t: 'x' }] })).toEqual([
      'tools: a, b',
      'depth: 4',
      'chain: [{"t":"x"}]',
    ]);
    expect(detailLines('text')).toEqual(['details: text']);
    expect(detailLines(undefined)).toEqual([]);
  });
});

describe('colour', () => {
  let fake: FakeDaemon;
  beforeAll(async () => {
    fake = await startFakeDaemon();
  });
  afterAll(() => fake.close());

  it('is on only for a TTY without NO_COLOR', () => {
    expect(colorEnabled({ write: () => true, isTTY: true }, {})).toBe(true);
    expect(colorEnabled({ write: () => true, isTTY: true }, { NO_COLOR: '1' })).toBe(false);
    expect(colorEnabled({ write: () => true, isTTY: true }, { NO_COLOR: '' })).toBe(true);
    expect(colorEnabled({ write: () => true }, {})).toBe(false);
  });

  it('colours a table on a TTY and not with NO_COLOR', async () => {
    const tty = await runCli(['module', 'list'], { env: { FINGER_HOME: fake.home }, stdoutCapture: new Capture(true) });
    expect(tty.stdout).toContain('\u001b[1mID');
    expect(tty.stdout).toContain('\u001b[32mready\u001b[39m');
    const plain = await runCli(['module', 'list'], {
      env: { FINGER_HOME: fake.home, NO_COLOR: '1' },
      stdoutCapture: new Capture(true),
    });
    expect(plain.stdout).not.toContain('\u001b[');
  });
});

describe('bin/myfinger.js', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'finger-cli-bin-'));
    await mkdir(path.join(dir, 'bin'));
    await copyFile(fileURLToPath(new URL('../bin/myfinger.js', import.meta.url)), path.join(dir, 'bin', 'myfinger.js'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('says how to build when dist is missing (exit 1)', async () => {
    const err = (await promisify(execFile)(process.execPath, [path.join(dir, 'bin', 'myfinger.js'), '--version']).catch(
      (e: unknown) => e,
    )) as { code: number; stderr: string };
    expect(err.code).toBe(1);
    expect(err.stderr).toBe('myfinger is not built; run npm install (or npm run build) in the repo\n');
  });
});

describe('formatEventLine', () => {
  const c = { dim: (s: string) => s, cyan: (s: string) => s } as unknown as Parameters<typeof formatEventLine>[1];
  const base = {
    id: '01',
    type: 'HALTED',
    ts: '2026-11-26T00:00:00.000Z',
    request_id: '',
    correlation_id: '',
    session_id: '',
    workflow_id: '',
    target: '',
    data: { mode: 'graceful' },
  } as const;

  it('names the node an event came from, and nothing for this daemon’s own', () => {
    expect(formatEventLine({ ...base, data: { ...base.data } }, c)).toBe(
      '2026-11-26T00:00:00.000Z HALTED              - - mode=graceful',
    );
    expect(formatEventLine({ ...base, data: { ...base.data }, origin: 'daemon-b-1-ab' }, c)).toBe(
      '2026-11-26T00:00:00.000Z HALTED              - - mode=graceful @daemon-b-1-ab',
    );
  });
});

describe('terminal safety', () => {
  /** An Output on two captures; `tty` turns colour on. */
  function output(tty = false, json = false): { out: Output; stdout: Capture; stderr: Capture } {
    const stdout = new Capture(tty);
    const stderr = new Capture(tty);
    return { out: new Output({ stdout, stderr, env: {} }, json), stdout, stderr };
  }

  it('escapeControls shows C0, DEL, C1 and bidi/invisible characters as escapes', () => {
    expect(escapeControls('a\u001b[2Jb\u0007c\r\n\t\u0000\u007f')).toBe('a\\x1b[2Jb\\x07c\\r\\n\\t\\x00\\x7f');
    expect(escapeControls('\u0085\u009b\u200b\u200f\u202a\u202e\u2066\u2069\ufeff')).toBe(
      '\\u0085\\u009b\\u200b\\u200f\\u202a\\u202e\\u2066\\u2069\\ufeff',
    );
    expect(escapeControls('plain text, ünïcödé, 日本語, emoji 🙂, a\\x1b already')).toBe(
      'plain text, ünïcödé, 日本語, emoji 🙂, a\\x1b already',
    );
  });

  it('line and errLine escape everything, a newline in a value included', () => {
    const { out, stdout, stderr } = output();
    out.line('session: a\nforged line\u001b[1A');
    out.errLine('error: \u001b]8;;http://evil/\u0007x');
    out.warn('w\u202e');
    expect(stdout.text).toBe('session: a\\nforged line\\x1b[1A\n');
    expect(stderr.text).toBe('error: \\x1b]8;;http://evil/\\x07x\nwarning: w\\u202e\n');
  });

  it('block keeps the lines of a text; text keeps only the newlines of a stream', () => {
    const { out, stdout } = output();
    out.block('one\r\ntwo\u001b[2K\nthree');
    out.text('model says \u001b[31mhi\r\nbye');
    expect(stdout.text).toBe('one\ntwo\\x1b[2K\nthree\nmodel says \\x1b[31mhi\\r\nbye');
  });

  it('keeps the CLI’s own colours and escapes any colour a value carries', () => {
    const { out, stdout } = output(true);
    out.line(`${out.c.red('held')} \u001b[32mfake green\u001b[39m ${out.c.bold('x\u001b[2J')}`);
    expect(stdout.text).toBe('\u001b[31mheld\u001b[39m \\x1b[32mfake green\\x1b[39m \u001b[1mx\\x1b[2J\u001b[22m\n');
  });

  it('a table escapes each cell and aligns on what is shown, colours left out', () => {
    const { out, stdout } = output(true);
    out.table(
      ['A', 'B'],
      [
        [out.c.green('ok'), 'x'],
        ['a\u001b[Hb', 'y\nz'],
      ],
    );
    // eslint-disable-next-line no-control-regex
    expect(stdout.text.replace(/\u001b\[\d+m/g, '').split('\n')).toEqual([
      'A         B',
      'ok        x',
      'a\\x1b[Hb  y\\nz',
      '',
    ]);
  });

  it('JSON output carries the raw value, with what JSON.stringify leaves raw escaped', () => {
    const { out, stdout } = output(false, true);
    const v = { s: 'a\u001b[2J\u202e\u009b\u007f\u2028b', n: 1 };
    out.printJsonLine(v);
    out.printJson(v);
    // eslint-disable-next-line no-control-regex
    expect(stdout.text).not.toMatch(/[\u001b\u202e\u009b\u007f\u2028]/);
    const [first, ...rest] = stdout.text.trim().split('\n');
    expect(JSON.parse(first!)).toEqual(v);
    expect(JSON.parse(rest.join('\n'))).toEqual(v);
  });
});
