import { readdirSync, readFileSync } from 'node:fs';

/**
 * Pids of live (non-zombie) processes whose argv holds `marker` as one whole word, read from
 * Linux's /proc. Tests start processes with a unique argument (`sleep 300.<pid><n>`) and use this
 * to see whether they, or descendants that left their group, are still alive.
 */
export function pidsWith(marker: string): number[] {
  const out: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (readFileSync(`/proc/${p}/cmdline`, 'utf8').split('\0').includes(marker)) out.push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
