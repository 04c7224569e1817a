import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.js';
import { decide } from '../../policy/gate.js';
import { toPersonaJson } from '../../policy/personas.js';
import { errors, listOf, nameParam, ref } from '../schemas.js';

export async function personasRoutes(app: FastifyInstance): Promise<void> {
  const { personas, registry } = app.ongrid;

  app.get(
    '/v1/personas',
    { schema: { tags: ['personas'], summary: 'List personas, sorted by name', response: { 200: listOf('Persona'), ...errors(401) } } },
    async () => {
      const items = personas.list().map(toPersonaJson);
      return { items, total: items.length };
    },
  );

  app.get<{ Params: { name: string } }>(
    '/v1/personas/:name',
    {
      schema: {
        tags: ['personas'],
        summary: 'One persona and, for every skill, whether it runs, needs approval or is forbidden',
        params: nameParam,
        response: { 200: ref('Persona'), ...errors(401, 404) },
      },
    },
    async (req) => {
      const p = personas.get(req.params.name);
      if (!p) throw new ApiError('persona_not_found', `no persona named "${req.params.name}"`);
      const skills = registry.list().map((s) => {
        const g = decide(p, s);
        return { name: s.name, access: g.access, approvals_required: g.approvals_required };
      });
      return { ...toPersonaJson(p), skills };
    },
  );
}
