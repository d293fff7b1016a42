/**
 * The approvals panel: held calls oldest first (agent, tool, level, primary reason, time left);
 * Enter opens the detail (parsed command or coloured diff, every matched rule); `a` approves (an
 * APPROVE-level hold asks for a second key), `r` rejects with a reason, `e` edits the arguments
 * in $EDITOR and shows the firewall's re-evaluation before sending, `A` shows the standing
 * answer's shape and scope (narrowable in $EDITOR) before sending it.
 */
import { Box, useInput } from 'ink';
import { type ReactNode, useState } from 'react';

import { type AnswerResultView, type ApprovalView, describeAnswer, formatApproval } from '../approval-views.js';
import type { Env } from '../client.js';
import { ApiError } from '../errors.js';
import { makeColors } from '../output.js';
import { canAnswer, type ConsoleData, roleName, safe, secondsLeft, shortDuration } from './model.js';
import type { CheckResult, ConsoleStore } from './store.js';
import { editJson, KeyBar, keyBarHeight, type KeyLabel, Line, TextInput, useColor, useLevelColor } from './ui.js';

type Mode =
  | { kind: 'list' }
  | { kind: 'detail'; scroll: number }
  | { kind: 'confirm'; body: Record<string, unknown>; what: string }
  | { kind: 'reject'; reason: string }
  | { kind: 'edited'; args: unknown; check: CheckResult }
  | { kind: 'standing'; scope: 'session' | 'workspace' | 'persistent'; shape: unknown; narrowed: boolean }
  | { kind: 'busy'; what: string };

const SCOPES = ['session', 'workspace', 'persistent'] as const;

/** Props of {@link ApprovalsView}. */
export interface ApprovalsViewProps {
  data: ConsoleData;
  store: ConsoleStore;
  now: number;
  width: number;
  height: number;
  env: Env;
  /** Tells the app that this view takes every key (text input, a confirmation). */
  setCapture(on: boolean): void;
}

/** Lines of the detail of `a`: everything `approvals --full` prints, controls escaped. */
function detailLines(a: ApprovalView): string[] {
  return formatApproval(a, makeColors(false)).map((l) => safe(l, 1000));
}

function diffColor(l: string, c: (n: string) => string | undefined): string | undefined {
  if (l.startsWith('+++') || l.startsWith('---')) return c('white');
  if (l.startsWith('+')) return c('green');
  if (l.startsWith('-')) return c('red');
  if (l.startsWith('@@')) return c('cyan');
  return undefined;
}

/** The approvals panel (see the file comment). */
export function ApprovalsView(p: ApprovalsViewProps): ReactNode {
  const { data, store } = p;
  const [selectedId, setSelectedId] = useState<string | undefined>(undefined);
  const [mode, setModeRaw] = useState<Mode>({ kind: 'list' });
  const c = useColor();
  const lc = useLevelColor();
  const list = data.approvals;
  const index = Math.max(0, selectedId ? list.findIndex((a) => a.id === selectedId) : 0);
  const sel: ApprovalView | undefined = list[index];
  const answerer = canAnswer(data.who);

  const setMode = (m: Mode): void => {
    setModeRaw(m);
    p.setCapture(m.kind !== 'list' && m.kind !== 'detail');
  };
  const done = (text: string, error = false): void => {
    store.notify(text, error);
    setMode({ kind: 'list' });
  };
  const refused = (what: string): void =>
    store.notify(`your token's role (${roleName(data.who)}) cannot ${what}: use an operator or admin token`, true);
  const send = (a: ApprovalView, body: Record<string, unknown>, what: string): void => {
    setMode({ kind: 'busy', what });
    store.answer(a.id, body).then(
      (r: AnswerResultView) => done(describeAnswer(r), !r.approved && body.decision !== 'reject'),
      (e: unknown) => {
        const code = e instanceof ApiError ? e.code : 'E_INTERNAL';
        done(`${code}: ${(e as Error).message}`, true);
      },
    );
  };
  const approve = (a: ApprovalView, body: Record<string, unknown>, what: string): void => {
    if (a.level === 'APPROVE') setMode({ kind: 'confirm', body, what });
    else send(a, body, what);
  };

  useInput(
    (input, key) => {
      if (mode.kind === 'busy') return;
      if (mode.kind === 'confirm') {
        if (input === 'y' && sel) send(sel, mode.body, mode.what);
        else done('not sent');
        return;
      }
      if (mode.kind === 'edited') {
        if (input === 'y' && sel) approve(sel, { decision: 'approve', args: mode.args }, 'approve edited');
        else if (input === 'n' || key.escape) done('edited arguments discarded');
        return;
      }
      if (mode.kind === 'standing') {
        if (!sel) return done('gone');
        if (input === 's') {
          const scope = SCOPES[(SCOPES.indexOf(mode.scope) + 1) % SCOPES.length]!;
          setMode({ ...mode, scope });
        } else if (input === 'n') {
          const r = editJson(p.env, mode.shape);
          if (r.ok) setMode({ ...mode, shape: r.value, narrowed: true });
          else store.notify(r.message, true);
        } else if (input === 'y' || key.return) {
          const body: Record<string, unknown> = { decision: 'always', scope: mode.scope };
          if (mode.narrowed) body.shape = mode.shape;
          send(sel, body, 'always');
        } else if (key.escape) done('not sent');
        return;
      }
      if (mode.kind === 'reject') return; // the TextInput has the keys
      // list and detail
      if (key.upArrow || input === 'k') {
        if (mode.kind === 'detail') setMode({ kind: 'detail', scroll: Math.max(0, mode.scroll - 1) });
        else if (list.length) setSelectedId(list[Math.max(0, index - 1)]!.id);
        return;
      }
      if (key.downArrow || input === 'j') {
        if (mode.kind === 'detail') setMode({ kind: 'detail', scroll: mode.scroll + 1 });
        else if (list.length) setSelectedId(list[Math.min(list.length - 1, index + 1)]!.id);
        return;
      }
      if (key.return && sel) return setMode(mode.kind === 'detail' ? { kind: 'list' } : { kind: 'detail', scroll: 0 });
      if (key.escape) return setMode({ kind: 'list' });
      if (!sel || !['a', 'r', 'e', 'A'].includes(input)) return;
      if (!answerer) return refused('answer approvals');
      if (input === 'a') approve(sel, { decision: 'approve' }, 'approve');
      else if (input === 'r') setMode({ kind: 'reject', reason: '' });
      else if (input === 'e') {
        const r = editJson(p.env, sel.args);
        if (!r.ok) return store.notify(r.message, true);
        setMode({ kind: 'busy', what: 're-evaluating the edited arguments' });
        store.check(sel.tool_id, r.value).then(
          (check) => setMode({ kind: 'edited', args: r.value, check }),
          (e: unknown) => done(`${e instanceof ApiError ? e.code : 'E_INTERNAL'}: ${(e as Error).message}`, true),
        );
      } else if (input === 'A') {
        const s = sel.standing;
        setMode({ kind: 'standing', scope: 'session', shape: s?.offered ? s.shape : undefined, narrowed: false });
      }
    },
    { isActive: true },
  );

  const keys: KeyLabel[] = [
    { key: '↑↓', label: 'select' },
    { key: '⏎', label: mode.kind === 'detail' ? 'back' : 'detail' },
  ];
  if (answerer)
    keys.push(
      { key: '[a]', label: 'approve' },
      { key: '[r]', label: 'reject' },
      { key: '[e]', label: 'edit args' },
      { key: '[A]', label: 'always…' },
    );
  else keys.push({ key: '(read only:', label: `${roleName(data.who)} token)` });
  keys.push({ key: '[1-4]', label: 'views' }, { key: '[q]', label: 'quit' });
  const modal = mode.kind !== 'list' && mode.kind !== 'detail';
  const barHeight = modal ? 0 : keyBarHeight(keys, p.width);
  const bodyHeight = Math.max(1, p.height - barHeight);

  let body: ReactNode;
  if (mode.kind === 'reject' && sel) {
    body = (
      <Box flexDirection="column">
        <Line bold>
          reject {safe(sel.tool_id)} ({sel.id})
        </Line>
        <Line>the reason goes back to the agent; Enter sends, Esc cancels</Line>
        <TextInput
          prompt="reason: "
          value={mode.reason}
          onChange={(reason) => setMode({ kind: 'reject', reason })}
          onSubmit={(reason) => send(sel, reason ? { decision: 'reject', reason } : { decision: 'reject' }, 'reject')}
          onCancel={() => done('not sent')}
        />
      </Box>
    );
  } else if (mode.kind === 'confirm' && sel) {
    body = (
      <Box flexDirection="column">
        <Line bold color={lc('APPROVE')}>
          APPROVE-level hold: {safe(sel.tool_id)}
        </Line>
        <Line>{safe(sel.evaluation.reasons[0] ?? '')}</Line>
        <Line color={c('yellow')}>press y to {mode.what}; any other key cancels</Line>
      </Box>
    );
  } else if (mode.kind === 'edited' && sel) {
    const ev = mode.check;
    const argLines = JSON.stringify(mode.args, null, 2).split('\n');
    const preview = ev.preview ? ev.preview.text.split('\n') : [];
    const lines = [
      ...argLines.map((l) => ({ t: `  ${safe(l)}`, color: undefined as string | undefined })),
      ...ev.reasons.map((r) => ({ t: `reason: ${safe(r)}`, color: undefined })),
      ...ev.matched_rules.map((r) => ({
        t: `rule:   ${safe(`${r.source} ${r.id} → ${r.level} (${r.reason})`)}`,
        color: undefined,
      })),
      ...preview.map((l) => ({ t: safe(l), color: diffColor(l, c) })),
    ];
    body = (
      <Box flexDirection="column">
        <Line bold>edited arguments of {safe(sel.tool_id)}, re-evaluated by the firewall:</Line>
        <Line bold color={lc(ev.level)}>
          re-evaluated: {ev.level} ({ev.layer}) — {safe(ev.reasons[0] ?? '')}
        </Line>
        {lines.slice(0, Math.max(0, bodyHeight - 3)).map((l, i) => (
          <Line key={i} color={l.color}>
            {l.t}
          </Line>
        ))}
        <Line color={c('yellow')}>[y] send the edited call [n] discard</Line>
      </Box>
    );
  } else if (mode.kind === 'standing' && sel) {
    const s = sel.standing;
    const shapeLines = mode.shape === undefined ? [] : JSON.stringify(mode.shape, null, 2).split('\n');
    body = (
      <Box flexDirection="column">
        <Line bold>
          standing answer for {safe(sel.tool_id)} ({sel.id})
        </Line>
        {s?.offered ? (
          <Line>from now on approves: {safe(mode.narrowed ? '(narrowed shape below)' : s.description)}</Line>
        ) : (
          <Line color={c('yellow')}>
            no standing answer: {safe(s?.offered === false ? s.reason : 'none offered')} — approves this call once
          </Line>
        )}
        <Line>
          scope: {mode.scope} (caller {safe(`${sel.facts.principal.kind}:${sel.facts.principal.id}`)})
        </Line>
        {shapeLines.slice(0, Math.max(0, bodyHeight - 5)).map((l, i) => (
          <Line key={i}> {safe(l)}</Line>
        ))}
        <Line color={c('yellow')}>[y] send [s] scope [n] narrow shape [Esc] cancel</Line>
      </Box>
    );
  } else if (mode.kind === 'busy') {
    body = <Line>{mode.what}…</Line>;
  } else if (mode.kind === 'detail' && sel) {
    const lines = detailLines(sel);
    const scroll = Math.min(mode.scroll, Math.max(0, lines.length - bodyHeight));
    body = (
      <Box flexDirection="column">
        {lines.slice(scroll, scroll + bodyHeight).map((l, i) => (
          <Line key={scroll + i} color={diffColor(l, c)}>
            {l}
          </Line>
        ))}
      </Box>
    );
  } else {
    const rows = Math.max(0, bodyHeight - 1);
    const start = Math.max(0, Math.min(index - rows + 1, list.length - rows));
    const elsewhere = Object.entries(data.elsewhere);
    body = (
      <Box flexDirection="column">
        <Line bold>
          {list.length
            ? ` ${'ID'.padEnd(9)}${'LEVEL'.padEnd(8)}${'TOOL'.padEnd(15)}${'AGENT'.padEnd(14)}${'LEFT'.padEnd(7)}REASON`
            : 'no calls are held'}
        </Line>
        {list.slice(start, start + rows).map((a, i) => {
          const left = shortDuration(secondsLeft(a.expires_at, p.now));
          const row =
            `${a.id.slice(-8).padEnd(9)}${a.level.padEnd(8)}${safe(a.tool_id, 14).padEnd(15)}` +
            `${safe(`${a.facts.principal.kind}:${a.facts.principal.id}`, 13).padEnd(14)}${left.padEnd(7)}` +
            `${safe(a.evaluation.reasons[0] ?? '')}`;
          const selected = start + i === index;
          return (
            <Line key={a.id} inverse={selected} color={lc(a.level)}>
              {selected ? '>' : ' '}
              {row}
            </Line>
          );
        })}
        {elsewhere.slice(0, Math.max(0, rows - list.length)).map(([id, node]) => (
          <Line key={id} dim>
            {' '}
            {id.slice(-8)} held on {safe(node)}: answered there
          </Line>
        ))}
      </Box>
    );
  }
  return (
    <Box flexDirection="column" height={p.height}>
      <Box flexDirection="column" height={bodyHeight} overflow="hidden">
        {body}
      </Box>
      {modal ? null : <KeyBar keys={keys} width={p.width} />}
    </Box>
  );
}
