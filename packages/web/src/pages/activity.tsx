// /ui/activity: the live stream of calls and verdicts (filterable by agent, tool and level), the
// charts, tasks with their steps, tokens and cost, breakers and modules.

import { useState } from 'preact/hooks';

import { api, errorText } from '../api.ts';
import { AnswerTimesChart, HoldReasonsChart, LevelChart } from '../components/charts.tsx';
import { useConsole } from '../context.ts';
import { clock } from '../format.ts';
import { LEVELS, type TaskStep } from '../types.ts';

/** A task's steps and their calls, fetched when opened (the snapshot carries no history). */
function TaskSteps({ id }: { id: string }) {
  const [steps, setSteps] = useState<TaskStep[]>();
  const [error, setError] = useState('');
  const load = () => {
    if (steps !== undefined) return;
    api<{ steps: TaskStep[] }>('GET', `/v1/tasks/${encodeURIComponent(id)}`).then(
      (t) => setSteps(t.steps),
      (e: unknown) => setError(errorText(e)),
    );
  };
  return (
    <details onToggle={load}>
      <summary>Steps</summary>
      {error && <p class="error">{error}</p>}
      <ol>
        {(steps ?? []).map((st) => (
          <li key={st.step}>
            {(st.calls ?? []).length === 0
              ? 'no tool calls'
              : (st.calls ?? []).map((c, i) => (
                  <div key={i}>
                    <code>{c.tool}</code> {c.summary ?? ''} {c.class ? `— ${c.class}` : ''}
                    {c.error ? <span class="bad"> {c.error.code}</span> : null}
                  </div>
                ))}
          </li>
        ))}
      </ol>
    </details>
  );
}

export function ActivityPage() {
  const s = useConsole();
  const [agent, setAgent] = useState('');
  const [tool, setTool] = useState('');
  const [level, setLevel] = useState('');
  const agents = [...new Set(s.activity.map((a) => a.agent).filter((a) => a !== ''))].sort();
  const shown = s.activity.filter(
    (a) =>
      (agent === '' || a.agent === agent) &&
      (tool === '' || a.tool.includes(tool)) &&
      (level === '' || a.level === level),
  );
  return (
    <div class="activity">
      <h1>Activity</h1>
      <section class="charts" aria-label="Charts">
        <LevelChart minutes={s.minutes} />
        <AnswerTimesChart answered={s.answered} summary={s.answerMs} />
        <HoldReasonsChart reasons={s.holdReasons} />
      </section>
      <section aria-label="Calls and verdicts">
        <h2>Calls and verdicts</h2>
        <div class="row filters">
          <label>
            Agent{' '}
            <select aria-label="Filter by agent" value={agent} onChange={(e) => setAgent(e.currentTarget.value)}>
              <option value="">all</option>
              {agents.map((a) => (
                <option key={a} value={a}>
                  {a}
                </option>
              ))}
            </select>
          </label>
          <label>
            Tool <input aria-label="Filter by tool" value={tool} onInput={(e) => setTool(e.currentTarget.value)} />
          </label>
          <label>
            Level{' '}
            <select aria-label="Filter by level" value={level} onChange={(e) => setLevel(e.currentTarget.value)}>
              <option value="">all</option>
              {LEVELS.map((l) => (
                <option key={l} value={l}>
                  {l}
                </option>
              ))}
            </select>
          </label>
        </div>
        {shown.length === 0 ? (
          <p class="empty">No calls seen since this page opened.</p>
        ) : (
          <table class="stream">
            <thead>
              <tr>
                <th>time</th>
                <th>kind</th>
                <th>tool</th>
                <th>agent</th>
                <th>level</th>
                <th>detail</th>
              </tr>
            </thead>
            <tbody>
              {shown.slice(0, 200).map((a) => (
                <tr key={a.id}>
                  <td>{clock(a.ts)}</td>
                  <td>{a.type}</td>
                  <td>{a.tool}</td>
                  <td>{a.agent}</td>
                  <td>{a.level && <span class={`badge lv-${a.level}`}>{a.level}</span>}</td>
                  <td>{a.text}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-label="Tasks">
        <h2>Tasks</h2>
        {s.tasks.length === 0 ? (
          <p class="empty">No tasks.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>task</th>
                <th>state</th>
                <th>step</th>
                <th>tokens</th>
                <th>cost</th>
              </tr>
            </thead>
            <tbody>
              {s.tasks.map((t) => (
                <tr key={t.id}>
                  <td>
                    <code>{t.id}</code> {t.text}
                    {t.question ? <div class="bad">asks: {t.question.message}</div> : null}
                    <TaskSteps id={t.id} />
                  </td>
                  <td>{t.state}</td>
                  <td>
                    {t.step ?? t.steps_done ?? 0}
                    {t.max_steps !== undefined ? `/${t.max_steps}` : ''}
                  </td>
                  <td>{(t.usage?.input_tokens ?? 0) + (t.usage?.output_tokens ?? 0)}</td>
                  <td>{(t.usage?.cost ?? 0).toFixed(4)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-label="Breakers">
        <h2>Breakers</h2>
        {s.breakers.length === 0 ? (
          <p class="empty">No agent has breaker counters yet.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>agent</th>
                <th>status</th>
                <th>repeated failures</th>
                <th>errors</th>
                <th>denials</th>
              </tr>
            </thead>
            <tbody>
              {s.breakers.map((b) => (
                <tr key={b.id}>
                  <td>{b.id}</td>
                  <td>
                    <span class={b.status === 'ok' ? 'ok' : 'bad'}>{b.status}</span>
                  </td>
                  <td>{b.repeat ?? 0}</td>
                  <td>{b.errors ?? 0}</td>
                  <td>{b.denials ?? 0}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-label="Modules">
        <h2>Modules</h2>
        <table>
          <thead>
            <tr>
              <th>module</th>
              <th>status</th>
              <th>where</th>
              <th>in flight</th>
              <th>queued</th>
            </tr>
          </thead>
          <tbody>
            {s.modules.map((m) => (
              <tr key={m.id}>
                <td>
                  {m.id} <small>{m.version}</small>
                </td>
                <td>
                  <span class={m.healthy ? 'ok' : 'bad'}>{m.healthy ? 'healthy' : 'unhealthy'}</span> {m.status}
                </td>
                <td>{m.location ?? m.source ?? 'local'}</td>
                <td>{m.inflight}</td>
                <td>{m.queued}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
    </div>
  );
}
