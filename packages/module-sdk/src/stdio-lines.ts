// The lines of the stdio module protocol (docs/contracts.md §6): one JSON object per line on the
// child's stdin (host → module) and stdout (module → host). A module in TypeScript can type what
// it reads and writes with these; the hub writes the host lines with them and parses the module
// lines (packages/hub/src/runtime/stdio-protocol.ts), treating anything else as garbage.

/** What the host sends with a call. */
export interface StdioCallMeta {
  request_id: string;
  session_id: string;
  lease_id: string;
  /** Absolute epoch ms after which the result is no longer awaited. */
  deadline: number;
}

/** Run `tool` (the bare tool name) with `args` (`null` when absent); `id` is the call id. */
export interface StdioCallLine {
  type: 'call';
  id: string;
  tool: string;
  args: unknown;
  meta: StdioCallMeta;
}

/** Stop call `id`: answer it as soon as possible. */
export interface StdioCancelLine {
  type: 'cancel';
  id: string;
}

/** Health check: answer `pong` with the same id. */
export interface StdioPingLine {
  type: 'ping';
  id: string;
}

/** A line the host writes to a module's stdin. */
export type StdioHostLine = StdioCallLine | StdioCancelLine | StdioPingLine;

/** A line a module writes to its stdout. */
export type StdioModuleLine =
  | { type: 'result'; id: string; result: unknown }
  // a registered `code` (ERROR_CODES of @finger/protocol) passes through; any other becomes
  // E_MODULE_ERROR with `details.module_code`
  | { type: 'error'; id: string; code: string; message: string; details?: unknown }
  | { type: 'progress'; id: string; message: string; fraction?: number }
  | { type: 'lease.extend'; id: string; ttl_ms: number }
  | { type: 'pong'; id: string }
  | { type: 'event'; name: string; data: unknown };
