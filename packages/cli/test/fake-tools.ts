/**
 * The tool, grant and undo routes of the fake daemon (fake-daemon.ts calls {@link toolRoute}
 * before its 404): fixed tools, in-memory grants and backups. Errors are FingerErrors, which the
 * fake answers with their code's status.
 */
import { FingerError } from '@finger/protocol';

export const TOOLS = [
  {
    id: 'fs.write',
    module: 'fs',
    name: 'write',
    description: 'Write a file in the workspace',
    input_schema: {
      type: 'object',
      required: ['path', 'content'],
      properties: { path: { type: 'string' }, content: { type: 'string' } },
    },
    output_schema: { type: 'object', properties: { bytes: { type: 'integer' } } },
    risk_level: 'medium',
    capability_level: 'L1',
    side_effects: true,
    idempotent: false,
    timeout_ms: 10000,
    context_cost: 120,
    provider: 'fs',
    runtime: 'inprocess',
  },
  {
    id: 'fs.read',
    module: 'fs',
    name: 'read',
    description: 'Read a file',
    risk_level: 'low',
    capability_level: 'L0',
    side_effects: false,
    idempotent: true,
    context_cost: 80,
    provider: 'fs',
    runtime: 'inprocess',
  },
  {
    id: 'mcp.files.read_file',
    module: 'mcp.files',
    name: 'read_file',
    risk_level: 'high',
    capability_level: 'L2',
    side_effects: true,
    idempotent: false,
    context_cost: 100,
    provider: 'mcp.files',
    runtime: 'mcp',
    quarantined: { reason: 'definition changed' },
  },
];

const GRANT_ROLES = ['supervisor', 'executor', 'reviewer'];

/** State of the fake's tool routes, reset per fake. */
export interface FakeToolState {
  grants: Record<string, string[]>;
  backups: { id: string; path: string; ts: string; size: number; kind: string; existed: boolean }[];
}

export function newToolState(): FakeToolState {
  return {
    grants: { supervisor: ['fs.read'], executor: ['fs.*'], reviewer: ['fs.read'] },
    backups: [
      { id: 'bk-2', path: '/ws/a.txt', ts: '2026-01-02T03:04:06.000Z', size: 2, kind: 'write', existed: true },
      { id: 'bk-1', path: '/ws/b.txt', ts: '2026-01-02T03:04:05.000Z', size: 0, kind: 'write', existed: false },
    ],
  };
}

function granted(state: FakeToolState, role: string, id: string): boolean {
  return (state.grants[role] ?? []).some((g) => (g.endsWith('*') ? id.startsWith(g.slice(0, -1)) : g === id));
}

/** Answers `[status, body]` for the tool routes, or undefined when `p` is not one of them. */
export function toolRoute(
  state: FakeToolState,
  method: string,
  url: string,
  body: unknown,
): [number, unknown] | undefined {
  const [p = '', query = ''] = url.split('?');
  let m: RegExpMatchArray | null;
  if (method === 'GET' && p === '/v1/tools') {
    const role = new URLSearchParams(query).get('role');
    if (role !== null && !GRANT_ROLES.includes(role))
      throw new FingerError('E_INVALID_ARGS', `invalid request: querystring.role must be one of ${GRANT_ROLES}`);
    return [200, { tools: role === null ? TOOLS : TOOLS.filter((t) => granted(state, role, t.id)) }];
  }
  if (method === 'GET' && (m = p.match(/^\/v1\/tools\/([^/]+)$/))) {
    const id = decodeURIComponent(m[1]!);
    const tool = TOOLS.find((t) => t.id === id);
    if (!tool) throw new FingerError('E_NO_TARGET', `no tool "${id}"`);
    return [
      200,
      {
        tool,
        provider_choice:
          tool.name === 'write'
            ? {
                name: 'write',
                chosen: 'fs.write',
                candidates: ['fs.write', 'mcp.files.write'],
                rule: 'preferred_provider_order',
              }
            : { name: tool.name, chosen: tool.id, candidates: [tool.id], rule: 'only_provider' },
      },
    ];
  }
  if (method === 'POST' && (m = p.match(/^\/v1\/tools\/([^/]+)\/run$/))) {
    const id = decodeURIComponent(m[1]!);
    const { args } = body as { args: Record<string, unknown> };
    if (id === 'fs.write') {
      const issues = [];
      if (typeof args.path !== 'string') issues.push({ path: '$.path', message: 'is required' });
      if (typeof args.content !== 'string') issues.push({ path: '$.content', message: 'must be string' });
      if (issues.length) throw new FingerError('E_INVALID_ARGS', `invalid arguments for fs.write`, { issues });
      return [
        200,
        {
          request_id: 'req-t',
          correlation_id: 'corr-t',
          status: 'succeeded',
          target: id,
          result: { bytes: (args.content as string).length },
        },
      ];
    }
    if (id === 'fs.read') {
      return [
        200,
        { request_id: 'req-r', correlation_id: 'corr-r', status: 'succeeded', target: id, result: 'file text' },
      ];
    }
    throw new FingerError('E_NO_TARGET', `no tool "${id}"`);
  }
  if (p === '/v1/grants') {
    if (method === 'GET') return [200, { grants: state.grants }];
    const { role, tool } = body as { role: string; tool: string };
    if (!GRANT_ROLES.includes(role))
      throw new FingerError('E_INVALID_ARGS', 'invalid request: body.role must be equal to one of the allowed values', {
        issues: [{ path: 'body.role', message: 'must be equal to one of the allowed values' }],
      });
    const list = (state.grants[role] ??= []);
    if (method === 'POST') {
      if (!list.includes(tool)) list.push(tool);
      return [201, { role, tool, grants: list }];
    }
    if (method === 'DELETE') {
      if (!list.includes(tool)) throw new FingerError('E_NOT_FOUND', `${role} has no stored grant "${tool}"`);
      list.splice(list.indexOf(tool), 1);
      return [200, { role, tool, revoked: true, grants: list }];
    }
  }
  if (method === 'GET' && p === '/v1/backups') return [200, { backups: state.backups, total: state.backups.length }];
  if (method === 'POST' && p === '/v1/undo') {
    const { id } = (body ?? {}) as { id?: string };
    const b = id === undefined ? state.backups[0] : state.backups.find((x) => x.id === id);
    if (!b) throw new FingerError('E_NOT_FOUND', `no backup "${id}"`);
    return [
      200,
      {
        restored: { id: b.id, path: b.path, bytes: b.size, existed: b.existed, type: b.existed ? 'file' : 'absent' },
        backup_id: 'bk-3',
      },
    ];
  }
  return undefined;
}
