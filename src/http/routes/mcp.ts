/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP, stateless. Every POST gets a fresh
 * server and transport bound to the caller's persona and subject; GET (server-initiated
 * stream) and DELETE (session end) have nothing to serve without sessions: 405.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpServer } from '../../mcp/server.js';
import { errorBody } from '../errors.js';
import { errors } from '../schemas.js';

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

const DESCRIPTION =
  'JSON-RPC 2.0 messages of the Model Context Protocol (initialize, tools/list, tools/call); send ' +
  '`Accept: application/json, text/event-stream`. Stateless: no Mcp-Session-Id. tools/list answers what ' +
  'GET /v1/tools?format=mcp answers for the persona (X-Ongrid-Persona, else the default); tools/call runs ' +
  'the skill through the executor (same validation, gating and execution record as REST).';

export async function mcpRoutes(app: FastifyInstance): Promise<void> {
  const { registry, executor, logger } = app.ongrid;

  app.post(
    '/mcp',
    {
      schema: {
        tags: ['llm'],
        summary: 'Model Context Protocol endpoint (Streamable HTTP, stateless)',
        description: DESCRIPTION,
        headers: { type: 'object', properties: { 'x-ongrid-persona': { type: 'string' } } },
        body: { description: 'A JSON-RPC 2.0 message' },
        response: {
          200: { description: 'JSON-RPC response (application/json)', type: 'object', additionalProperties: true },
          202: { description: 'Notification or response accepted', type: 'null' },
          ...errors(400, 401, 413),
        },
      },
    },
    async (req, reply) => {
      // Like REST: an unknown persona is a 400 before anything else happens.
      const persona = executor.persona(header(req.headers['x-ongrid-persona']));
      const server = createMcpServer({ registry, executor, persona, subject: req.subject, logger: req.log });
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      // Malformed JSON-RPC, a wrong Accept header...: the client's fault, answered by the transport.
      transport.onerror = (err) => req.log.debug({ err: err.message }, 'mcp transport rejected a message');
      reply.hijack();
      reply.raw.on('close', () => {
        void transport.close().catch(() => undefined);
        void server.close().catch(() => undefined);
      });
      try {
        await server.connect(transport);
        await transport.handleRequest(req.raw, reply.raw, req.body);
      } catch (err) {
        logger.error({ err }, 'mcp request failed inside the service');
        if (!reply.raw.headersSent) {
          reply.raw.writeHead(500, { 'content-type': 'application/json' });
          reply.raw.end(JSON.stringify(errorBody('internal_error', 'internal error')));
        }
      }
    },
  );

  const notAllowed = async (_req: unknown, reply: FastifyReply) =>
    reply
      .code(405)
      .header('allow', 'POST')
      .send(errorBody('method_not_allowed', 'this MCP endpoint is stateless: send JSON-RPC messages with POST'));
  const schema405 = (summary: string) => ({
    schema: { tags: ['llm'], summary, response: { 405: { $ref: 'Error#' }, ...errors(401) } },
  });
  app.get('/mcp', schema405('Not supported: no server-initiated stream in stateless mode (405)'), notAllowed);
  app.delete('/mcp', schema405('Not supported: no sessions to end in stateless mode (405)'), notAllowed);
}
