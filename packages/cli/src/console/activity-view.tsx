/**
 * The activity / audit view: the stream of calls, verdicts, holds, answers and task steps (with
 * tokens and cost), newest at the bottom, filtered with `/`; the audit chain's state with its
 * first bad entry, checked again with `v`.
 */
import { Box, useInput } from 'ink';
import { type ReactNode, useState } from 'react';

import type { ConsoleData } from './model.js';
import type { ConsoleStore } from './store.js';
import { KeyBar, keyBarHeight, type KeyLabel, Line, TextInput, useColor, useLevelColor } from './ui.js';

/** Props of {@link ActivityView}. */
export interface ActivityViewProps {
  data: ConsoleData;
  store: ConsoleStore;
  width: number;
  height: number;
  setCapture(on: boolean): void;
}

/** The activity / audit view (see the file comment). */
export function ActivityView(p: ActivityViewProps): ReactNode {
  const { data, store } = p;
  const [filter, setFilter] = useState('');
  const [typing, setTypingRaw] = useState(false);
  const [scroll, setScroll] = useState(0);
  const c = useColor();
  const lc = useLevelColor();
  const setTyping = (on: boolean): void => {
    setTypingRaw(on);
    p.setCapture(on);
  };
  useInput(
    (input, key) => {
      if (input === '/') setTyping(true);
      else if (input === 'v') {
        store.notify('verifying the audit chain…');
        store.verifyAudit().then(
          () => store.notify('audit chain checked'),
          (e: unknown) => store.notify(`audit verify failed: ${(e as Error).message}`, true),
        );
      } else if (key.escape) setFilter('');
      else if (key.upArrow || input === 'k') setScroll((s) => s + 1);
      else if (key.downArrow || input === 'j') setScroll((s) => Math.max(0, s - 1));
    },
    { isActive: !typing },
  );
  const keys: KeyLabel[] = [
    { key: '[/]', label: 'filter' },
    { key: '[Esc]', label: 'clear filter' },
    { key: '↑↓', label: 'scroll' },
    { key: '[v]', label: 'verify audit' },
    { key: '[1-4]', label: 'views' },
    { key: '[q]', label: 'quit' },
  ];
  const a = data.audit;
  const auditText =
    a.state === 'broken'
      ? `audit chain BROKEN: first bad entry seq ${a.first_bad?.seq ?? '?'} — ${a.first_bad?.reason ?? ''}`
      : a.state === 'intact'
        ? `audit chain intact: ${a.entries ?? '?'} entries${a.checked_at ? `, checked ${a.checked_at.slice(11, 19)}` : ''}`
        : 'audit chain: not checked yet ([v] verifies)';
  const needle = filter.toLowerCase();
  const shown = needle
    ? data.activity.filter((l) => `${l.type} ${l.text}`.toLowerCase().includes(needle))
    : data.activity;
  const barHeight = typing ? 1 : keyBarHeight(keys, p.width);
  const rows = Math.max(0, p.height - barHeight - 2);
  const end = Math.max(0, shown.length - scroll);
  const visible = shown.slice(Math.max(0, end - rows), end);
  return (
    <Box flexDirection="column" height={p.height}>
      <Line bold color={a.state === 'broken' ? c('red') : a.state === 'intact' ? c('green') : undefined}>
        {auditText}
      </Line>
      <Line dim>
        {filter ? `filter "${filter}": ${shown.length} of ${data.activity.length}` : `${data.activity.length} events`}
        {scroll ? ` (scrolled back ${scroll})` : ''}
      </Line>
      <Box flexDirection="column" height={rows} overflow="hidden">
        {visible.map((l) => (
          <Line key={l.id} color={lc(l.level)}>
            {l.ts.slice(11, 19)} {l.text}
          </Line>
        ))}
      </Box>
      {typing ? (
        <TextInput
          prompt="/"
          value={filter}
          onChange={setFilter}
          onSubmit={() => setTyping(false)}
          onCancel={() => {
            setFilter('');
            setTyping(false);
          }}
        />
      ) : (
        <KeyBar keys={keys} width={p.width} />
      )}
    </Box>
  );
}
