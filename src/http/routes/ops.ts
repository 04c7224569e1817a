import type { FastifyInstance } from 'fastify';
import { errorBody } from '../errors.js';

const statusSchema = {
  type: 'object',
  properties: { status: { type: 'string' }, reason: { type: 'string' } },
} as const;

export async function opsRoutes(app: FastifyInstance): Promise<void> {
  const { state } = app.ongrid;

  app.get('/healthz', { schema: { tags: ['ops'], summary: 'The process is up', security: [], response: { 200: statusSchema } } }, async () => ({
    status: 'ok',
  }));

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['ops'],
        summary: 'Initial skill load done and database open',
        security: [],
        response: { 200: statusSchema, 503: { $ref: 'Error#' } },
      },
    },
    async (_req, reply) => {
      if (state.shuttingDown) return reply.code(503).send(errorBody('shutting_down', 'the service is shutting down'));
      if (!state.ready) return reply.code(503).send(errorBody('not_ready', 'initial skill load not finished'));
      return { status: 'ready' };
    },
  );
}
