// Output of a bench: a plain-text table on stdout and bench/results/<bench>.json in the shape
// every bench shares: {bench, node, rows: [{system, scenario, ops_per_s, p50_us, p99_us, …}], …extra}.

import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** bench/results, next to this lib folder. */
export const RESULTS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'results');

const BASE_COLUMNS = [
  ['system', 'system'],
  ['scenario', 'scenario'],
  ['ops_per_s', 'ops/s'],
  ['p50_us', 'p50 µs'],
  ['p99_us', 'p99 µs'],
];
/** Titles of known optional columns; any other extra key is shown under its own name. */
const TITLES = { ops_per_cpu_s: 'ops/cpu-s', rss_mb: 'RSS MB' };

function formatCell(v) {
  if (v === null || v === undefined) return '-';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return String(v);
    return Number.isInteger(v) ? v.toLocaleString('en-US') : v.toLocaleString('en-US', { maximumFractionDigits: 2 });
  }
  return String(v);
}

/**
 * Formats rows as an aligned table. Columns: system, scenario, ops/s, p50 µs, p99 µs, then any
 * other key a row carries (e.g. rss_mb), in first-seen order. Numbers are right-aligned.
 * @param {Array<Record<string, unknown>>} rows
 * @returns {string}
 */
export function formatTable(rows) {
  const columns = [...BASE_COLUMNS];
  for (const row of rows) {
    for (const key of Object.keys(row)) {
      if (!columns.some(([k]) => k === key)) columns.push([key, TITLES[key] ?? key]);
    }
  }
  const cells = rows.map((row) => columns.map(([k]) => formatCell(row[k])));
  const numeric = columns.map(([k]) => rows.some((row) => typeof row[k] === 'number'));
  const widths = columns.map(([, title], i) => Math.max(title.length, ...cells.map((r) => r[i].length)));
  const pad = (s, i) => (numeric[i] ? s.padStart(widths[i]) : s.padEnd(widths[i]));
  const lines = [
    columns.map(([, title], i) => pad(title, i)).join('  '),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...cells.map((r) => r.map(pad).join('  ')),
  ];
  return lines.join('\n');
}

/**
 * Prints a bench's title and table on stdout.
 * @param {string} bench
 * @param {Array<Record<string, unknown>>} rows
 */
export function printTable(bench, rows) {
  process.stdout.write(`\n== ${bench} (node ${process.version}) ==\n${formatTable(rows)}\n`);
}

/**
 * Writes bench/results/<bench>.json: `{bench, node, rows, ...extra}` plus `machine` (cpus,
 * load average at write time) and `date`. Returns the path written.
 * @param {string} bench
 * @param {Array<Record<string, unknown>>} rows
 * @param {Record<string, unknown>} [extra] e.g. notes, ratios, detail
 */
export function writeResults(bench, rows, extra = {}) {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const file = join(RESULTS_DIR, `${bench}.json`);
  const cpu = cpus();
  const doc = {
    bench,
    node: process.version,
    rows,
    ...extra,
    machine: {
      cpus: cpu.length,
      model: cpu[0]?.model ?? 'unknown',
      loadavg: loadavg().map((x) => Math.round(x * 100) / 100),
    },
    date: new Date().toISOString(),
  };
  writeFileSync(file, `${JSON.stringify(doc, null, 2)}\n`);
  return file;
}
