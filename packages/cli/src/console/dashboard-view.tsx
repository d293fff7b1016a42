/**
 * The risk dashboard: calls per level over the last minutes (sparklines), holds and answer
 * times, the safety state and breakers, tasks with their tokens and cost, modules and health.
 */
import { Box } from 'ink';
import type { ReactNode } from 'react';

import { type ConsoleData, LEVELS, levelSeries, safe, SPARK_MINUTES, sparkline } from './model.js';
import { KeyBar, keyBarHeight, type KeyLabel, Line, useColor, useLevelColor } from './ui.js';

/** Props of {@link DashboardView}. */
export interface DashboardViewProps {
  data: ConsoleData;
  now: number;
  width: number;
  height: number;
}

const KEYS: KeyLabel[] = [
  { key: '[1-4]', label: 'views' },
  { key: '[q]', label: 'quit' },
];

/** The risk dashboard (see the file comment). */
export function DashboardView(p: DashboardViewProps): ReactNode {
  const { data } = p;
  const lc = useLevelColor();
  const c = useColor();
  const lines: { text: string; color?: string | undefined; bold?: boolean }[] = [];
  lines.push({ text: `calls per level, last ${SPARK_MINUTES} min (one column a minute)`, bold: true });
  for (const level of LEVELS) {
    const series = levelSeries(data.levels, level, p.now);
    const total = series.reduce((a, b) => a + b, 0);
    lines.push({ text: `  ${level.padEnd(8)} ${sparkline(series)} ${total}`, color: lc(level) });
  }
  const h = data.holds;
  const mean =
    h.p50Ms !== undefined
      ? `p50 ${Math.round(h.p50Ms / 1000)}s p90 ${Math.round((h.p90Ms ?? h.p50Ms) / 1000)}s`
      : h.answered && h.answerMsTotal
        ? `mean ${Math.round(h.answerMsTotal / h.answered / 1000)}s`
        : '-';
  lines.push({
    text: `holds: ${data.approvals.length} pending · ${h.held} held · ${h.answered} answered · answer ${mean}`,
    bold: true,
  });
  const s = data.safety;
  const breakers = Object.entries(s?.breakers ?? {});
  const tripped = breakers.filter(([, b]) => b.status !== 'ok');
  lines.push({
    text: `safety: ${s?.state ?? 'unknown'} · breakers ${breakers.length} (${tripped.length} tripped)`,
    bold: true,
    color: s && s.state !== 'open' ? c('red') : undefined,
  });
  for (const [id, b] of tripped.slice(0, 3)) lines.push({ text: `  ${safe(id)}: ${safe(b.status)}`, color: c('red') });
  const tasks = data.tasks.slice(0, 4);
  const cost = data.tasks.reduce((a, t) => a + (t.usage?.cost ?? 0), 0);
  const tokens = data.tasks.reduce((a, t) => a + (t.usage ? t.usage.input_tokens + t.usage.output_tokens : 0), 0);
  lines.push({ text: `tasks: ${data.tasks.length} · tokens ${tokens} · cost ${cost.toFixed(4)}`, bold: true });
  for (const t of tasks)
    lines.push({
      text: `  ${t.id.slice(-8)} ${safe(t.state).padEnd(10)} step ${t.step}/${t.max_steps} tokens ${t.usage.input_tokens + t.usage.output_tokens} cost ${t.usage.cost.toFixed(4)} ${safe(t.text, 60)}`,
    });
  const unhealthy = data.modules.filter((m) => m.healthy === false || m.status !== 'ready');
  lines.push({
    text: `modules: ${data.modules.length} · ${unhealthy.length} not ready`,
    bold: true,
    color: unhealthy.length ? c('yellow') : undefined,
  });
  lines.push({
    text: `  ${data.modules.map((m) => `${safe(m.id, 24)}${m.healthy === false ? '✗' : m.status === 'ready' ? '' : `(${safe(m.status, 12)})`}`).join(' ')}`,
  });
  const barHeight = keyBarHeight(KEYS, p.width);
  const bodyHeight = Math.max(1, p.height - barHeight);
  return (
    <Box flexDirection="column" height={p.height}>
      <Box flexDirection="column" height={bodyHeight} overflow="hidden">
        {lines.slice(0, bodyHeight).map((l, i) => (
          <Line key={i} color={l.color} bold={l.bold ?? false}>
            {l.text}
          </Line>
        ))}
      </Box>
      <KeyBar keys={KEYS} width={p.width} />
    </Box>
  );
}
