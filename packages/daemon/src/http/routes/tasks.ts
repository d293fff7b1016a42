import type { FastifyInstance } from 'fastify';

import type { TaskRecord } from '@finger/agents';
import type { TaskService } from '@finger/agents';
import { FingerError } from '@finger/protocol';

import { ACCESS } from '../../auth/auth-hook.js';
import { errorResponses } from '../errors.js';
import type { RouteDeps } from '../route-deps.js';
import { principalOf } from './input.js';

const taskSchema = {
  type: 'object',
  additionalProperties: true,
  required: ['id', 'text', 'workspace', 'state', 'owner', 'step', 'max_steps', 'usage', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    text: { type: 'string' },
    workspace: { type: 'string' },
    state: { type: 'string' },
    owner: { type: 'string' },
    step: { type: 'integer' },
    max_steps: { type: 'integer' },
    usage: { type: 'object', additionalProperties: true },
    question: { type: 'object', additionalProperties: true },
    summary: { type: 'string' },
    error: { type: 'object', additionalProperties: true },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
  },
} as const;

const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_-]+$' } },
} as const;

/** The list view of a task: no history, no context. */
export function brief(t: TaskRecord): Record<string, unknown> {
  const { context: _c, steps: _s, current: _cur, ...rest } = t;
  return { ...rest, steps_done: t.steps.length };
}

function service(deps: RouteDeps): TaskService {
  if (!deps.tasks) throw new FingerError('E_NOT_FOUND', 'supervised tasks are not available in this daemon');
  return deps.tasks;
}

/**
 * Supervised tasks (§3.15): `POST /v1/tasks` starts one in a workspace, `GET /v1/tasks[?all]`,
 * `GET /v1/tasks/:id` (the whole checkpoint), `POST /v1/tasks/:id/abort` (two-phase),
 * `POST /v1/tasks/:id/resume`, `POST /v1/tasks/:id/answer` (the task's question: completion,
 * unreadable model reply, in-flight call, file conflict). Owners see their own tasks, admins all;
 * another owner's task is E_NOT_FOUND. Progress is pushed as TASK_STATE events on `/v1/events`.
 */
export function taskRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.post(
    '/v1/tasks',
    {
      config: { roles: ACCESS.operator },
      schema: {
        tags: ['tasks'],
        summary: 'Start a supervised task in a workspace directory (the task may read and write there)',
        body: {
          type: 'object',
          required: ['text', 'workspace'],
          additionalProperties: false,
          properties: {
            text: { type: 'string', minLength: 1, maxLength: 20_000 },
            workspace: { type: 'string', minLength: 1, maxLength: 4096, description: 'Absolute path' },
            max_steps: { type: 'integer', minimum: 1, maximum: 1000 },
          },
        },
        response: { 201: taskSchema, ...errorResponses(400, 404, 503) },
      },
    },
    async (request, reply) => {
      const body = request.body as { text: string; workspace: string; max_steps?: number };
      const t = service(deps).start({
        text: body.text,
        workspace: body.workspace,
        by: principalOf(request),
        ...(body.max_steps !== undefined ? { max_steps: body.max_steps } : {}),
      });
      reply.code(201);
      return brief(t);
    },
  );

  app.get(
    '/v1/tasks',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['tasks'],
        summary: 'Tasks, newest first: unfinished ones, or all with ?all=true',
        querystring: { type: 'object', additionalProperties: false, properties: { all: { type: 'boolean' } } },
        response: {
          200: { type: 'object', required: ['tasks'], properties: { tasks: { type: 'array', items: taskSchema } } },
          ...errorResponses(400),
        },
      },
    },
    async (request) => {
      const { all } = request.query as { all?: boolean };
      if (!deps.tasks) return { tasks: [] };
      return { tasks: deps.tasks.list(principalOf(request), all === true).map(brief) };
    },
  );

  app.get(
    '/v1/tasks/:id',
    {
      config: { roles: ACCESS.viewer },
      schema: {
        tags: ['tasks'],
        summary: 'One task with its steps, plan, usage and question',
        params: idParams,
        response: { 200: taskSchema, ...errorResponses(404) },
      },
    },
    async (request) => service(deps).get((request.params as { id: string }).id, principalOf(request)),
  );

  app.post(
    '/v1/tasks/:id/abort',
    {
      config: { roles: ACCESS.operator },
      schema: {
        tags: ['tasks'],
        summary: 'Abort: the first call stops after the current step, a second one at once',
        params: idParams,
        response: {
          200: {
            type: 'object',
            required: ['phase', 'task'],
            properties: { phase: { type: 'string', enum: ['graceful', 'immediate', 'stopped'] }, task: taskSchema },
          },
          ...errorResponses(404, 409),
        },
      },
    },
    async (request) => {
      const r = service(deps).abort((request.params as { id: string }).id, principalOf(request));
      return { phase: r.phase, task: brief(r.task) };
    },
  );

  app.post(
    '/v1/tasks/:id/resume',
    {
      config: { roles: ACCESS.operator },
      schema: {
        tags: ['tasks'],
        summary: 'Resume a PAUSED, ERROR_PAUSED or INTERRUPTED task from its last checkpoint',
        params: idParams,
        response: { 200: taskSchema, ...errorResponses(404, 409) },
      },
    },
    async (request) => brief(await service(deps).resume((request.params as { id: string }).id, principalOf(request))),
  );

  app.post(
    '/v1/tasks/:id/answer',
    {
      config: { roles: ACCESS.operator },
      schema: {
        tags: ['tasks'],
        summary:
          "Answer the task's question: confirm (completion / re-run), continue (with a message for the model), skip, stop",
        params: idParams,
        body: {
          type: 'object',
          required: ['decision'],
          additionalProperties: false,
          properties: {
            decision: { type: 'string', enum: ['confirm', 'continue', 'skip', 'stop'] },
            message: { type: 'string', maxLength: 4000 },
          },
        },
        response: { 200: taskSchema, ...errorResponses(400, 404, 409) },
      },
    },
    async (request) => {
      const body = request.body as { decision: 'confirm' | 'continue' | 'skip' | 'stop'; message?: string };
      return brief(service(deps).answer((request.params as { id: string }).id, principalOf(request), body));
    },
  );
}
