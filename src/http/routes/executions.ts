import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from '../errors.js';
import { presentExecution } from '../present.js';
import { errors, idParam, listOf, nameParam, ref } from '../schemas.js';
import { sseStreams, streamEvents } from '../sse.js';
import type { ExecutionRecord, ExecutionStatus } from '../../execution/types.js';

const IDEMPOTENCY_KEY_MAX = 200;

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * 200 once ended, 202 while pending, queued or running (with Location). A fresh `wait: false`
 * is never ended yet; an idempotent replay answers for the state it finds (CONTRACT section 12).
 */
function sendExecution(reply: FastifyReply, rec: ExecutionRecord) {
  const ended = !['pending_approval', 'queued', 'running'].includes(rec.status);
  if (!ended) {
    reply.code(202).header('location', `/v1/executions/${rec.id}`);
  }
  return presentExecution(rec);
}

export async function executionsRoutes(app: FastifyInstance): Promise<void> {
  const { executor, store } = app.ongrid;
  const streams = sseStreams(app);

  app.post<{ Params: { name: string }; Body: { args?: Record<string, unknown>; wait?: boolean } | undefined }>(
    '/v1/skills/:name/execute',
    {
      schema: {
        tags: ['skills'],
        summary: 'Execute a skill (validated, gated, recorded)',
        description:
          'Checks run in this order: auth (401), persona (400 unknown_persona), skill (404), available (409), ' +
          'persona may call it (403), args (400 invalid_args). Headers: X-Ongrid-Persona, Idempotency-Key (<= 200 chars).',
        params: nameParam,
        headers: {
          type: 'object',
          properties: {
            'x-ongrid-persona': { type: 'string' },
            'idempotency-key': { type: 'string' },
          },
        },
        body: {
          type: ['object', 'null'],
          properties: {
            args: { type: 'object', additionalProperties: true, description: 'Arguments, validated against the skill schema' },
            wait: { type: 'boolean', default: true, description: 'true: answer when it ends; false: answer 202 at once' },
          },
        },
        response: {
          200: ref('Execution'),
          202: ref('Execution'),
          ...errors(400, 401, 403, 404, 409, 413, 429, 503),
        },
      },
    },
    async (req, reply) => {
      const key = header(req.headers['idempotency-key']);
      if (key !== undefined && (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX)) {
        throw new ApiError('invalid_request', `Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX} characters`);
      }
      const wait = req.body?.wait ?? true;
      const { record } = await executor.submit({
        skill: req.params.name,
        args: req.body?.args ?? {},
        persona: header(req.headers['x-ongrid-persona']),
        subject: req.subject,
        wait,
        ...(key !== undefined ? { idempotencyKey: key } : {}),
      });
      return sendExecution(reply, record);
    },
  );

  app.get<{ Querystring: { skill?: string; status?: ExecutionStatus; limit?: string; offset?: string } }>(
    '/v1/executions',
    {
      schema: {
        tags: ['executions'],
        summary: 'List executions, newest first',
        querystring: {
          type: 'object',
          properties: {
            skill: { type: 'string' },
            status: {
              type: 'string',
              enum: ['pending_approval', 'queued', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled', 'rejected', 'expired', 'interrupted'],
            },
            limit: { type: 'string', pattern: '^[0-9]{1,6}$', description: 'default 50, at most 500' },
            offset: { type: 'string', pattern: '^[0-9]{1,9}$', description: 'default 0' },
          },
        },
        response: { 200: listOf('Execution'), ...errors(400, 401) },
      },
    },
    async (req) => {
      const limit = req.query.limit === undefined ? 50 : Number(req.query.limit);
      if (limit < 1 || limit > 500) throw new ApiError('invalid_request', 'limit must be between 1 and 500');
      const { items, total } = await store.list({
        ...(req.query.skill !== undefined ? { skill: req.query.skill } : {}),
        ...(req.query.status !== undefined ? { status: req.query.status } : {}),
        limit,
        offset: req.query.offset === undefined ? 0 : Number(req.query.offset),
      });
      return { items: items.map(presentExecution), total };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/executions/:id',
    {
      schema: {
        tags: ['executions'],
        summary: 'One execution: args, persona, requester, approvals, definition hash, result',
        params: idParam,
        response: { 200: ref('Execution'), ...errors(401, 404) },
      },
    },
    async (req) => presentExecution(await executor.get(req.params.id)),
  );

  app.get<{ Params: { id: string } }>(
    '/v1/executions/:id/events',
    {
      schema: {
        tags: ['executions'],
        summary: 'The execution timeline; with Accept: text/event-stream, past then live events (SSE)',
        params: idParam,
        headers: { type: 'object', properties: { 'last-event-id': { type: 'string' } } },
        response: {
          200: {
            description: 'JSON list, or an SSE stream (id: seq, event: type, data: Event) that ends after the final event',
            type: 'object',
            required: ['items'],
            properties: { items: { type: 'array', items: ref('Event') }, total: { type: 'integer' } },
          },
          ...errors(401, 404),
        },
      },
    },
    async (req, reply) => {
      const rec = await executor.get(req.params.id);
      if ((req.headers.accept ?? '').includes('text/event-stream')) {
        const last = Number.parseInt(header(req.headers['last-event-id']) ?? '0', 10);
        return streamEvents(app.ongrid, req, reply, rec, Number.isFinite(last) && last > 0 ? last : 0, streams);
      }
      const items = await store.events(rec.id);
      return { items, total: items.length };
    },
  );

  const actionSchema = (summary: string, body?: object) => ({
    tags: ['executions'],
    summary,
    params: idParam,
    ...(body ? { body } : {}),
    response: { 200: ref('Execution'), ...errors(401, 403, 404, 409) },
  });

  app.post<{ Params: { id: string } }>(
    '/v1/executions/:id/cancel',
    { schema: actionSchema('Cancel: a pending or queued one ends at once; a running one is killed (process group)') },
    async (req) => presentExecution(await executor.cancel(req.params.id)),
  );

  app.post<{ Params: { id: string } }>(
    '/v1/executions/:id/approve',
    { schema: actionSchema('Approve as the authenticated subject (never the requester, once each)') },
    async (req) => presentExecution(await executor.approve(req.params.id, req.subject)),
  );

  app.post<{ Params: { id: string }; Body: { reason?: string } | undefined }>(
    '/v1/executions/:id/reject',
    {
      schema: actionSchema('Reject as the authenticated subject', {
        type: ['object', 'null'],
        properties: { reason: { type: 'string', maxLength: 2000 } },
      }),
    },
    async (req) => presentExecution(await executor.reject(req.params.id, req.subject, req.body?.reason)),
  );
}
