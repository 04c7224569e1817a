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

/** Routes anyone may call, auth on or off (CONTRACT section 12); every other route needs a token. */
const PUBLIC_ROUTES = new Set(['/healthz', '/readyz', '/metrics', '/openapi.json']);

function isPublicRoute(pattern: string): boolean {
  return PUBLIC_ROUTES.has(pattern) || pattern === '/docs' || pattern.startsWith('/docs/');
}

/** The path as the router sees it: no query, percent-decoded, origin dropped from an absolute-form target. */
function routedPath(url: string): string {
  let p: string;
  try {
    p = new URL(url, 'http://localhost').pathname;
  } catch {
    p = url.split('?')[0] ?? '';
  }
  try {
    return decodeURIComponent(p);
  } catch {
    return p;
  }
}

/**
 * Pure: does this request need a token when auth is on? Decided by the route the router
 * matched, not by the raw URL, which can spell the same route differently (`/%761/skills`,
 * `http://host/v1/skills`). Unmatched URLs need one under /v1 and /mcp, so probing for routes
 * there learns nothing; elsewhere they fall through to 404.
 */
export function needsToken(routePattern: string | undefined, url: string): boolean {
  if (routePattern !== undefined) return !isPublicRoute(routePattern);
  const p = routedPath(url);
  return p === '/v1' || p.startsWith('/v1/') || p === '/mcp' || p.startsWith('/mcp/');
}

/**
 * Authentication runs first (onRequest, before the body is read), so an unauthenticated
 * caller learns nothing about personas, skills or body shape.
 */
export function installAuth(app: FastifyInstance, verifier: TokenVerifier | undefined): void {
  app.decorateRequest('subject', '');
  app.addHook('onRequest', async (req: FastifyRequest) => {
    if (verifier) {
      if (!needsToken(req.routeOptions.url, req.url)) return;
      const subject = verifier.verify(req.headers.authorization);
      if (subject === undefined) {
        throw new ApiError('unauthorized', 'missing or invalid bearer token', undefined, { 'www-authenticate': 'Bearer' });
      }
      req.subject = subject;
      return;
    }
    const h = req.headers['x-ongrid-subject'];
    const v = (Array.isArray(h) ? h[0] : h)?.trim();
    req.subject = v ? v.slice(0, SUBJECT_MAX) : 'anonymous';
  });
}
