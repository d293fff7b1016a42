/** One sample of a metric family. */
export interface MetricSample {
  labels?: Record<string, string>;
  value: number;
}

/** A metric family in the Prometheus text exposition format (0.0.4). */
export interface MetricFamily {
  name: string;
  help: string;
  type: 'counter' | 'gauge';
  samples: MetricSample[];
}

/** Content type of the Prometheus text format. */
export const PROMETHEUS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

function escapeLabel(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

function escapeHelp(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

/** Renders families as Prometheus text (hand-written exposition, no client library). */
export function renderPrometheus(families: readonly MetricFamily[]): string {
  let out = '';
  for (const f of families) {
    out += `# HELP ${f.name} ${escapeHelp(f.help)}\n# TYPE ${f.name} ${f.type}\n`;
    for (const s of f.samples) {
      const labels = s.labels ? Object.entries(s.labels) : [];
      const l = labels.length ? `{${labels.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}` : '';
      out += `${f.name}${l} ${formatValue(s.value)}\n`;
    }
  }
  return out;
}

const HUB_HELP: Record<string, { name: string; type: 'counter' | 'gauge'; help: string }> = {
  calls_total: { name: 'finger_hub_calls_total', type: 'counter', help: 'Calls dispatched by the hub.' },
  calls_failed: { name: 'finger_hub_calls_failed_total', type: 'counter', help: 'Calls that ended in an error.' },
  inflight: { name: 'finger_hub_inflight', type: 'gauge', help: 'Calls in flight.' },
  leases_active: { name: 'finger_hub_leases_active', type: 'gauge', help: 'Leases currently held.' },
  leases_expired: { name: 'finger_hub_leases_expired_total', type: 'counter', help: 'Leases that expired.' },
  idempotent_joins: {
    name: 'finger_hub_idempotent_joins_total',
    type: 'counter',
    help: 'Duplicate requests answered by an idempotency join.',
  },
  modules: { name: 'finger_hub_modules', type: 'gauge', help: 'Registered modules.' },
};

/**
 * Families of a stats object (event bus, event store, WebSocket gateway…): every finite numeric
 * key becomes `<prefix>_<key>`; keys listed in `counters` are counters and get a `_total` suffix,
 * the rest are gauges. Keys in `known` keep their conventional names and types.
 */
export function statsFamilies(
  prefix: string,
  stats: object | undefined,
  counters: readonly string[] = [],
  known: typeof HUB_HELP = {},
): MetricFamily[] {
  const out: MetricFamily[] = [];
  if (!stats) return out;
  for (const [key, value] of Object.entries(stats)) {
    if (typeof value !== 'number' || !Number.isFinite(value)) continue;
    const k = known[key];
    const base = `${prefix}_${key.replace(/[^a-zA-Z0-9_]/g, '_')}`;
    const counter = counters.includes(key);
    const name = k?.name ?? (counter && !base.endsWith('_total') ? `${base}_total` : base);
    out.push({
      name,
      type: k?.type ?? (counter ? 'counter' : 'gauge'),
      help: k?.help ?? `${prefix.replace(/_/g, ' ')}: ${key.replace(/_/g, ' ')}.`,
      samples: [{ value }],
    });
  }
  return out;
}

/** Families of `hub.stats()`. */
export function hubFamilies(stats: object): MetricFamily[] {
  return statsFamilies('finger_hub', stats, ['idempotent_hits'], HUB_HELP);
}

/** Counter keys of the event bus, event store and WebSocket gateway stats. */
export const COUNTER_KEYS = {
  events: ['emitted', 'persisted', 'dropped', 'persist_failures', 'listener_errors'],
  event_store: ['appended', 'written', 'write_failures', 'corrupt_lines'],
  ws: ['events_sent', 'events_dropped', 'dropped_notices', 'slow_closed', 'sockets_refused'],
} as const;

/** Process memory and uptime. */
export function processFamilies(startedAt: number, now: number = Date.now()): MetricFamily[] {
  const mem = process.memoryUsage();
  return [
    {
      name: 'finger_process_uptime_seconds',
      type: 'gauge',
      help: 'Seconds since the daemon started.',
      samples: [{ value: Math.max(0, (now - startedAt) / 1000) }],
    },
    {
      name: 'finger_process_resident_memory_bytes',
      type: 'gauge',
      help: 'Resident set size.',
      samples: [{ value: mem.rss }],
    },
    {
      name: 'finger_process_heap_used_bytes',
      type: 'gauge',
      help: 'V8 heap used.',
      samples: [{ value: mem.heapUsed }],
    },
    {
      name: 'finger_process_heap_total_bytes',
      type: 'gauge',
      help: 'V8 heap total.',
      samples: [{ value: mem.heapTotal }],
    },
  ];
}

/** One `finger_http_requests_total` sample. */
interface RouteCount {
  readonly method: string;
  readonly route: string;
  readonly status: string;
  n: number;
}

/** Per-route HTTP request counters (`finger_http_requests_total{method,route,status}`). */
export class RouteCounters {
  /**
   * method → route pattern → status → its count: every request is counted through three lookups
   * of strings and a number it already has, no key string built per request. Bounded by the
   * routes and the statuses they answer.
   */
  private readonly byMethod = new Map<string, Map<string, Map<number, RouteCount>>>();
  /** The same counts in the order they first appeared (the exposition's order). */
  private readonly all: RouteCount[] = [];

  /** Counts one answered request. `route` is the route pattern (`/v1/requests/:id`), not the URL. */
  inc(method: string, route: string, status: number): void {
    let byRoute = this.byMethod.get(method);
    if (byRoute === undefined) this.byMethod.set(method, (byRoute = new Map()));
    let byStatus = byRoute.get(route);
    if (byStatus === undefined) byRoute.set(route, (byStatus = new Map()));
    const c = byStatus.get(status);
    if (c !== undefined) {
      c.n++;
      return;
    }
    const added: RouteCount = { method, route, status: String(status), n: 1 };
    byStatus.set(status, added);
    this.all.push(added);
  }

  /** The counters as one family. */
  families(): MetricFamily[] {
    const samples: MetricSample[] = [];
    for (const c of this.all)
      samples.push({ labels: { method: c.method, route: c.route, status: c.status }, value: c.n });
    return [
      {
        name: 'finger_http_requests_total',
        type: 'counter',
        help: 'HTTP requests answered, by route and status.',
        samples,
      },
    ];
  }
}
