// Small formatting helpers shared by the pages.

/** `1 h 2 min`, `3 min 4 s`, `5 s` for a duration in ms (negative counts as 0). */
export function duration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** Local time of an ISO timestamp, `HH:MM:SS` today, with the date otherwise. */
export function clock(iso: string | number): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const sameDay = d.toDateString() === new Date().toDateString();
  return sameDay ? d.toLocaleTimeString() : d.toLocaleString();
}

/** Pretty JSON (two spaces), or the text itself for a string. */
export function json(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** The task id of an executor agent principal (`executor-<task id>`), if it is one. */
export function taskOf(principalId: string): string | undefined {
  return /^executor-(.+)$/.exec(principalId)?.[1];
}

/** One line summarising a held call: the preview's first line or the arguments. */
export function summary(text: string | undefined, args: unknown): string {
  const line = (text ?? '').split('\n').find((l) => l.trim() !== '' && !l.startsWith('cwd:')) ?? '';
  const s = line !== '' ? line : (JSON.stringify(args) ?? '');
  return s.length > 140 ? `${s.slice(0, 139)}…` : s;
}
