import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../../ops/metrics.js';

/** GET /metrics in Prometheus text format. Outside /v1, so scrapers need no token. */
export async function metricsRoutes(app: FastifyInstance, opts: { metrics: Metrics }): Promise<void> {
  const { registry } = opts.metrics;
  app.get(
    '/metrics',
    {
      schema: {
        tags: ['ops'],
        summary: 'Prometheus metrics',
        security: [],
        description:
          'Executions by skill and status, execution duration histogram, registered skills by source, ' +
          'queue depth, running executions, loader errors, and Node.js process metrics.',
        response: {
          200: {
            description: 'Prometheus text exposition format',
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
        },
      },
    },
    async (_req, reply) => {
      const body = await registry.metrics();
      return reply.type(registry.contentType).send(body);
    },
  );
}
