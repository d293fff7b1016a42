/**
 * The console's root: a header (views, connection, role), the current view, a status line;
 * `1`–`4`/Tab switch views, `q` and Ctrl-C quit. Views that read a line or wait for a
 * confirmation take every key while they do (`setCapture`).
 */
import { Box, useApp, useInput, useStdout } from 'ink';
import { type ReactNode, useEffect, useState, useSyncExternalStore } from 'react';

import type { Env } from '../client.js';
import { ActivityView } from './activity-view.js';
import { ApprovalsView } from './approvals-view.js';
import { ControlView } from './control-view.js';
import { DashboardView } from './dashboard-view.js';
import { roleName } from './model.js';
import type { ConsoleStore } from './store.js';
import { Line, useColor } from './ui.js';

const VIEWS = ['approvals', 'risk', 'activity', 'control'] as const;
type View = (typeof VIEWS)[number];

/** The terminal's size, following resizes. */
function useTerminalSize(): { columns: number; rows: number } {
  const { stdout } = useStdout();
  const read = (): { columns: number; rows: number } => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const onResize = (): void => setSize(read());
    stdout.on('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  });
  return size;
}

/** Props of {@link ConsoleApp}. */
export interface ConsoleAppProps {
  store: ConsoleStore;
  env: Env;
  url: string;
}

/** The whole console. */
export function ConsoleApp(p: ConsoleAppProps): ReactNode {
  const { store } = p;
  const data = useSyncExternalStore(store.subscribe, store.getSnapshot);
  const { exit } = useApp();
  const { columns, rows } = useTerminalSize();
  const [view, setView] = useState<View>('approvals');
  const [capture, setCapture] = useState(false);
  const [now, setNow] = useState(Date.now());
  const c = useColor();
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  useInput(
    (input, key) => {
      if (input === 'q') exit();
      else if (key.tab) setView(VIEWS[(VIEWS.indexOf(view) + 1) % VIEWS.length]!);
      else if (/^[1-4]$/.test(input)) setView(VIEWS[Number(input) - 1]!);
    },
    { isActive: !capture },
  );
  // one line short of the screen: a frame as tall as the terminal makes Ink clear it on every render
  const height = Math.max(6, rows - 1);
  const width = columns;
  const bodyHeight = height - 2;
  const tabs = VIEWS.map((v, i) => {
    const label = v === 'approvals' ? `Approvals(${data.approvals.length})` : v[0]!.toUpperCase() + v.slice(1);
    return view === v ? `[${i + 1} ${label}]` : ` ${i + 1} ${label} `;
  }).join('');
  const conn =
    data.connection === 'live' ? 'live' : data.connection === 'connecting' ? 'connecting…' : 'DOWN, reconnecting';
  const status =
    data.connection === 'down'
      ? { text: `daemon unreachable at ${p.url}: ${data.connectionError ?? ''}`, error: true }
      : (data.notice ?? { text: '', error: false });
  const viewProps = { data, store, width, height: bodyHeight, setCapture };
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Line bold color={data.connection === 'live' ? undefined : c('red')}>
        finger {tabs} {conn} · {roleName(data.who)}
      </Line>
      <Box height={bodyHeight} flexDirection="column" overflow="hidden">
        {view === 'approvals' ? (
          <ApprovalsView {...viewProps} now={now} env={p.env} />
        ) : view === 'risk' ? (
          <DashboardView data={data} now={now} width={width} height={bodyHeight} />
        ) : view === 'activity' ? (
          <ActivityView {...viewProps} />
        ) : (
          <ControlView {...viewProps} />
        )}
      </Box>
      <Line color={status.error ? c('red') : c('green')}>{status.text}</Line>
    </Box>
  );
}
