import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';

export const OPENAPI_INFO = {
  title: 'ongrid-skills',
  description:
    'Turns scripts on disk into safe, audited tools for people and LLM agents. ' +
    'Every error answers {"error": {"code", "message", "details"?}}.',
  version: '0.1.0',
};

/** OpenAPI generated from the route schemas; served at /openapi.json and browsable at /docs. */
export async function installSwagger(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: OPENAPI_INFO,
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'Required on /v1 and /mcp when ONGRID_API_TOKENS_FILE is set' },
        },
      },
      security: [{ bearer: [] }],
      tags: [
        { name: 'skills', description: 'Catalog and execution of skills' },
        { name: 'executions', description: 'Execution records, events and approvals' },
        { name: 'personas', description: 'Who may call what' },
        { name: 'llm', description: 'Tool definitions for LLMs' },
        { name: 'ops', description: 'Health, readiness, metrics' },
      ],
    },
    refResolver: {
      buildLocalReference(json, _baseUri, _fragment, i) {
        return typeof json.$id === 'string' ? json.$id : `def-${i}`;
      },
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
