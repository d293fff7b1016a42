import { stat } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';

import type { FastifyInstance } from 'fastify';

import { FingerError } from '@finger/protocol';

import { ACCESS } from '../../auth/auth-hook.js';
import { auditActor, auditedChange } from '../audited-change.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { idParams, ref } from '../schemas.js';
import { principalOf } from './input.js';

interface RegisterBody {
  manifest?: Record<string, unknown>;
  base_dir?: string;
  path?: string;
}

function badArgs(message: string, path: string): FingerError {
  return new FingerError('E_INVALID_ARGS', message, { issues: [{ path, message }] });
}

/** Resolves `path` (a module.json, or a folder holding one) to the module.json file. */
async function manifestFile(path: string): Promise<string> {
  if (!isAbsolute(path)) throw badArgs('must be an absolute path', 'body.path');
  try {
    return (await stat(path)).isDirectory() ? join(path, 'module.json') : path;
  } catch {
    throw new FingerError('E_NOT_FOUND', `no such file: ${path}`, { path });
  }
}

/**
 * `GET|POST /v1/modules`, `DELETE /v1/modules/:id`, `GET /v1/modules/:id/health`. Register and
 * unregister are audited (`module.changed`) before they apply.
 */
export function moduleRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const { registry } = deps.hub;

  app.get(
    '/v1/modules',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['modules'],
        summary: 'Registered modules',
        response: {
          200: {
            type: 'object',
            required: ['modules'],
            properties: { modules: { type: 'array', items: ref('ModuleInfo') } },
          },
          ...errorResponses(),
        },
      },
    },
    // where each module runs: `local`, or `remote` with the nodes announcing it (distributed mode)
    async () => ({
      modules: registry
        .list()
        .map((m) => ({ ...m, ...(deps.cluster?.placement(m.id) ?? { location: 'local', nodes: [] }) })),
    }),
  );

  app.post(
    '/v1/modules',
    {
      config: { roles: ACCESS.admin },
      schema: {
        tags: ['modules'],
        summary: 'Register a module: an inline manifest (+ base_dir) or the absolute path of a module.json',
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            manifest: { type: 'object', description: 'The contents of a module.json' },
            base_dir: {
              type: 'string',
              minLength: 1,
              description: 'Absolute directory relative paths of the manifest resolve against (default FINGER_HOME)',
            },
            path: { type: 'string', minLength: 1, description: 'Absolute path of a module.json (or of its folder)' },
          },
        },
        response: {
          201: { type: 'object', required: ['module'], properties: { module: ref('ModuleInfo') } },
          ...errorResponses(400, 404, 409, 503),
        },
      },
    },
    async (request, reply) => {
      const body = request.body as RegisterBody;
      if ((body.manifest === undefined) === (body.path === undefined)) {
        throw badArgs('give exactly one of "manifest" or "path"', 'body');
      }
      let apply;
      let details: Record<string, unknown>;
      if (body.path !== undefined) {
        if (body.base_dir !== undefined) throw badArgs('"base_dir" only goes with "manifest"', 'body.base_dir');
        const file = await manifestFile(body.path);
        details = { action: 'register', path: file };
        apply = () => registry.loadFile(file, 'dynamic');
      } else {
        const baseDir = body.base_dir ?? deps.home;
        if (!isAbsolute(baseDir)) throw badArgs('must be an absolute path', 'body.base_dir');
        const id = body.manifest?.id;
        details = { action: 'register', module: typeof id === 'string' ? id : null, base_dir: baseDir };
        apply = () => registry.register(body.manifest, { baseDir, source: 'dynamic' });
      }
      const record = {
        type: 'module.changed' as const,
        actor: auditActor(principalOf(request)),
        decision: 'register',
        details,
      };
      const info = await auditedChange(deps.audit, request.log, record, apply);
      return reply.code(201).send({ module: info });
    },
  );

  app.delete(
    '/v1/modules/:id',
    {
      config: { roles: ACCESS.admin },
      schema: {
        tags: ['modules'],
        summary:
          'Unregister a module (in-flight calls drain first); a module imported from the cluster is refused (E_CONFLICT)',
        params: idParams,
        response: {
          200: {
            type: 'object',
            required: ['id', 'unregistered'],
            properties: { id: { type: 'string' }, unregistered: { type: 'boolean' } },
          },
          ...errorResponses(404, 409, 503),
        },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      const unregister = () => registry.unregister(id, { drain_ms: deps.config.shutdown.drain_ms });
      if (registry.get(id) === undefined) await unregister(); // E_NOT_FOUND, nothing to audit
      // an import from the cluster would be imported again while a node announces it: the module
      // is stopped where it is served, or denied here by policy
      const placement = deps.cluster?.placement(id);
      if (placement?.location === 'remote' && placement.nodes.length > 0) {
        const nodes = placement.nodes.map((n) => n.node);
        throw new FingerError(
          'E_CONFLICT',
          `module ${id} is imported from the cluster (served by ${nodes.join(', ')}) and cannot be unregistered here: stop it where it is served (module serve), or deny it by policy`,
          { id, location: 'remote', nodes },
        );
      }
      const record = {
        type: 'module.changed' as const,
        actor: auditActor(principalOf(request)),
        decision: 'unregister',
        details: { action: 'unregister', module: id },
      };
      await auditedChange(deps.audit, request.log, record, unregister);
      return { id, unregistered: true };
    },
  );

  app.get(
    '/v1/modules/:id/health',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['modules'],
        summary: 'Run a health check of a module now',
        params: idParams,
        response: { 200: ref('ModuleHealthInfo'), ...errorResponses(404) },
      },
    },
    async (request) => {
      const { id } = request.params as { id: string };
      return registry.checkHealth(id);
    },
  );
}
