import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';
import { presentSkill } from '../present.js';
import { errors, listOf, nameParam, ref } from '../schemas.js';

export async function skillsRoutes(app: FastifyInstance): Promise<void> {
  const { registry } = app.ongrid;

  app.get<{ Querystring: { category?: string; class?: string; source?: string } }>(
    '/v1/skills',
    {
      schema: {
        tags: ['skills'],
        summary: 'List registered skills, sorted by name',
        querystring: {
          type: 'object',
          additionalProperties: false,
          properties: {
            category: { type: 'string' },
            class: { type: 'string', enum: ['safe', 'mutating', 'dangerous'] },
            source: { type: 'string', enum: ['external', 'native'] },
          },
        },
        response: { 200: listOf('Skill'), ...errors(400, 401) },
      },
    },
    async (req) => {
      const { category, class: cls, source } = req.query;
      const items = registry
        .list()
        .filter(
          (s) =>
            (category === undefined || s.category === category) &&
            (cls === undefined || s.class === cls) &&
            (source === undefined || s.source === source),
        )
        .map(presentSkill);
      return { items, total: items.length };
    },
  );

  app.get<{ Params: { name: string } }>(
    '/v1/skills/:name',
    {
      schema: {
        tags: ['skills'],
        summary: 'Describe one skill',
        params: nameParam,
        response: { 200: ref('Skill'), ...errors(401, 404) },
      },
    },
    async (req) => {
      const skill = registry.get(req.params.name);
      if (!skill) throw new ApiError('skill_not_found', `no skill named "${req.params.name}"`);
      return presentSkill(skill);
    },
  );
}
