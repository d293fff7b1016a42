/**
 * Control: the lockout state (cause, by whom, when, why), locked agents and tripped breakers;
 * `H` halts everything (confirmed with `y`; operator or admin), `U` unlocks (confirmed; admin).
 * What the token's role cannot do is not offered, and says so when pressed.
 */
import { Box, useInput } from 'ink';
import { type ReactNode, useState } from 'react';

import { ApiError } from '../errors.js';
import { canAnswer, canUnlock, type ConsoleData, roleName, safe } from './model.js';
import type { ConsoleStore } from './store.js';
import { KeyBar, keyBarHeight, type KeyLabel, Line, useColor } from './ui.js';

/** Props of {@link ControlView}. */
export interface ControlViewProps {
  data: ConsoleData;
  store: ConsoleStore;
  width: number;
  height: number;
  setCapture(on: boolean): void;
}

/** The control view (see the file comment). */
export function ControlView(p: ControlViewProps): ReactNode {
  const { data, store } = p;
  const [confirm, setConfirmRaw] = useState<'halt' | 'unlock' | undefined>(undefined);
  const c = useColor();
  const mayHalt = canAnswer(data.who);
  const mayUnlock = canUnlock(data.who);
  const setConfirm = (v: 'halt' | 'unlock' | undefined): void => {
    setConfirmRaw(v);
    p.setCapture(v !== undefined);
  };
  const failed = (e: unknown): void =>
    store.notify(`${e instanceof ApiError ? e.code : 'E_INTERNAL'}: ${(e as Error).message}`, true);
  useInput((input) => {
    if (confirm) {
      setConfirm(undefined);
      if (input !== 'y') return store.notify('not sent');
      if (confirm === 'halt')
        store
          .halt()
          .then(
            (r) =>
              store.notify(
                r.phase === 'locked'
                  ? 'already halted: the system is in SAFETY_LOCKOUT'
                  : `halted (${r.phase}): SAFETY_LOCKOUT until an admin unlocks`,
              ),
            failed,
          );
      else
        store
          .unlock()
          .then((r) => store.notify(r.unlocked ? 'unlocked the system' : 'the system was not locked'), failed);
      return;
    }
    if (input === 'H') {
      if (!mayHalt)
        store.notify(`your token's role (${roleName(data.who)}) cannot halt: use an operator or admin token`, true);
      else setConfirm('halt');
    } else if (input === 'U') {
      if (!mayUnlock) store.notify(`your token's role (${roleName(data.who)}) cannot unlock: use an admin token`, true);
      else setConfirm('unlock');
    }
  });
  const keys: KeyLabel[] = [];
  if (mayHalt) keys.push({ key: '[H]', label: 'halt everything' });
  if (mayUnlock) keys.push({ key: '[U]', label: 'unlock' });
  if (!mayHalt) keys.push({ key: '(read only:', label: `${roleName(data.who)} token)` });
  else if (!mayUnlock) keys.push({ key: '(unlock:', label: 'admin token)' });
  keys.push({ key: '[1-4]', label: 'views' }, { key: '[q]', label: 'quit' });
  const s = data.safety;
  const l = s?.lockout;
  const lines: { text: string; color?: string | undefined; bold?: boolean }[] = [];
  if (!s) lines.push({ text: 'safety state: unknown (not read yet)' });
  else if (s.state === 'open')
    lines.push({ text: 'system: OPEN — tools and tasks run', color: c('green'), bold: true });
  else
    lines.push({
      text: `system: ${s.state === 'locked' ? 'SAFETY_LOCKOUT' : s.state.toUpperCase()} — nothing runs until an admin unlocks`,
      color: c('red'),
      bold: true,
    });
  if (l) {
    lines.push({ text: `  cause: ${safe(l.cause)}${l.breaker ? ` (${safe(l.breaker)})` : ''}` });
    lines.push({ text: `  by ${safe(l.by)} at ${safe(l.at)}` });
    if (l.reason) lines.push({ text: `  reason: ${safe(l.reason)}` });
  }
  for (const a of s?.agents ?? [])
    lines.push({
      text: `agent ${safe(a.agent_id ?? '?')} locked${a.breaker ? ` (${safe(a.breaker)})` : ''}: ${safe(a.reason)}`,
      color: c('yellow'),
    });
  for (const [id, st] of Object.entries(s?.breakers_tripped ?? {}))
    lines.push({ text: `breaker ${safe(id)}: ${safe(st)}`, color: c('yellow') });
  lines.push({ text: `token: ${safe(data.who?.id ?? '?')} (${roleName(data.who)})`, bold: false });
  const barHeight = confirm ? 1 : keyBarHeight(keys, p.width);
  const bodyHeight = Math.max(1, p.height - barHeight);
  return (
    <Box flexDirection="column" height={p.height}>
      <Box flexDirection="column" height={bodyHeight} overflow="hidden">
        {lines.map((x, i) => (
          <Line key={i} color={x.color} bold={x.bold ?? false}>
            {x.text}
          </Line>
        ))}
      </Box>
      {confirm === 'halt' ? (
        <Line color={c('red')} bold>
          halt stops every tool call and task: y halts, any other key cancels
        </Line>
      ) : confirm === 'unlock' ? (
        <Line color={c('yellow')} bold>
          unlock lets tools and tasks run again: y unlocks, any other key cancels
        </Line>
      ) : (
        <KeyBar keys={keys} width={p.width} />
      )}
    </Box>
  );
}
