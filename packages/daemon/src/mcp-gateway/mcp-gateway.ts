// The MCP gateway (issue 24, item 4): what an MCP client pointed at finger's `/mcp` sees and does.
// tools/list is exactly the caller's granted tools (finger's built-ins and every registered upstream
// MCP provider, namespaced, with the pinned definitions; quarantined ones withheld). Each tools/call
// runs through the hub — and so the firewall — as the token's principal, never `direct`: an MCP
// client is an AI agent whatever token it holds. A call held for a person is waited on up to
// `hold_ms` (progress notifications meanwhile); still pending, it is kept running in the background
// and the client gets a task (2026 era, tasks extension declared) or a "held as <id>" result that
// `finger_claim {id}` (or the same call retried) completes once a person answered — once.

import { createHash } from 'node:crypto';

import { decideGrant, digestOf } from '@finger/firewall';
import type { MessageHub, ToolInfo } from '@finger/hub';
import { type ErrorInfo, type Principal, toErrorInfo, ulid } from '@finger/protocol';

/** The claim tool every caller sees: completes a held call once a person answered it. */
export const CLAIM_TOOL = 'finger_claim';
/** Default wait for a person inside one tools/call (below the 60 s request timeout of SDK clients). */
export const DEFAULT_MCP_HOLD_MS = 45_000;
/** How often a waiting call reports progress. */
export const PROGRESS_EVERY_MS = 5_000;
/** How long a settled held call waits for its claim (then it is dropped). */
export const HELD_TTL_MS = 10 * 60_000;
/** Bound of the held-call table (the oldest settled ones go first; pending ones are never dropped). */
const MAX_HELD = 1000;
/** Suggested polling interval of a task. */
const TASK_POLL_MS = 2_000;

/** An MCP tool definition as tools/list shows it. */
export interface McpToolDefinition {
  name: string;
  title?: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
}

/** A CallToolResult (content blocks; `isError` for failures and denials). */
export interface McpCallResult {
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** A CreateTaskResult of the 2026 tasks extension (`io.modelcontextprotocol/tasks`). */
export interface McpTaskResult extends McpTask {
  resultType: 'task';
}

/** A task's state (tasks/get answers it with its result once completed). */
export interface McpTask {
  taskId: string;
  status: 'working' | 'completed' | 'cancelled';
  statusMessage: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
}

/** What one tools/call may do besides run: report progress, give up with the client, take a task. */
export interface McpCallOptions {
  /**
   * Called (only when the client asked for progress) while the call waits for a person and for
   * each progress report of the tool itself; `progress` increases across both.
   */
  progress?: (message: string, progress: number) => void;
  /** The client went away or cancelled: stop waiting (the held call stays kept for a claim). */
  signal?: AbortSignal;
  /** The request declared the tasks extension: a call still held after the wait becomes a task. */
  tasks?: boolean;
  /** The daemon's origin as the client reached it (for the approval page link). */
  origin: string;
}

interface Outcome {
  ok: boolean;
  result?: unknown;
  error?: ErrorInfo;
}

/** A call that was held for a person and outlived the tools/call that started it. */
interface HeldCall {
  key: string;
  owner: string;
  tool: string;
  approval_id: string | undefined;
  /** Set once the approval is known (APPROVAL_REQUESTED). */
  known: Promise<void>;
  done: Promise<Outcome>;
  outcome: Outcome | undefined;
  task_id: string | undefined;
  created_at: number;
  updated_at: number;
  /** When a settled outcome is dropped unclaimed. */
  expires: number;
  cancel_requested: boolean;
  /** The waiting tools/call's progress sink (none while nobody waits). */
  relay: ((message: string) => void) | undefined;
  /** Progress reported so far (a client sees it increase across waits). */
  ticks: number;
}

/** What the gateway asks of the human gate. */
export interface McpApprovals {
  /** Resolves the pending approval `id` of `by`'s call as cancelled (audited); false when it is not pending. */
  withdraw(id: string, by: { kind: string; id: string; roles: readonly string[] }, reason: string): Promise<boolean>;
}

/** Options of {@link McpGateway}. */
export interface McpGatewayOptions {
  hub: MessageHub;
  grants: { isGranted(role: string, tool_id: string, module_grants?: readonly string[]): boolean };
  /** The human gate (HumanGate satisfies it): a task's cancel withdraws its pending approval. */
  approvals?: McpApprovals;
  /** How long one tools/call waits for a person before answering "held" (default {@link DEFAULT_MCP_HOLD_MS}). */
  hold_ms?: number;
  /** Progress period while waiting (default {@link PROGRESS_EVERY_MS}). */
  progress_ms?: number;
  now?: () => number;
}

function text(t: string, isError = false, structured?: Record<string, unknown>): McpCallResult {
  const r: McpCallResult = { content: [{ type: 'text', text: t }] };
  if (structured !== undefined) r.structuredContent = structured;
  if (isError) r.isError = true;
  return r;
}

function ownerOf(p: Principal): string {
  return `${p.kind}:${p.id}`;
}

/** An MCP tool result of a finished hub call: its value as JSON text (or the text itself), errors with code and reason. */
export function resultOf(o: Outcome): McpCallResult {
  if (!o.ok) {
    const e = o.error ?? { code: 'E_INTERNAL', message: 'failed' };
    return text(`${e.code}: ${e.message}`, true, { error: { code: e.code, message: e.message } });
  }
  const v = o.result;
  if (isCallToolResult(v)) return v;
  if (typeof v === 'string') return text(v);
  const structured =
    typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  return text(JSON.stringify(v ?? null), false, structured);
}

/** An upstream MCP tool's own result (content blocks) passes through as it came. */
function isCallToolResult(v: unknown): v is McpCallResult {
  return typeof v === 'object' && v !== null && Array.isArray((v as { content?: unknown }).content);
}

/**
 * The gateway's state for one daemon: lists tools per principal, runs calls through the hub, and
 * keeps held calls (bounded, owner-checked, single-use) for their claim, retry or task poll.
 */
export class McpGateway {
  readonly #o: McpGatewayOptions;
  readonly #now: () => number;
  readonly holdMs: number;
  readonly #progressMs: number;
  /** Held calls by key (owner + tool + args digest): the retry of the same call finds its own. */
  readonly #byKey = new Map<string, HeldCall>();
  /** The same records by approval id and by task id. */
  readonly #byId = new Map<string, HeldCall>();
  #closed = false;

  constructor(o: McpGatewayOptions) {
    this.#o = o;
    this.#now = o.now ?? Date.now;
    this.holdMs = o.hold_ms ?? DEFAULT_MCP_HOLD_MS;
    this.#progressMs = o.progress_ms ?? PROGRESS_EVERY_MS;
  }

  /** The tools `principal` may call (grants as the firewall checks them), quarantined ones withheld, plus finger_claim. */
  listTools(principal: Principal): McpToolDefinition[] {
    const out: McpToolDefinition[] = [];
    for (const t of this.#o.hub.tools.list()) {
      if (t.quarantined !== undefined) continue;
      if (!decideGrant(this.#o.grants, principal, t.id, t.grants).allowed) continue;
      out.push(definitionOf(t));
    }
    out.push(CLAIM_DEFINITION);
    return out;
  }

  /** Held calls kept (for health and tests). */
  stats(): { held: number; pending: number } {
    let pending = 0;
    for (const h of this.#byKey.values()) if (h.outcome === undefined) pending++;
    return { held: this.#byKey.size, pending };
  }

  /**
   * Runs `name` with `args` as `principal`. Errors and denials come back as `isError` results that
   * carry the firewall's code and reason. A call held for a person is waited on up to `hold_ms`;
   * then it is a task (`opts.tasks`) or a "held" result naming the approval and its page.
   */
  async call(
    principal: Principal,
    name: string,
    args: Record<string, unknown>,
    opts: McpCallOptions,
  ): Promise<McpCallResult | McpTaskResult> {
    if (this.#closed) return text('E_PROVIDER_CLOSED: the daemon is shutting down', true);
    if (name === CLAIM_TOOL) return this.claim(principal, args, opts);
    this.#sweep();
    const key = keyOf(principal, name, args);
    let held = this.#byKey.get(key);
    if (held !== undefined && held.outcome !== undefined) return this.#take(held);
    if (held === undefined) {
      const started = this.#start(principal, name, args, key);
      if ('outcome' in started) return resultOf(started.outcome);
      held = started.held;
    }
    return this.#wait(held, opts);
  }

  /** `finger_claim {id}`: the outcome of the caller's held call `id` once answered (once), else it waits again. */
  async claim(
    principal: Principal,
    args: Record<string, unknown>,
    opts: McpCallOptions,
  ): Promise<McpCallResult | McpTaskResult> {
    const id = args.id;
    if (typeof id !== 'string' || id === '')
      return text('E_INVALID_ARGS: finger_claim needs {"id": "<approval id>"}', true, {
        error: { code: 'E_INVALID_ARGS', message: 'id is required' },
      });
    this.#sweep();
    const held = this.#byId.get(id);
    if (held === undefined || held.owner !== ownerOf(principal))
      return text(`E_NOT_FOUND: no held call ${id} of yours (already claimed, expired, or never held)`, true, {
        error: { code: 'E_NOT_FOUND', message: `no held call ${id}` },
      });
    if (held.outcome !== undefined) return this.#take(held);
    return this.#wait(held, opts);
  }

  /** tasks/get: the task `taskId` of `principal`, with its result once settled; undefined when unknown (or not the caller's). */
  getTask(principal: Principal, taskId: string): Record<string, unknown> | undefined {
    this.#sweep();
    const held = this.#byId.get(taskId);
    if (held === undefined || held.task_id !== taskId || held.owner !== ownerOf(principal)) return undefined;
    const base = this.#taskOf(held);
    if (held.outcome === undefined) return { ...base, resultType: 'complete' };
    // the result is handed over once: a later poll finds nothing
    this.#drop(held);
    return { ...base, resultType: 'complete', status: 'completed', result: resultOf(held.outcome) };
  }

  /**
   * tasks/cancel of the caller's own task: a call still waiting for a person is withdrawn — its
   * approval is resolved as `cancelled` (audited as answered by the caller; the call fails with
   * E_WITHDRAWN and never runs). An approval already being answered, or a call already answered,
   * cannot be taken back: its outcome is dropped instead of kept. False when the task is unknown
   * (or another principal's).
   */
  async cancelTask(principal: Principal, taskId: string): Promise<boolean> {
    const held = this.#byId.get(taskId);
    if (held === undefined || held.task_id !== taskId || held.owner !== ownerOf(principal)) return false;
    held.cancel_requested = true;
    if (held.outcome === undefined && held.approval_id !== undefined && this.#o.approvals !== undefined) {
      await this.#o.approvals.withdraw(held.approval_id, principal, `withdrawn by the caller (tasks/cancel ${taskId})`);
    }
    // settled (now or before): nobody will ask for it
    if (held.outcome !== undefined) this.#drop(held);
    return true;
  }

  /** Stops: new calls are refused; held records are dropped (their hub calls end with the hub). */
  close(): void {
    this.#closed = true;
    this.#byKey.clear();
    this.#byId.clear();
  }

  #start(
    principal: Principal,
    tool: string,
    args: Record<string, unknown>,
    key: string,
  ): { held: HeldCall } | { outcome: Outcome } {
    const hub = this.#o.hub;
    const request_id = ulid();
    const now = this.#now();
    let markKnown!: () => void;
    const held: HeldCall = {
      key,
      owner: ownerOf(principal),
      tool,
      approval_id: undefined,
      known: new Promise<void>((r) => (markKnown = r)),
      done: Promise.resolve({ ok: true }),
      outcome: undefined,
      task_id: undefined,
      created_at: now,
      updated_at: now,
      expires: Number.POSITIVE_INFINITY,
      cancel_requested: false,
      relay: undefined,
      ticks: 0,
    };
    const unsubscribe = hub.events.subscribe({ types: ['APPROVAL_REQUESTED'], request_id }, (e) => {
      const id = (e.data as { id?: unknown } | undefined)?.id;
      if (typeof id !== 'string') return;
      held.approval_id = id;
      this.#byId.set(id, held);
      markKnown();
    });
    let p: Promise<unknown>;
    try {
      p = hub.request({
        target: tool,
        payload: args,
        source: principal,
        request_id,
        generated_id: true,
        correlation_id: request_id,
        direct: false,
        // the tool's own progress reaches the client that waits for it
        onProgress: (message) => held.relay?.(message),
      });
    } catch (e) {
      unsubscribe();
      return { outcome: { ok: false, error: toErrorInfo(e) } };
    }
    held.done = p.then(
      (result): Outcome => ({ ok: true, result }),
      (e: unknown): Outcome => ({ ok: false, error: toErrorInfo(e) }),
    );
    void held.done.then((o) => {
      unsubscribe();
      held.outcome = o;
      held.updated_at = this.#now();
      held.expires = held.updated_at + HELD_TTL_MS;
      markKnown();
      // never held, or nobody will ask for it: forget it
      if (held.approval_id === undefined || held.cancel_requested) this.#drop(held);
    });
    this.#byKey.set(key, held);
    this.#bound();
    return { held };
  }

  /** Waits for the outcome up to hold_ms (progress while a person is asked); still pending → task or "held". */
  async #wait(held: HeldCall, opts: McpCallOptions): Promise<McpCallResult | McpTaskResult> {
    const progress = opts.progress;
    const relay = progress === undefined ? undefined : (message: string): void => progress(message, ++held.ticks);
    held.relay = relay;
    const outcome = await new Promise<Outcome | undefined>((resolve) => {
      let finished = false;
      let timer: NodeJS.Timeout | undefined;
      let ticker: NodeJS.Timeout | undefined;
      const finish = (o: Outcome | undefined): void => {
        if (finished) return;
        finished = true;
        if (held.relay === relay) held.relay = undefined;
        clearTimeout(timer);
        clearInterval(ticker);
        opts.signal?.removeEventListener('abort', gone);
        resolve(o);
      };
      const gone = (): void => finish(undefined);
      void held.done.then(finish);
      if (opts.signal?.aborted === true) return gone();
      opts.signal?.addEventListener('abort', gone, { once: true });
      // the wait for a person starts once the call is known to be held (an AUTO call just runs)
      void held.known.then(() => {
        if (finished || held.outcome !== undefined) return;
        const started = this.#now();
        const tick = (): void => {
          const waited = Math.round((this.#now() - started) / 1000);
          relay?.(`held for a person as ${held.approval_id ?? '(pending)'} (${waited} s)`);
        };
        tick();
        ticker = setInterval(tick, this.#progressMs);
        timer = setTimeout(gone, this.holdMs);
      });
    });
    if (outcome !== undefined) return this.#take(held);
    if (held.outcome !== undefined) return this.#take(held);
    return this.#pending(held, opts);
  }

  #pending(held: HeldCall, opts: McpCallOptions): McpCallResult | McpTaskResult {
    const id = held.approval_id;
    const url = id !== undefined ? `${opts.origin}/ui/approvals/${id}` : `${opts.origin}/ui/approvals`;
    const how = id !== undefined ? `\`myfinger approve ${id}\` or ${url}` : `\`myfinger approvals\` or ${url}`;
    const message = `held for a person as ${id ?? '(pending)'}: ask them to approve (${how})`;
    if (opts.tasks === true && id !== undefined) {
      held.task_id = id;
      return { ...this.#taskOf(held), resultType: 'task', statusMessage: message };
    }
    return text(
      `${message}, then call ${CLAIM_TOOL} {"id": "${id ?? ''}"} (or retry the same call) to get its result. It has not run.`,
      false,
      { status: 'held', approval_id: id ?? null, approval_url: url, claim: { tool: CLAIM_TOOL, arguments: { id } } },
    );
  }

  #taskOf(held: HeldCall): McpTask {
    return {
      taskId: held.task_id!,
      status: held.outcome === undefined ? 'working' : 'completed',
      statusMessage:
        held.outcome === undefined
          ? `held for a person as ${held.approval_id}`
          : held.outcome.ok
            ? 'answered and run'
            : `${held.outcome.error?.code}: ${held.outcome.error?.message}`,
      createdAt: new Date(held.created_at).toISOString(),
      lastUpdatedAt: new Date(held.updated_at).toISOString(),
      ttlMs: HELD_TTL_MS,
      pollIntervalMs: TASK_POLL_MS,
    };
  }

  /** Hands the settled outcome over once. */
  #take(held: HeldCall): McpCallResult {
    this.#drop(held);
    return resultOf(held.outcome!);
  }

  #drop(held: HeldCall): void {
    if (this.#byKey.get(held.key) === held) this.#byKey.delete(held.key);
    if (held.approval_id !== undefined && this.#byId.get(held.approval_id) === held)
      this.#byId.delete(held.approval_id);
  }

  #sweep(): void {
    const now = this.#now();
    for (const h of this.#byKey.values()) if (h.outcome !== undefined && h.expires <= now) this.#drop(h);
  }

  /** Past MAX_HELD, settled records go first, oldest first. */
  #bound(): void {
    if (this.#byKey.size <= MAX_HELD) return;
    for (const h of this.#byKey.values()) {
      if (this.#byKey.size <= MAX_HELD) return;
      if (h.outcome !== undefined) this.#drop(h);
    }
  }
}

/** The exact call: who asks, which tool, which arguments. */
function keyOf(principal: Principal, tool: string, args: Record<string, unknown>): string {
  return createHash('sha256')
    .update(`${principal.kind}:${principal.id}\0${tool}\0${digestOf(args)}`)
    .digest('hex');
}

/** The MCP definition of a registered tool: its id as the name, its (pinned) schema, hints from finger's metadata. */
export function definitionOf(t: ToolInfo): McpToolDefinition {
  return {
    name: t.id,
    description: t.description,
    inputSchema: t.input_schema ?? { type: 'object' },
    annotations: {
      readOnlyHint: !t.side_effects,
      destructiveHint: t.side_effects,
      idempotentHint: t.idempotent,
      openWorldHint: t.capability_level === 'L2',
    },
  };
}

const CLAIM_DEFINITION: McpToolDefinition = {
  name: CLAIM_TOOL,
  description:
    'Completes a call finger held for a person: give the approval id the held result named. Returns the call’s result once a person approved (it then ran), an error with their reason if they rejected it, or "held" again while nobody has answered.',
  inputSchema: {
    type: 'object',
    required: ['id'],
    additionalProperties: false,
    properties: {
      id: { type: 'string', minLength: 1, maxLength: 64, description: 'The approval id of the held call' },
    },
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
};
