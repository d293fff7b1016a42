// The agents' hook payloads, mapped to finger's tool vocabulary (shell.exec, fs.read/list/write/
// patch/delete, web.fetch/search, mcp.<server>.<tool>) — and back, for an answer that edits the
// input. Pure: no I/O, no imports beyond this file, so the hook process stays small.
// Payload shapes: test/fixtures/hooks/ (each with its source).

/** The agents finger's hook speaks for. */
export const HOOK_AGENTS = ['claude', 'codex', 'cursor', 'copilot'] as const;
export type HookAgent = (typeof HOOK_AGENTS)[number];

/** True for a name in {@link HOOK_AGENTS}. */
export function isHookAgent(s: unknown): s is HookAgent {
  return typeof s === 'string' && (HOOK_AGENTS as readonly string[]).includes(s);
}

/** One normalised call (the body of `POST /v1/hooks/evaluate`, without hold_ms). */
export interface MappedCall {
  agent: HookAgent;
  tool: string;
  args: Record<string, unknown>;
  session_id: string;
  cwd?: string;
  tool_use_id?: string;
}

/** What one hook payload asks. */
export interface HookEvent {
  phase: 'pre' | 'post';
  /** The agent's own tool name (for the answer and updatedInput). */
  agent_tool: string;
  /** The agent's own tool input, as it came. */
  input: Record<string, unknown>;
  /** One or more calls (a Codex apply_patch touching several files is one call per file). */
  calls: MappedCall[];
  /** Post events: whether the tool succeeded, and a short note. */
  ok?: boolean;
  detail?: string;
}

/** A payload the hook cannot read: the hook denies it. */
export class HookInputError extends Error {}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** `args` of a tool input that a JSON-encoding agent (Copilot's toolArgs) sent as a string. */
function inputOf(v: unknown): Obj {
  if (isObj(v)) return v;
  if (typeof v === 'string') {
    try {
      const parsed: unknown = JSON.parse(v);
      if (isObj(parsed)) return parsed;
    } catch {
      // fall through
    }
    throw new HookInputError('tool input is not a JSON object');
  }
  if (v === undefined || v === null) return {};
  throw new HookInputError('tool input is not an object');
}

function pathOf(input: Obj): string | undefined {
  return str(input.file_path) ?? str(input.path) ?? str(input.target_file) ?? str(input.notebook_path);
}

function need(v: string | undefined, what: string): string {
  if (v === undefined) throw new HookInputError(`missing ${what}`);
  return v;
}

/** An MCP tool name → `mcp.<server>.<tool>` (Claude/Codex `mcp__srv__tool`, Cursor `MCP:tool`). */
function mcpTool(name: string): string | undefined {
  const m = /^mcp__([^_].*?)__(.+)$/.exec(name);
  const safe = (s: string): string => s.replace(/[^A-Za-z0-9_.-]/g, '_');
  if (m) return `mcp.${safe(m[1]!).replace(/\./g, '_')}.${safe(m[2]!)}`;
  const c = /^MCP:(.+)$/.exec(name);
  if (c) return `mcp.cursor.${safe(c[1]!)}`;
  return undefined;
}

/** A file edit's search/replace pairs (Claude Edit/MultiEdit, Copilot edit). */
function editsOf(input: Obj): { search: string; replace: string }[] {
  const one = (e: Obj): { search: string; replace: string } => ({
    search: need(str(e.old_string) ?? str(e.old_str), 'old_string'),
    replace: typeof e.new_string === 'string' ? e.new_string : typeof e.new_str === 'string' ? e.new_str : '',
  });
  if (Array.isArray(input.edits)) return input.edits.filter(isObj).map(one);
  return [one(input)];
}

/** The finger call of one agent tool use (shared by all four agents; names differ in case). */
function mapTool(agent: HookAgent, name: string, input: Obj, cwd: string | undefined): { tool: string; args: Obj }[] {
  const mcp = mcpTool(name);
  if (mcp !== undefined) return [{ tool: mcp, args: input }];
  switch (name.toLowerCase()) {
    case 'bash':
    case 'shell':
    case 'run_terminal_cmd':
    case 'powershell': {
      const command = need(str(input.command), 'command');
      if (agent === 'codex' && /^\s*\*\*\* Begin Patch/.test(command)) return applyPatch(command, cwd);
      return [{ tool: 'shell.exec', args: { command, ...(cwd !== undefined ? { cwd } : {}) } }];
    }
    case 'apply_patch':
      return applyPatch(need(str(input.command) ?? str(input.patch) ?? str(input.input), 'patch text'), cwd);
    case 'read':
    case 'view':
    case 'read_file':
      return [{ tool: 'fs.read', args: { path: abs(need(pathOf(input), 'file path'), cwd) } }];
    case 'glob':
    case 'grep':
    case 'ls':
    case 'list_dir':
      return [{ tool: 'fs.list', args: { path: abs(pathOf(input) ?? cwd ?? '.', cwd) } }];
    case 'write':
    case 'create':
    case 'notebookedit':
      return [
        {
          tool: 'fs.write',
          args: {
            path: abs(need(pathOf(input), 'file path'), cwd),
            content:
              typeof input.content === 'string' ? input.content : (str(input.file_text) ?? str(input.new_source) ?? ''),
          },
        },
      ];
    case 'edit':
    case 'multiedit':
    case 'str_replace':
      return [{ tool: 'fs.patch', args: { path: abs(need(pathOf(input), 'file path'), cwd), edits: editsOf(input) } }];
    case 'delete':
    case 'delete_file':
      return [{ tool: 'fs.delete', args: { path: abs(need(pathOf(input), 'file path'), cwd) } }];
    case 'webfetch':
    case 'web_fetch':
    case 'fetch':
      return [{ tool: 'web.fetch', args: { url: need(str(input.url), 'url') } }];
    case 'websearch':
    case 'web_search':
      return [{ tool: 'web.search', args: { query: need(str(input.query), 'query') } }];
    default:
      // a tool finger has no word for: judged as itself (unknown tools are held by default)
      return [{ tool: `agent.${name.replace(/[^A-Za-z0-9_-]/g, '_') || 'unnamed'}`, args: input }];
  }
}

function abs(p: string, cwd: string | undefined): string {
  if (p.startsWith('/') || cwd === undefined) return p;
  return `${cwd.replace(/\/+$/, '')}/${p}`;
}

/**
 * A Codex patch (`*** Begin Patch` … `*** End Patch`): one call per file — Add File → fs.write
 * with the added lines, Delete File → fs.delete, Update File → fs.patch with the hunk text.
 */
export function applyPatch(text: string, cwd: string | undefined): { tool: string; args: Obj }[] {
  const out: { tool: string; args: Obj }[] = [];
  let cur: { kind: 'add' | 'update' | 'delete'; path: string; lines: string[] } | undefined;
  const flush = (): void => {
    if (cur === undefined) return;
    const path = abs(cur.path, cwd);
    if (cur.kind === 'delete') out.push({ tool: 'fs.delete', args: { path } });
    else if (cur.kind === 'add')
      out.push({
        tool: 'fs.write',
        args: { path, content: cur.lines.map((l) => (l.startsWith('+') ? l.slice(1) : l)).join('\n') },
      });
    else out.push({ tool: 'fs.patch', args: { path, diff: cur.lines.join('\n') || '@@' } });
    cur = undefined;
  };
  for (const line of text.split('\n')) {
    const m = /^\*\*\* (Add|Update|Delete) File: (.+)$/.exec(line);
    if (m) {
      flush();
      cur = { kind: m[1]!.toLowerCase() as 'add' | 'update' | 'delete', path: m[2]!.trim(), lines: [] };
    } else if (/^\*\*\* Move to: (.+)$/.test(line) && cur !== undefined) {
      // a rename writes the new path too
      const to = /^\*\*\* Move to: (.+)$/.exec(line)![1]!.trim();
      out.push({ tool: 'fs.write', args: { path: abs(to, cwd), content: '' } });
    } else if (/^\*\*\* (Begin|End) Patch/.test(line) || line === '*** End of File') {
      continue;
    } else cur?.lines.push(line);
  }
  flush();
  if (out.length === 0) throw new HookInputError('apply_patch names no file');
  return out;
}

/**
 * Reads one hook payload of `agent`. Claude Code and Codex: `{hook_event_name: PreToolUse|
 * PostToolUse, session_id, cwd, tool_name, tool_input, tool_use_id, tool_response?}`. Cursor:
 * `{hook_event_name: preToolUse|postToolUse, conversation_id, tool_name, tool_input,
 * workspace_roots?, cwd?}`. Copilot CLI: the Claude shape, or `{toolName, toolArgs (JSON text),
 * cwd, timestamp}` (+ `toolResult` after). Throws {@link HookInputError} for anything else.
 */
export function parseHookEvent(agent: HookAgent, payload: unknown): HookEvent {
  if (!isObj(payload)) throw new HookInputError('the hook payload is not a JSON object');
  const p = payload;
  const eventName = str(p.hook_event_name) ?? str(p.hookEventName) ?? '';
  const post =
    /^post/i.test(eventName) || (eventName === '' && (p.toolResult !== undefined || p.tool_response !== undefined));
  const name = str(p.tool_name) ?? str(p.toolName);
  if (name === undefined) throw new HookInputError('the hook payload names no tool');
  const input = inputOf(p.tool_input ?? p.toolArgs);
  const roots = Array.isArray(p.workspace_roots) ? p.workspace_roots.filter((r) => typeof r === 'string') : [];
  const cwd = str(input.cwd) ?? str(p.cwd) ?? (roots[0] as string | undefined);
  const session = str(p.session_id) ?? str(p.conversation_id) ?? str(p.sessionId) ?? '';
  const useId = str(p.tool_use_id) ?? str(p.toolUseId) ?? str(p.tool_call_id);
  const calls = mapTool(agent, name, input, cwd).map((c) => {
    const m: MappedCall = { agent, tool: c.tool, args: c.args, session_id: session };
    if (cwd !== undefined) m.cwd = cwd;
    if (useId !== undefined) m.tool_use_id = useId;
    return m;
  });
  const ev: HookEvent = { phase: post ? 'post' : 'pre', agent_tool: name, input, calls };
  if (post) {
    const r = p.tool_response ?? p.toolResult;
    const failed =
      isObj(r) &&
      (r.success === false ||
        r.is_error === true ||
        r.resultType === 'failure' ||
        r.resultType === 'denied' ||
        (typeof r.exit_code === 'number' && r.exit_code !== 0) ||
        (typeof r.exitCode === 'number' && r.exitCode !== 0));
    ev.ok = !failed;
    if (isObj(r) && typeof (r.exit_code ?? r.exitCode) === 'number')
      ev.detail = `exit ${String(r.exit_code ?? r.exitCode)}`;
  }
  return ev;
}

/**
 * The agent's own tool input for arguments a person edited (finger's vocabulary → the agent's),
 * or undefined when the edit cannot be said in the agent's terms.
 */
export function agentInputOf(
  ev: HookEvent,
  tool: string,
  args: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const input = { ...ev.input };
  if (tool === 'shell.exec' && typeof args.command === 'string') return { ...input, command: args.command };
  if (tool === 'web.fetch' && typeof args.url === 'string') return { ...input, url: args.url };
  if (tool === 'fs.write' && typeof args.content === 'string' && /^(write|create)$/i.test(ev.agent_tool)) {
    const key = 'file_path' in input ? 'file_path' : 'path' in input ? 'path' : 'file_path';
    const contentKey = 'file_text' in input ? 'file_text' : 'content';
    return { ...input, [key]: args.path, [contentKey]: args.content };
  }
  return undefined;
}
