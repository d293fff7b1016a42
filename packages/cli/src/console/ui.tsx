/**
 * Small pieces every console view uses: one-line text cut to the terminal's width, level colours
 * that vanish under NO_COLOR, the key bar, a one-line text input, and $EDITOR on a JSON value.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { Text, useInput } from 'ink';
import { createContext, type ReactNode, useContext, useRef } from 'react';

import type { Env } from '../client.js';

/** True when the console may use colour (a TTY and NO_COLOR unset or empty). */
export const ColorContext = createContext(true);

const LEVEL_COLORS: Record<string, string> = {
  AUTO: 'gray',
  NOTIFY: 'cyan',
  CONFIRM: 'yellow',
  APPROVE: 'magenta',
  DENY: 'red',
};

/** The colour of a level (undefined without colour). */
export function useLevelColor(): (level: string | undefined) => string | undefined {
  const color = useContext(ColorContext);
  return (level) => (color && level ? LEVEL_COLORS[level] : undefined);
}

/** A colour name, or undefined without colour. */
export function useColor(): (name: string) => string | undefined {
  const color = useContext(ColorContext);
  return (name) => (color ? name : undefined);
}

/** One line of text, never wider than its box (cut with …). */
export function Line(props: {
  children?: ReactNode;
  color?: string | undefined;
  bold?: boolean;
  dim?: boolean;
  inverse?: boolean;
}): ReactNode {
  return (
    <Text
      wrap="truncate-end"
      {...(props.color !== undefined ? { color: props.color } : {})}
      bold={props.bold ?? false}
      dimColor={props.dim ?? false}
      inverse={props.inverse ?? false}
    >
      {props.children ?? ' '}
    </Text>
  );
}

/** A key and its label: `[a]pprove` style, kept whole (the bar wraps between keys, never inside one). */
export interface KeyLabel {
  key: string;
  label: string;
}

/** The key bar: as many lines as needed to show every label whole within `width`. */
export function KeyBar(props: { keys: KeyLabel[]; width: number }): ReactNode {
  const lines: string[] = [];
  let cur = '';
  for (const k of props.keys) {
    const item = `${k.key} ${k.label}`;
    if (cur && cur.length + 2 + item.length > props.width - 1) {
      lines.push(cur);
      cur = item;
    } else cur = cur ? `${cur}  ${item}` : item;
  }
  if (cur) lines.push(cur);
  const c = useColor();
  return (
    <>
      {lines.map((l, i) => (
        <Line key={i} color={c('cyan')}>
          {l}
        </Line>
      ))}
    </>
  );
}

/** How many lines {@link KeyBar} takes for `keys` at `width`. */
export function keyBarHeight(keys: KeyLabel[], width: number): number {
  let n = 0;
  let cur = 0;
  for (const k of keys) {
    const len = k.key.length + 1 + k.label.length;
    if (cur && cur + 2 + len > width - 1) {
      n++;
      cur = len;
    } else cur = cur ? cur + 2 + len : len;
  }
  return n + (cur ? 1 : 0);
}

/** Upper bound of a typed line (a reject reason, a filter). */
const INPUT_MAX = 500;

/** A one-line text input: Enter submits, Esc cancels, Backspace deletes. */
export function TextInput(props: {
  prompt: string;
  value: string;
  onChange(v: string): void;
  onSubmit(v: string): void;
  onCancel(): void;
}): ReactNode {
  // The value as typed so far, ahead of React: keys that arrive in one burst (a paste, or a reason
  // typed and Enter read in the same chunk) each see the previous one before a re-render.
  const current = useRef(props.value);
  current.current = props.value;
  useInput((input, key) => {
    if (key.return) props.onSubmit(current.current);
    else if (key.escape) props.onCancel();
    else if (key.backspace || key.delete) props.onChange((current.current = current.current.slice(0, -1)));
    else if (input && !key.ctrl && !key.meta) {
      // text then Enter in one chunk: the text is typed, the line break submits it
      const end = input.search(/[\r\n]/);
      // eslint-disable-next-line no-control-regex
      const typed = (end < 0 ? input : input.slice(0, end)).replace(/[\u0000-\u001f\u007f]/g, '');
      current.current = (current.current + typed).slice(0, INPUT_MAX);
      props.onChange(current.current);
      if (end >= 0) props.onSubmit(current.current);
    }
  });
  return (
    <Line>
      {props.prompt}
      {props.value}█
    </Line>
  );
}

/** What {@link editJson} made of the person's edit. */
export type EditOutcome = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * Opens `value` as JSON in `$VISUAL`/`$EDITOR` (the terminal is the editor's until it exits) and
 * parses what was saved. Not ok when no editor is set, it failed, nothing changed or it is not JSON.
 */
export function editJson(env: Env, value: unknown): EditOutcome {
  const editor = env.VISUAL || env.EDITOR;
  if (!editor) return { ok: false, message: 'set $EDITOR (or $VISUAL) to edit in the console' };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'myfinger-console-'));
  const file = path.join(dir, 'edit.json');
  const before = `${JSON.stringify(value, null, 2)}\n`;
  try {
    writeFileSync(file, before, { mode: 0o600 });
    const r = spawnSync(`${editor} ${JSON.stringify(file)}`, { shell: true, stdio: 'inherit' });
    if (r.status !== 0) return { ok: false, message: `the editor exited with ${r.status ?? r.signal}` };
    const text = readFileSync(file, 'utf8');
    if (text === before || !text.trim()) return { ok: false, message: 'edit cancelled (nothing changed)' };
    try {
      return { ok: true, value: JSON.parse(text) as unknown };
    } catch (e) {
      return { ok: false, message: `not JSON: ${(e as Error).message}` };
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
