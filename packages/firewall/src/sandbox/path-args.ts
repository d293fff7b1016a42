// Which arguments of a call are paths, and which tools write. Shared by the policy (path globs
// match resolved paths) and the PathSandbox (every path argument is checked against the roots).

/** Argument names that always hold a path (or a list of paths). */
export const PATH_ARG_NAMES: ReadonlySet<string> = new Set([
  'path',
  'paths',
  'file',
  'files',
  'file_path',
  'dir',
  'directory',
  'cwd',
  'target',
  'destination',
  'dest',
  'source',
  'src',
]);

const formatPathProps = new WeakMap<object, ReadonlySet<string>>();
const NONE: ReadonlySet<string> = new Set();

function isPathFormat(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false;
  const s = schema as { format?: unknown; items?: unknown };
  if (s.format === 'path') return true;
  const items = s.items as { format?: unknown } | undefined;
  return typeof items === 'object' && items !== null && items.format === 'path';
}

/** Properties of `schema` declared with `format: "path"` (or arrays whose items are), cached per schema object. */
function formatPaths(schema: Record<string, unknown> | undefined): ReadonlySet<string> {
  if (schema === undefined) return NONE;
  let hit = formatPathProps.get(schema);
  if (hit === undefined) {
    const props = schema.properties;
    const out = new Set<string>();
    if (typeof props === 'object' && props !== null) {
      for (const [k, v] of Object.entries(props)) if (isPathFormat(v)) out.add(k);
    }
    hit = out.size === 0 ? NONE : out;
    formatPathProps.set(schema, hit);
  }
  return hit;
}

/** True when argument `name` holds a path: a well-known name, or `format: "path"` in the tool's input schema. */
export function isPathArg(name: string, schema?: Record<string, unknown>): boolean {
  return PATH_ARG_NAMES.has(name) || formatPaths(schema).has(name);
}

/** The path values of one argument value: a string, or the strings of an array. */
export function pathValues(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

const WRITE_VERB =
  /(?:^|[._-])(?:write|writes|patch|delete|remove|rm|move|mv|rename|copy|cp|mkdir|rmdir|create|edit|append|put|upload|save|unlink|chmod|chown|truncate|touch|replace|overwrite|install)(?:[._-]|$)/i;

/** What the write decision needs of the tool's metadata. */
export interface WriteFacts {
  capability_level: 'L0' | 'L1' | 'L2';
  side_effects: boolean;
}

/**
 * Whether a tool's path arguments are written: a tool whose name says it writes (`fs.write`,
 * `fs.patch`, `fs.delete`, `mcp.files.move_file`, …) whatever its metadata claims (an MCP
 * `readOnlyHint` does not make `write_file` read-only), or an L1/L2 tool with side effects.
 */
export function isWriteTool(tool_id: string, tool: WriteFacts): boolean {
  let named = writeNames.get(tool_id);
  if (named === undefined) {
    named = WRITE_VERB.test(tool_id.slice(tool_id.lastIndexOf('.') + 1));
    if (writeNames.size >= 10_000) writeNames.clear();
    writeNames.set(tool_id, named);
  }
  return named || (tool.side_effects && tool.capability_level !== 'L0');
}

const writeNames = new Map<string, boolean>();
