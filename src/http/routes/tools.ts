import type { FastifyInstance } from 'fastify';
import { DEFAULT_TOOL_FORMAT, TOOL_FORMATS, toolDefinitions, type ToolFormat } from '../../llm/tool-definitions.js';
import { errors } from '../schemas.js';

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

export async function toolsRoutes(app: FastifyInstance): Promise<void> {
  const { registry, executor } = app.ongrid;

  app.get<{ Querystring: { format?: ToolFormat } }>(
    '/v1/tools',
    {
      schema: {
        tags: ['llm'],
        summary: "The calling persona's callable skills as LLM tool definitions, sorted by name",
        description:
          'Only available skills the persona (X-Ongrid-Persona, else the default) may call are listed; ' +
          'ones that need approval are included (a call parks for a human). Shapes: openai ' +
          '{type:"function", function:{name, description, parameters}}, anthropic {name, description, input_schema}, ' +
          'mcp {name, description, inputSchema, annotations:{readOnlyHint, destructiveHint}}.',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: { format: { type: 'string', enum: [...TOOL_FORMATS], default: DEFAULT_TOOL_FORMAT } },
        },
        headers: { type: 'object', properties: { 'x-ongrid-persona': { type: 'string' } } },
        response: {
          200: {
            type: 'object',
            required: ['format', 'tools'],
            properties: {
              format: { type: 'string', enum: [...TOOL_FORMATS] },
              tools: { type: 'array', items: { type: 'object', additionalProperties: true } },
            },
          },
          ...errors(400, 401),
        },
      },
    },
    async (req) => {
      const persona = executor.persona(header(req.headers['x-ongrid-persona']));
      const format = req.query.format ?? DEFAULT_TOOL_FORMAT;
      return { format, tools: toolDefinitions(registry.list(), persona, format) };
    },
  );
}
