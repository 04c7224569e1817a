// PLACEHOLDER written by the lead so the app runs while the owner writes the real module; the owner overwrites this file.
import type { FastifyInstance } from 'fastify';
export async function toolsRoutes(_app: FastifyInstance): Promise<void> {}
