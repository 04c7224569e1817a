import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TokenVerifier } from '../policy/auth.js';
import { ApiError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling: the token's subject, or X-Ongrid-Subject when auth is off. */
    subject: string;
  }
}

const SUBJECT_MAX = 200;

/** Paths that need a token when auth is on (CONTRACT section 12): /v1/* and /mcp. */
function isProtected(url: string): boolean {
  const path = url.split('?')[0] ?? '';
  return path.startsWith('/v1/') || path === '/v1' || path === '/mcp' || path.startsWith('/mcp/');
}

/**
 * Authentication runs first (onRequest, before the body is read), so an unauthenticated
 * caller learns nothing about personas, skills or body shape.
 */
export function installAuth(app: FastifyInstance, verifier: TokenVerifier | undefined): void {
  app.decorateRequest('subject', '');
  app.addHook('onRequest', async (req: FastifyRequest) => {
    if (verifier) {
      if (!isProtected(req.url)) return;
      const subject = verifier.verify(req.headers.authorization);
      if (subject === undefined) throw new ApiError('unauthorized', 'missing or invalid bearer token');
      req.subject = subject;
      return;
    }
    const h = req.headers['x-ongrid-subject'];
    const v = (Array.isArray(h) ? h[0] : h)?.trim();
    req.subject = v ? v.slice(0, SUBJECT_MAX) : 'anonymous';
  });
}
