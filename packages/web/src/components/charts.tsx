// Small inline SVG charts drawn from data the console already holds (verdict events, resolved
// holds): no chart library. Each has a title and a text alternative for screen readers.

import type { Answered, MinuteBucket } from '../store.ts';
import { type Counts, type Level, LEVELS } from '../types.ts';

const W = 300;
const H = 100;

/** Calls per level per minute, stacked bars (the last 30 minutes seen). */
export function LevelChart({ minutes }: { minutes: MinuteBucket[] }) {
  const totals = minutes.map((m) => LEVELS.reduce((n, l) => n + (m.counts[l] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const bw = W / Math.max(minutes.length, 10);
  const all = LEVELS.map((l) => `${l} ${minutes.reduce((n, m) => n + (m.counts[l] ?? 0), 0)}`).join(', ');
  return (
    <figure class="chart">
      <figcaption>Calls per level per minute</figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`Calls per level: ${all}`}>
        {minutes.map((m, i) => {
          let y = H;
          return LEVELS.map((l: Level) => {
            const n = m.counts[l] ?? 0;
            if (n === 0) return null;
            const h = (n / max) * (H - 4);
            y -= h;
            return <rect key={`${i}-${l}`} class={`lv-${l}`} x={i * bw + 1} y={y} width={bw - 2} height={h} />;
          });
        })}
      </svg>
      <p class="legend">
        {LEVELS.map((l) => (
          <span key={l} class={`key lv-${l}`}>
            {l}
          </span>
        ))}
      </p>
    </figure>
  );
}

/** Answer time of each settled hold (newest right), in seconds. */
export function AnswerTimesChart({ answered, summary }: { answered: Answered[]; summary?: Counts['answer_ms'] }) {
  const last = answered.slice(0, 30).reverse();
  const max = Math.max(1, ...last.map((a) => a.latency_ms));
  const bw = W / Math.max(last.length, 10);
  const median = last.length ? [...last].sort((a, b) => a.latency_ms - b.latency_ms)[last.length >> 1]!.latency_ms : 0;
  return (
    <figure class="chart">
      <figcaption>
        {summary && summary.count > 0
          ? `Holds answered (30 min): ${summary.count}, median ${((summary.p50 ?? 0) / 1000).toFixed(1)} s, p90 ${((summary.p90 ?? 0) / 1000).toFixed(1)} s`
          : `Holds answered: ${answered.length}, median answer time ${(median / 1000).toFixed(1)} s`}
      </figcaption>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={`Answer times of ${last.length} holds`}>
        {last.map((a, i) => {
          const h = (a.latency_ms / max) * (H - 4);
          return (
            <rect
              key={i}
              class={a.decision === 'reject' ? 'bar-reject' : 'bar-approve'}
              x={i * bw + 1}
              y={H - h}
              width={bw - 2}
              height={h}
            >
              <title>{`${a.tool} ${a.decision} after ${(a.latency_ms / 1000).toFixed(1)} s`}</title>
            </rect>
          );
        })}
      </svg>
    </figure>
  );
}

/** The most frequent primary reasons of holds, horizontal bars. */
export function HoldReasonsChart({ reasons }: { reasons: Record<string, number> }) {
  const top = Object.entries(reasons)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5);
  const max = Math.max(1, ...top.map(([, n]) => n));
  return (
    <figure class="chart">
      <figcaption>Top reasons for holds</figcaption>
      <svg viewBox={`0 0 ${W} ${top.length * 20 + 4}`} role="img" aria-label="Top reasons for holds">
        {top.map(([reason, n], i) => (
          <g key={reason}>
            <rect class="bar-hold" x={0} y={i * 20 + 2} width={(n / max) * (W * 0.25)} height={16} />
            <text x={W * 0.25 + 6} y={i * 20 + 14} class="chart-text">
              {`${n} × ${reason.length > 48 ? `${reason.slice(0, 47)}…` : reason}`}
            </text>
          </g>
        ))}
      </svg>
    </figure>
  );
}
