import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors.js';

export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Every body is JSON, whatever the Content-Type says (curl -d sends form encoding by default):
 * an empty body means "no body" (all fields of execute are optional), malformed JSON is
 * `400 invalid_json`. Prototype poisoning is refused by fastify's own secure parser.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  const secureParse = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    secureParse(req, text, (err, value) => {
      if (err) return done(new ApiError('invalid_json', `request body is not valid JSON: ${err.message}`), undefined);
      done(null, value);
    });
  });
}
